"""The normaliser peels a raw line once and reuses what that gave when the line comes again (a
traceback echoed by rank after rank). Whatever state changed in between (a prefix family learned,
a header that taught a stream, torchrun's spacing, a container record split in pieces), each line
must come out as a normaliser that never reuses anything makes it.
"""

from __future__ import annotations

from pathlib import Path

from analyzer.core.normalize import LineNormalizer, PeelMemo
from analyzer.engine import Engine
from tests import logformats as fmt
from tests.realtb import capture, text_of
from tests.support import PURE_ONLY


class _Forgetful(LineNormalizer):
    """Peels every line afresh."""

    def _remember_peeled(self, raw, peeled) -> None:
        pass


class _Counting(LineNormalizer):
    def __init__(self, file: str) -> None:
        super().__init__(file)
        self.remembered = 0

    def _remember_peeled(self, raw, peeled) -> None:
        self.remembered += 1
        super()._remember_peeled(raw, peeled)


def _load_weights() -> None:
    params = {"model.embed_tokens.weight": 0}
    try:
        params["model.layers.61.mlp.experts.w2_weight_scale"]
    except KeyError as err:
        raise RuntimeError("Failed to load weights: unexpected parameter") from err


def _traceback_lines() -> list[str]:
    return text_of(capture(_load_weights)).splitlines()


def _normalized(normalizer: LineNormalizer, raws: list[str]) -> list:
    lines = [line for number, raw in enumerate(raws, 1) for line in normalizer.normalize(raw + "\n", number)]
    return lines + normalizer.finish()


@PURE_ONLY
def test_repeated_lines_come_out_as_if_read_afresh_whatever_came_between() -> None:
    tb = _traceback_lines()
    header, body = tb[0], tb[1:]
    split = "2026-11-28T03:12:40.123456000Z stderr"
    log = [
        *tb,  # plain, before any family is learned
        "engine   | INFO starting",  # a prefix not known yet ...
        *fmt.sglang_record("Scheduler hit an exception: ", tb),
        *fmt.compose(tb, "engine", 8),  # ... learned here: the same line below loses it
        "engine   | INFO starting",
        *tb,
        *(f"[rank0]: {line}" for line in tb),  # whose the space after `[rank0]:` is, is state: the
        *fmt.torchrun_tee(tb, 0, "rank"),  # header here tells it is not the prefix's, so the same
        *(f"[rank0]: {line}" for line in body),  # frames now keep it
        *fmt.torchrun_tee(tb, 1),
        f"{split} F end",  # a container's full record alone, then after a partial one
        f"{split} P start, ",
        f"{split} F end",
        *fmt.cri(tb),
        *fmt.vllm_worker(tb, pid=7),
        f"(VllmWorker rank=1 pid=9) weird | {header}",  # a header whose prefix is learned, then
        *body,  # frames without it: they stay in its stream (tentative)
        *tb,
        *fmt.ray_dedup(tb),
        *fmt.sglang_each_line(tb),
        *tb,
    ]
    counting = _Counting("t.log")
    assert _normalized(counting, log) == _normalized(_Forgetful("t.log"), log)
    assert counting.remembered  # the memo was in play


@PURE_ONLY
def test_a_line_with_a_time_is_not_remembered() -> None:
    counting = _Counting("t.log")
    _normalized(counting, fmt.sglang_each_line(_traceback_lines()))
    assert counting.remembered == 0


@PURE_ONLY
def test_torchrun_lines_are_remembered_with_their_prefixes_spacing() -> None:
    """Each rank's traceback lines come again in the next echo: remembered, with whose the space after the
    prefix was when they were peeled (the equality above holds them to it)."""
    counting = _Counting("t.log")
    lines = _traceback_lines()
    _normalized(counting, [f"[rank0]: {line}" for line in lines])
    assert counting.remembered >= sum(line.startswith("  ") for line in lines) > 0  # (the stack's lines at least)


def _apart_and_together(inputs: list[list[str]]) -> tuple[list, list, PeelMemo]:
    """Each input read by a normaliser that reuses nothing, and all read in turn by normalisers that share what they
    peeled (an engine's, reading a fleet's files)."""
    shared = PeelMemo()
    apart = [_normalized(_Forgetful(f"{k}.log"), lines) for k, lines in enumerate(inputs)]
    together = [_normalized(LineNormalizer(f"{k}.log", shared), lines) for k, lines in enumerate(inputs)]
    return apart, together, shared


@PURE_ONLY
def test_lines_another_input_peeled_come_out_as_if_read_afresh() -> None:
    """What one input peeled is taken by the next only where its peeling read nothing but the line: not a source
    line whose frame above it had no prefix (the input's second line: its prefix may be learned there), not a box's
    line (one under a boxed frame is that frame's source), not after the input learned a family of its own."""
    tb = _traceback_lines()
    source = "worker-3 |     raise ValueError(x)"
    frame = '  File "/a.py", line 3, in f'
    inputs = [
        ["engine   | INFO starting", "hello", source, *tb, "\u2502     x = f()", "   12 | Traceback (most recent call last):"],
        [frame, source, "ValueError: x", *tb],  # the same source line, now the second under a frame: a prefix
        ['\u2502 File "/a.py", line 1, in f', "\u2502     x = f()", *tb],  # the box's line, now under a boxed frame
        [*fmt.compose(tb, "engine", 8), "engine   | INFO starting", *tb],  # a family learned: its own peels only
        [*tb, "hello", source],
    ]
    for order in (inputs, inputs[::-1]):
        apart, together, shared = _apart_and_together(order)
        assert together == apart
        assert len(shared)  # (in play: the traceback's lines)
    assert source + "\n" in shared and "\u2502     x = f()\n" not in shared


def test_an_engine_reading_many_files_finds_in_each_what_a_fresh_one_finds() -> None:
    logs = sorted(str(path) for path in (Path(__file__).resolve().parent.parent / "fixtures" / "logs").iterdir())

    def events(engine: Engine, log: str) -> list[str]:
        return [repr(event) for event in engine.events([log], lambda problem: None)]

    fresh = [events(Engine(), log) for log in logs]
    engine = Engine()
    assert [events(engine, log) for log in logs] == fresh
    assert [events(engine, log) for log in reversed(logs)] == fresh[::-1]
