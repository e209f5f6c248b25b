"""Memory and time that do not grow with repetition or with the number of ranks (issue 16): a
bounded sample of occurrences with exact counts, thousands of ranks interleaved line by line, the
budget shedding state without losing an error, stacks and messages longer than their limits."""

from __future__ import annotations

import json
import sys

import pytest

from analyzer.cli import main
from analyzer.core.assemble import TracebackAssembler
from analyzer.core.matcher import Matcher
from analyzer.core.records import LogLine
from analyzer.core.scan import Analysis, events_from_lines
from tests.realtb import capture, text_of
from tests.support import NO_NOTICES


def _missing_shard():
    def read_index(number):
        raise ValueError(f"shard {number} is missing from /ckpt/model-{number:05d}.safetensors")

    def load_weights(number):
        read_index(number)

    load_weights(7)


SHARD = text_of(capture(_missing_shard)).splitlines()


def _interleaved(ranks: int) -> list[str]:
    """Every rank prints the same traceback at once: line 1 of each rank, then line 2, ..."""
    return [f"[rank{rank}]: {line}" for line in SHARD for rank in range(ranks)]


def _one_after_another(ranks: int) -> list[str]:
    return [f"[rank{rank}]: {line}" for rank in range(ranks) for line in SHARD]


def _scan(lines: list[str], file: str = "ranks.log") -> list:
    analysis = Analysis(Matcher([]))
    for event in events_from_lines(lines, file, NO_NOTICES):
        analysis.add(event)
    return analysis.incidents()


@pytest.mark.parametrize(("ranks", "arrange"), [(2000, _interleaved), pytest.param(5000, _interleaved, marks=pytest.mark.slow),
                                                (3000, _one_after_another)])  # (the largest in the slow run)
def test_thousands_of_ranks_one_incident_with_every_rank_and_no_phantom(ranks, arrange):
    (incident,) = _scan(arrange(ranks))
    assert (incident.info.exception_type, incident.count) == ("ValueError", ranks)
    assert incident.ranks == tuple(f"rank{rank}" for rank in range(ranks))
    assert set(dict(incident.count_by_rank).values()) == {1}
    assert dict(incident.count_by_file) == {"ranks.log": ranks}
    assert not incident.event.truncated and incident.event.elided == 0
    assert incident.info.raise_site.function == "read_index"
    assert len(incident.occurrences) <= 17 < ranks and incident.occurrences_sampled


def _assemble(lines: list[str], max_held: int) -> tuple[list, TracebackAssembler]:
    """torchrun's `[rankN]: ` lines through an assembler with budget `max_held`."""
    assembler = TracebackAssembler(max_held=max_held)
    events = []
    for number, text in enumerate(lines, 1):
        prefix, body = text.split(": ", 1)
        rank = prefix.strip("[]")
        events += assembler.feed(LogLine(body, "ranks.log", number, stream=f"{rank}#", channel=rank, rank=rank))
    events += assembler.finish()
    return events, assembler


# Per rank printing at once: room for its whole traceback; for it once the middle of its stack is
# left out; for a parked one only (its header and first line, not its lines).
@pytest.mark.parametrize("per_rank", [1300, 900, 600])
def test_over_the_budget_every_interleaved_rank_is_one_record_with_its_exception_line(per_rank):
    """A budget too small for 3,000 tracebacks open at once (100,000 ranks against the default):
    the blocks idle longest lose the middle of their stacks, then are parked and carried on by
    their rank's next lines, the lines in between counted in `elided`. Every rank's traceback is
    one record with its header and exception line, none truncated, no fragment, one incident."""
    ranks = 3000
    events, assembler = _assemble(_interleaved(ranks), ranks * per_rank)
    assert assembler.pending == 0
    assert sorted(event.rank for event in events) == sorted(f"rank{rank}" for rank in range(ranks))
    assert {(event.final.exception_type, event.final.message) for event in events} == {
        ("ValueError", "shard 7 is missing from /ckpt/model-00007.safetensors")}
    assert not any(event.truncated for event in events)
    assert all(event.lines[0] == SHARD[0] and len(event.lines) + event.elided == len(SHARD) for event in events)
    assert all(event.final.raise_site is None or event.final.raise_site.function == "read_index" for event in events)
    shrunk = sum(bool(event.elided) for event in events)
    assert (shrunk == 0) if per_rank == 1300 else (shrunk > ranks // 4)
    if per_rank == 600:  # parked until their exception line: nothing of their stack left
        assert any(event.lines == (SHARD[0], SHARD[-1]) for event in events)
    analysis = Analysis(Matcher([]))
    for event in events:
        analysis.add(event)
    (incident,) = analysis.incidents()
    assert incident.count == ranks and set(dict(incident.count_by_rank).values()) == {1}


def test_a_parked_traceback_its_rank_never_finishes_is_reported_once_cut_off():
    """3,000 ranks print half their tracebacks at once, then the log ends (or a rank starts another
    traceback): each rank's cut record is reported once, `truncated`, never also as a fragment."""
    ranks, half = 3000, len(SHARD) // 2
    lines = [f"[rank{rank}]: {line}" for line in SHARD[:half] for rank in range(ranks)]
    lines += [f"[rank0]: {line}" for line in SHARD]
    events, _ = _assemble(lines, ranks * 600)
    cut = [event for event in events if event.truncated]
    assert sorted(event.rank for event in cut) == sorted(f"rank{rank}" for rank in range(ranks))
    assert all(event.lines[0] == SHARD[0] and not event.final.exception_type for event in cut)
    (whole,) = [event for event in events if not event.truncated]
    assert (whole.rank, whole.span.line_start, whole.final.exception_type) == ("rank0", ranks * half + 1, "ValueError")
    assert whole.lines[0] == SHARD[0] and len(whole.lines) + whole.elided == len(SHARD)


def test_a_repeated_traceback_is_counted_exactly_and_sampled(tmp_path, capsys):
    """The same error 4,000 times in two files: exact counts per file, a JSON line of a few KB."""
    block = ["INFO 12-01 10:00:00 [loader.py:12] loading", *SHARD]
    (tmp_path / "run").mkdir()
    first, second = tmp_path / "run" / "a.log", tmp_path / "run" / "b.log"
    first.write_text("\n".join(block * 3000) + "\n")
    second.write_text("\n".join(block * 1000) + "\n")
    assert main(["scan", "--format", "jsonl", str(tmp_path)]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    incident = json.loads(line)
    assert incident["count"] == 4000 and incident["occurrences_sampled"]
    assert incident["count_by_file"] == {str(first): 3000, str(second): 1000}
    assert incident["count_by_rank"] == {} and incident["elided"] == 0
    spans = [(o["file"], o["line_start"]) for o in incident["occurrences"]]
    last_start = 999 * len(block) + 2
    assert spans[0] == (str(first), 2) and (str(second), 2) in spans and spans[-1] == (str(second), last_start)
    assert len(spans) <= 17 and len(line) < 8000


def test_an_occurrence_that_grows_into_another_error_leaves_exact_counts():
    """A paused writer: rank2's error is shown as it stood (provisional), then its message goes on
    and it becomes another error. The counts and ranks of the incident it left drop with it."""
    analysis = Analysis(Matcher([]))
    lines = [*_one_after_another(3), None, "[rank2]: the index names 8 shards"]
    for event in events_from_lines(lines, "ranks.log", NO_NOTICES):
        analysis.add(event)
    first, moved = analysis.incidents()
    assert (first.count, first.ranks, first.count_by_rank) == (2, ("rank0", "rank1"), (("rank0", 1), ("rank1", 1)))
    assert (moved.count, moved.ranks, dict(moved.count_by_file)) == (1, ("rank2",), {"ranks.log": 1})
    assert moved.info.message.endswith("the index names 8 shards") and moved.occurrences == (moved.event.span,)


def _recurse(depth: int) -> None:
    _bounce(depth)


def _bounce(depth: int) -> None:
    if depth:
        _recurse(depth - 1)
    else:
        raise RecursionError("maximum recursion depth exceeded while calling a Python object")


def _deep_stack() -> str:
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(10000)
    try:
        return text_of(capture(lambda: _recurse(3000)))
    finally:
        sys.setrecursionlimit(old)


def test_a_stack_of_thousands_of_frames_is_one_incident_with_its_head_and_tail():
    """Two functions calling each other 3,000 times (no repeated line CPython could fold): ~12,000
    lines, past the 5,000-line block limit. One record: the first frames, the innermost ones, the
    exception line, and how many lines were left out."""
    lines = _deep_stack().splitlines()
    assert len(lines) > 10000
    (event,) = events_from_lines(lines, "deep.log", NO_NOTICES)
    assert event.final.exception_type == "RecursionError" and not event.truncated
    assert event.span.line_start == 1 and event.span.line_end == len(lines)
    assert event.elided == len(lines) - len(event.lines) > 9000
    frames = event.final.frames
    assert frames[0].function == "capture" and frames[1].function == "<lambda>"
    assert frames[-1].function == "_bounce" and frames[-1].code.startswith("raise RecursionError")


def test_a_message_of_thousands_of_lines_keeps_its_head_and_says_so():
    """A tensor's repr in a message: its first 200 continuation lines are kept, the rest counted in
    `elided`; a row that reads like an exception line starts no phantom."""
    rows = "\n".join(f"        [{row}.0000, {row}.5000]," for row in range(3000))
    rows = rows.replace("[2500.0000", "KeyError: 'not an error, a row'\n        [2500.0000")

    def compare():
        raise AssertionError(f"Tensors differ:\ntensor([\n{rows}\n])")

    lines = text_of(capture(compare)).splitlines()
    (event,) = events_from_lines([*lines, "", "INFO done"], "tensor.log", NO_NOTICES)
    message = event.final.message.splitlines()
    assert message[:3] == ["Tensors differ:", "tensor([", "        [0.0000, 0.5000],"] and len(message) == 201
    assert event.elided == len(lines) - len(event.lines) and event.span.line_end == len(lines)


def test_what_was_left_out_is_said_in_json_and_in_text(tmp_path, capsys):
    log = tmp_path / "deep.log"
    log.write_text(_deep_stack())
    assert main(["scan", "--format", "jsonl", str(log)]) == 0
    (incident,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert incident["exception_type"] == "RecursionError" and incident["elided"] > 9000
    assert not incident["truncated"]
    assert main(["scan", str(log)]) == 0
    assert f"{incident['elided']:,} line(s) of it left out" in capsys.readouterr().out


def test_ranks_that_share_a_channel_stay_apart_and_a_new_record_closes_what_it_ends():
    """Streams told apart by a logger's tags on one channel (SGLang's `TP0`, `TP1`, ... from one
    process), open at once: a new record on the channel ends that stream's own block and every
    complete one, and leaves a traceback still in its stack open."""
    assembler = TracebackAssembler()
    events, number = [], 0

    def feed(tag: str, text: str, starts_message: bool = False) -> None:
        nonlocal number
        number += 1
        events.extend(assembler.feed(LogLine(text, "tp.log", number, stream=f"#{tag}", rank=tag,
                                             starts_message=starts_message)))

    for line in SHARD:
        for tag in ("TP0", "TP1"):
            feed(tag, line)
    for line in SHARD[:3]:
        feed("TP2", line)
    assert assembler.pending == 3 and not events
    feed("TP1", "Decode batch. #running-req: 3", starts_message=True)
    assert sorted(event.rank for event in events) == ["TP0", "TP1"] and assembler.pending == 1
    for line in SHARD[3:]:
        feed("TP2", line)
    events += assembler.finish()
    assert [(event.rank, event.lines) for event in events[2:]] == [("TP2", tuple(SHARD))]
    assert not any(event.truncated for event in events)
