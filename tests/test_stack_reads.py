"""Reading a stretch of stack lines at once (`ChunkScanner` through `FileScanner.feed_stack`) is
only a shortcut: each of its three parts either does exactly what reading the lines one by one does,
state included, or refuses and changes nothing. Here each part is held to that on its own, on real
tracebacks among every shape of line, where limits bite too.
"""

from __future__ import annotations

import copy
import dataclasses
import random

import pytest

from analyzer.core.assemble import TracebackAssembler
from analyzer.core.normalize import LineNormalizer
from analyzer.core.runconfig import RunConfigCollector
from tests.test_fastpath import WRAPS, mixed_log

SEEDS = range(6)
QUICK_SEEDS = [*SEEDS[:3], *(pytest.param(seed, marks=pytest.mark.slow) for seed in SEEDS[3:])]  # (the quick suite's budget)


def _raw_lines(seed: int, wrap: str) -> list[str]:
    return mixed_log(seed, wrap).decode("utf-8", "replace").split("\n")


def _normalizer_state(normalizer: LineNormalizer) -> tuple:
    """What reading a line may change, copied."""
    n = normalizer
    return copy.deepcopy((n.learner.version, n._last_tags, n._last_rank, n._last_time, n._last_message, n._tentative,
                          n._header_context, n._adopted, n._torchrun_spaced, n._partial))


# (behind a prefix on every line, no line is plain)
@pytest.mark.parametrize("wrap, plain", [("none", True), ("ansi", True), ("crlf", True), ("vllm", True),
                                         ("compose", False), ("torchrun", False)])
@pytest.mark.parametrize("seed", QUICK_SEEDS)
def test_plain_lines_are_the_lines_read_one_by_one(seed, wrap, plain):
    raws = _raw_lines(seed, wrap)
    rng = random.Random(seed)
    shortcut, reader = LineNormalizer("t.log"), LineNormalizer("t.log")
    pos, taken = 0, 0
    while pos < len(raws):
        run = raws[pos:pos + rng.randrange(1, 6)]
        before = _normalizer_state(reader)
        found = shortcut.plain_lines(run, pos + 1)
        read = [line for number, raw in enumerate(run, pos + 1) for line in reader.normalize(raw, number)]
        if found is None:
            assert _normalizer_state(shortcut) == before, "refused, yet changed"
            for number, raw in enumerate(run, pos + 1):
                shortcut.normalize(raw, number)
        else:
            texts, first = found
            taken += 1
            assert read == [dataclasses.replace(first, text=text, lineno=first.lineno + i) for i, text in enumerate(texts)]
        assert _normalizer_state(shortcut) == _normalizer_state(reader)
        pos += len(run)
    assert bool(taken) == plain  # (the traceback lines repeat)


def test_a_stack_after_a_header_whose_prefix_was_learned_is_read_one_by_one_until_its_first_frame():
    """Its first frame decides where the channel's unprefixed lines go from then on (_learned_channel):
    before it every line is read on its own, after it the echoed stacks may go at once."""
    raws = ["Processed prompts:   0%|     | 0/8 [00:00<?, ?it/s]Traceback (most recent call last):",
            "    top()", '  File "/srv/x.py", line 3, in f', "    f()", "ValueError: bad", "hello"] * 3
    shortcut, reader = LineNormalizer("t.log"), LineNormalizer("t.log")
    number, taken = 1, []
    while number <= len(raws):
        run = raws[number - 1:number + 1]
        found = shortcut.plain_lines(run, number)
        if found is None:
            shortcut.normalize(run[0], number)
            reader.normalize(run[0], number)
            number += 1
            continue
        texts, first = found
        read = [line for at, raw in enumerate(run, number) for line in reader.normalize(raw, at)]
        assert read == [dataclasses.replace(first, text=text, lineno=first.lineno + i) for i, text in enumerate(texts)]
        taken.append(number)
        number += len(run)
    assert taken and min(taken) > 3  # none before the first frame is read
    assert _normalizer_state(shortcut) == _normalizer_state(reader)


FRAMES_ONLY = ['  File "/usr/lib/python3/site-packages/sglang/srt/x.py", line 3, in f', "    plain()",
               '  File "/opt/vllm-0.8.3/vllm/engine.py", line 9, in g', "    x == y", "(VllmWorker rank=1 pid=9) hi"]
SETTINGS = ["    pip install sglang[all]==0.4.6.post1", "    image lmsysorg/sglang:v0.4.6-cu124",
            "server_args=ServerArgs(tp_size=2, model_path='m')", "python3 -m sglang.launch_server --model-path m \\",
            "    --tp 4", "vllm serve m --tp 2", "INFO non-default args: {'model': 'n'}", ""]


@pytest.mark.parametrize("pool", [FRAMES_ONLY, FRAMES_ONLY + SETTINGS], ids=["frames", "settings"])
@pytest.mark.parametrize("seed", SEEDS)
def test_settings_are_left_alone_only_when_feeding_would_change_nothing(seed, pool):
    rng = random.Random(seed)
    collector, reader = RunConfigCollector(), RunConfigCollector()
    for _ in range(300):
        texts = [rng.choice(pool) for _ in range(rng.randrange(1, 4))]
        if collector.unchanged_by(texts):
            before = reader.config
            for text in texts:
                reader.feed(text)
            assert reader.config == before
        else:
            for text in texts:
                collector.feed(text)
                reader.feed(text)
        assert collector.config == reader.config


def _assembler_state(assembler: TracebackAssembler) -> tuple:
    return (assembler._open, assembler._held, assembler._texts.size, list(assembler._recent), list(assembler._shrunk),
            assembler._parked)


LIMITS = [{}, {"max_block_lines": 12}, {"max_held": 6000}, {"max_held": 12000}]


def _extend_against_feeding(seed: int, wrap: str, limits: dict) -> int:
    """Random runs of a log's lines given to `extend` and fed one by one: the same events and state
    after every run. Returns how many runs `extend` took."""
    assert wrap in WRAPS
    normalizer = LineNormalizer("t.log")
    lines = [line for number, raw in enumerate(_raw_lines(seed, wrap), 1) for line in normalizer.normalize(raw, number)]
    rng = random.Random(seed)
    shortcut, reader = TracebackAssembler(**limits), TracebackAssembler(**limits)
    got: list = []
    expected: list = []
    pos, taken = 0, 0
    while pos < len(lines):
        first = lines[pos]
        texts = [line.text for line in lines[pos:pos + rng.randrange(1, 8)]]
        run = [dataclasses.replace(first, text=text, lineno=first.lineno + i) for i, text in enumerate(texts)]
        for line in run:
            expected += reader.feed(line)
        if shortcut.extend(first, texts):
            taken += 1
        else:
            for line in run:
                got += shortcut.feed(line)
        assert got == expected
        assert _assembler_state(shortcut) == _assembler_state(reader)
        pos += len(texts)
    assert got + list(shortcut.finish()) == expected + list(reader.finish())
    return taken


@pytest.mark.parametrize("seeds", [SEEDS[:3], pytest.param(SEEDS[3:], marks=pytest.mark.slow)], ids=["quick", "more"])
@pytest.mark.parametrize("limits", LIMITS)
@pytest.mark.parametrize("wrap", ["none", "vllm", "heads_mixed"])
def test_extend_takes_lines_as_feeding_them_would_or_nothing(wrap, limits, seeds):
    # (whether a log gives `extend` a stack to take depends on its random shapes: over the seeds, some do)
    assert sum(_extend_against_feeding(seed, wrap, limits) for seed in seeds)
