"""Traceback assembly from real tracebacks: raised here, formatted by `traceback`, parsed back."""

from __future__ import annotations

import io
import sys
from contextlib import redirect_stdout

import pytest

from analyzer.core.records import EventKind, Link
from analyzer.core.scan import events_from_lines
from tests import logformats as fmt
from tests.realtb import actual_chain, capture, expected_chain, text_of
from tests.support import NO_NOTICES
from tests.test_fastpath import assert_same


def _value_error():
    raise ValueError("bad value 42")


def _chained_cause():
    try:
        {}["missing"]
    except KeyError as err:
        raise RuntimeError("could not load\nsecond line of the message") from err


def _chained_context():
    try:
        1 / 0  # noqa: B018 - raises
    except ZeroDivisionError:
        raise TypeError("while handling")  # noqa: B904 - the implicit context is what is tested


def _from_none():
    try:
        int("x")
    except ValueError:
        raise LookupError("hidden cause") from None


def _bare_assert():
    assert 1 == 2


def _recursion(n=0):
    return _recursion(n + 1)


def _syntax():
    compile("x = (\n", "<generated>", "exec")


def _interrupt():
    raise KeyboardInterrupt


def _with_note():
    err = ValueError("annotated")
    err.add_note("note: retry with --flag")
    raise err


def _group():
    def nested():
        raise ExceptionGroup("inner", [TypeError("t1"), OSError("disk")])

    try:
        nested()
    except ExceptionGroup as inner:
        raise ExceptionGroup("outer", [inner, ValueError("v"), KeyError("k")])  # noqa: B904 - as above


def _group_in_chain():
    try:
        _group()
    except ExceptionGroup as err:
        raise RuntimeError("group failed") from err


def _custom_module_type():
    class DistBackendError(RuntimeError):
        pass

    DistBackendError.__module__, DistBackendError.__qualname__ = "torch.distributed", "DistBackendError"
    raise DistBackendError("[Rank 1] Watchdog caught collective operation timeout")


def _caret_expression():
    values = {"a": [1, 2]}
    return values["a"][5] + values["a"][0]


CASES = [_value_error, _chained_cause, _chained_context, _from_none, _bare_assert, _recursion, _syntax,
         _interrupt, _with_note, _custom_module_type, _caret_expression, _group, _group_in_chain]


def _events(text: str, file: str = "t.log"):
    return list(events_from_lines(text.splitlines(), file, NO_NOTICES))


@pytest.mark.parametrize("func", CASES, ids=lambda f: f.__name__)
def test_round_trip_field_by_field(func):
    exc = capture(func)
    events = _events(text_of(exc))
    assert len(events) == 1
    assert actual_chain(events[0].chain) == expected_chain(exc)
    assert not events[0].truncated


def _task_group():
    def fetch():
        return {}["choices"]

    try:
        fetch()
    except KeyError as err:
        raise ExceptionGroup("unhandled errors in a TaskGroup", [err, ValueError("v")])  # noqa: B904 - as anyio's


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception groups print as such from 3.11")
@pytest.mark.parametrize("begun", [0, 1, 2], ids=("at the rule", "at the box's header", "at its first frame"))
def test_a_sub_exception_pasted_without_its_group_is_read_from_its_box(begun):
    """A paste of an exception group's first sub-exception only (a TaskGroup's: anyio, FastAPI), from its box's rule
    `+-+---- 1 ----`, its `| Traceback ...` or its first frame on: that error, its frames and its exception line read
    from the box (cut off above where the paste began at a frame)."""
    exc = capture(_task_group)
    lines = text_of(exc).rstrip("\n").split("\n")
    rule = next(k for k, line in enumerate(lines) if line.lstrip().startswith("+-+"))
    second = next(k for k, line in enumerate(lines) if " 2 --" in line)
    (event,) = _events("\n".join(["INFO request failed", *lines[rule + begun:second], "INFO next request"]))
    (expected,) = expected_chain(exc.exceptions[0])
    assert [(link.exception_type, link.message, [f[:3] for f in link.frames]) for link in actual_chain(event.chain)] == [
        (expected.exception_type, expected.message, [f[:3] for f in expected.frames])]
    assert event.truncated == (begun == 2)
    assert_same("\n".join(["INFO request failed", *lines[rule + begun:second], "INFO next request", ""]).encode())


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception groups print as such from 3.11")
def test_a_paste_begun_at_a_sub_exceptions_last_line_in_its_box_is_that_error():
    """A paste whose first line is the exception line of a group's last sub-exception in its box (`    | MemoryError:
    ...`), then the box's closing rule: that error. A table's row of bars is none."""
    exc = capture(_task_group)
    lines = text_of(exc).rstrip("\n").split("\n")
    closing = max(k for k, line in enumerate(lines) if line.lstrip().startswith("+--"))
    (event,) = assert_same("\n".join([*lines[closing - 1:], "INFO next request", ""]).encode())
    last = exc.exceptions[-1]
    assert (event.root.exception_type, event.root.message) == (type(last).__name__, str(last))
    assert assert_same("\n".join(["    | ValueError: 3 | 4 |", "    +----+", ""]).encode()) == []


def _read_body():
    raise ConnectionError("peer closed connection without sending complete message body (incomplete chunked read)")


def _stream():
    try:
        _read_body()
    except ConnectionError as err:
        raise RuntimeError("the response stream ended early") from err


def _stream_group():
    try:
        _stream()
    except RuntimeError as err:
        raise ExceptionGroup("unhandled errors in a TaskGroup", [err])  # noqa: B904 - as anyio's


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception groups print as such from 3.11")
@pytest.mark.parametrize("prefixed", [False, True])
def test_a_paste_begun_in_a_sub_exceptions_box_reads_its_first_error_behind_a_loggers_prefix(prefixed):
    """A paste begun at the last source line of a sub-exception's cause in its box (`    |     raise ...`), then its
    exception line: that error, whether or not a logger's prefix (FastChat's stderr records) is in front of every line
    (it is learned in front of the exception line, the group's margin between them)."""
    lines = text_of(capture(_stream_group)).rstrip("\n").split("\n")
    start = next(k for k, line in enumerate(lines) if "| ConnectionError: " in line) - 1
    pasted = fmt.fastchat_stderr(lines[start:]) if prefixed else lines[start:]
    first, *_ = assert_same("\n".join([*pasted, ""]).encode())
    assert (first.root.exception_type, first.root.message) == ("ConnectionError", str(capture(_read_body)))
    assert (first.span.line_start, first.span.line_end) == (2, 2)


def _nested_task_groups():
    raise ExceptionGroup("unhandled errors in a TaskGroup", [capture(_task_group)])  # (anyio's task group in a task group)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception groups print as such from 3.11")
@pytest.mark.parametrize("begun", [0, 1], ids=("at the box's header", "at its first frame"))
def test_a_group_pasted_without_the_group_it_is_in_keeps_its_own_sub_exceptions(begun):
    """A paste begun inside the box of a group nested in another (anyio's task group in a task group), at its `|
    Exception Group Traceback ...` or its first frame: that group, and under it the sub-exceptions of its own box."""
    exc = capture(_nested_task_groups)
    lines = text_of(exc).rstrip("\n").split("\n")
    inner = next(k for k, line in enumerate(lines) if line.lstrip().startswith("| Exception Group Traceback"))
    (event,) = _events("\n".join(["INFO request failed", *lines[inner + begun:], "INFO next request"]))
    (group,) = event.chain
    assert (group.exception_type, group.message) == ("ExceptionGroup", "unhandled errors in a TaskGroup (2 sub-exceptions)")
    expected = expected_chain(exc.exceptions[0])[-1]  # (the inner group's own, as printed in its box: no context)
    assert [[(link.exception_type, link.message, [f[:3] for f in link.frames]) for link in actual_chain(sub)]
            for sub in group.sub_exceptions] == [[(e.exception_type, e.message, [f[:3] for f in e.frames]) for e in sub]
                                                 for sub in expected.subs]
    assert_same("\n".join(["INFO request failed", *lines[inner + begun:], "INFO next request", ""]).encode())


def _groups_in_handling():
    try:
        _nested_task_groups()
    except ExceptionGroup:
        raise ExceptionGroup("unhandled errors in a TaskGroup", [RuntimeError("shutdown failed")])  # noqa: B904


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception groups print as such from 3.11")
def test_a_group_pasted_without_the_group_it_is_in_goes_on_with_the_chain_below_it():
    """The same paste begun inside a nested group's box, where handling that error raised another group (`During
    handling of the above exception ...`, then its box): one chain, the nested group with its sub-exceptions first
    and the group raised in handling it after (the box was read as the whole and the chain after it lost)."""
    exc = capture(_groups_in_handling)
    lines = text_of(exc).rstrip("\n").split("\n")
    inner = next(k for k, line in enumerate(lines) if line.lstrip().startswith("| Exception Group Traceback"))
    (event,) = _events("\n".join(lines[inner:]))
    assert [(link.exception_type, link.link) for link in event.chain] == [
        ("ExceptionGroup", Link.FIRST), ("ExceptionGroup", Link.CONTEXT)]
    first, handling = event.chain
    assert [[link.exception_type for link in sub] for sub in first.sub_exceptions] == [["KeyError"], ["ValueError"]]
    assert [[link.message for link in sub] for sub in handling.sub_exceptions] == [["shutdown failed"]]
    assert [e.chain for e in assert_same("\n".join([*lines[inner:], ""]).encode())] == [event.chain]


def test_another_writers_lines_between_a_frame_and_its_source_line_are_left_out():
    """stdout's lines in a capture of both streams (Coqui TTS's ` > Model's license ...`) between the innermost frame
    and its source line: the frame keeps its source, the error its frames. An exception line right under a frame
    without source, with an indented hint below it, stays the exception line."""
    exc = capture(_recursion)
    lines = text_of(exc).rstrip("\n").split("\n")
    last = max(k for k, line in enumerate(lines) if line.startswith('  File "'))
    told = [" > Model's license - CC BY-NC-ND 4.0", " > Check https://creativecommons.org/licenses/by-nc-nd/4.0/ for more info."]
    (event,) = _events("\n".join([*lines[:last + 1], *told, *lines[last + 1:]]))
    assert actual_chain(event.chain) == expected_chain(exc)
    bare = ["Traceback (most recent call last):", '  File "<frozen app>", line 5, in f', "RuntimeError: CUDA error: x",
            "    Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."]
    (event,) = _events("\n".join(bare))
    assert (event.root.exception_type, [f.function for f in event.root.frames]) == ("RuntimeError", ["f"])


def _ask_before_running_remote_code():
    with redirect_stdout(io.StringIO()):  # (input() writes its prompt there)
        return input("Do you wish to run the custom code? [y/N] ")


@pytest.mark.parametrize("prefixed", [False, True], ids=("plain", "container timestamps"))
def test_stdouts_lines_and_a_blank_between_a_frame_and_its_source_line_in_a_containers_log(prefixed, monkeypatch):
    """A container's log of both streams, each line behind the runtime's time (`kubectl logs --timestamps`): the
    prompt stdout showed (transformers asking to run a repository's code) and a blank come between the innermost frame
    and its source line, `input()` failing at the end of stdin. The traceback keeps its frames and its error."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    exc = capture(_ask_before_running_remote_code)
    lines = text_of(exc).rstrip("\n").split("\n")
    last = max(k for k, line in enumerate(lines) if line.startswith('  File "'))
    told = ["The repository for m contains custom code which must be executed to correctly load the model.",
            "You can avoid this prompt in future by passing the argument `trust_remote_code=True`.", ""]
    written = [*lines[:last + 1], *told, *lines[last + 1:]]
    (event,) = assert_same("\n".join([*(fmt.kubectl_timestamps(written) if prefixed else written), ""]).encode())
    assert actual_chain(event.chain) == expected_chain(exc)
    assert (event.root.exception_type, event.root.raise_site.function) == ("EOFError", "_ask_before_running_remote_code")


def test_recursion_keeps_repeated_marker_out_of_frames():
    text = text_of(capture(_recursion))
    assert "Previous line repeated" in text
    (event,) = _events(text)
    assert event.root.exception_type == "RecursionError"


PREFIXES = {
    "sglang": lambda i, line: (f"[2026-08-28 10:00:0{i % 10} TP3] " if i == 0 else "") + line,
    "sglang_dp": lambda i, line: ("[2026-08-28 10:00:01 DP1 TP3] " if i == 0 else "") + line,
    "torchrun": lambda i, line: f"[rank3]: {line}",
    "container": lambda i, line: f"2026-12-01T10:00:00.{i:09d}Z stderr F {line}",
    "container_sglang": lambda i, line: f"2026-12-01T10:00:00.{i:09d}Z stdout F "
                                        + ("[2026-12-01 10:00:00 TP0 EP0 PP1] " if i == 0 else "") + line,
    "vllm_worker": lambda i, line: f"(VllmWorker rank=1 pid=4321) {line}",
    "ray": lambda i, line: f"(pid=1234, ip=10.0.0.1) {line}",
    "journald": lambda i, line: f"Dec  1 10:00:00 gpu-node-7 python3[5555]: {line}",
    "logging_basic": lambda i, line: ("ERROR:root:" if i == 0 else "") + line,
    "logging_asctime": lambda i, line: ("2026-12-01 10:00:00,123 - sglang.srt - ERROR - " if i == 0 else "") + line,
    "ansi": lambda i, line: f"\x1b[31m{line}\x1b[0m\r",
    "ray_colour_esc_lost": lambda i, line: f"[36m(pid=1234, ip=10.0.0.1)[0m {line}",  # (an issue tracker dropped the ESC)
    "crlf": lambda i, line: line + "\r",
}


@pytest.mark.parametrize("prefix", sorted(PREFIXES))
@pytest.mark.parametrize("func", [_chained_cause, _caret_expression, _bare_assert], ids=lambda f: f.__name__)
def test_prefixed_tracebacks_are_one_traceback(prefix, func):
    exc = capture(func)
    wrap = PREFIXES[prefix]
    lines = ["INFO 12-01 09:59:59 startup line"] + [wrap(i, line) for i, line in enumerate(text_of(exc).splitlines())]
    lines.append("INFO 12-01 10:00:05 [engine.py:12] next record")
    events = _events("\n".join(lines))
    assert len(events) == 1, [e.chain for e in events]
    assert actual_chain(events[0].chain) == expected_chain(exc)


def test_prefix_metadata_is_kept():
    text = text_of(capture(_value_error)).splitlines()
    lines = [f"2026-12-01T10:00:00.123456789Z stderr F [2026-12-01 10:00:00 DP1 TP3] Scheduler hit an exception: {text[0]}"]
    lines += [f"2026-12-01T10:00:00.2Z stderr F {line}" for line in text[1:]]
    (event,) = _events("\n".join(lines))
    assert event.rank == "DP1 TP3"
    assert event.context == "Scheduler hit an exception:"
    assert event.timestamp.isoformat().startswith("2026-12-01T10:00:00")


def test_json_lines_with_whole_traceback_in_message():
    import json

    text = text_of(capture(_chained_cause))
    record = {"time": "2026-12-01T10:00:00Z", "level": "ERROR", "message": "worker crashed\n" + text,
              "host": "gpu-3", "rank": 2}
    events = _events(json.dumps(record) + "\n" + json.dumps({"message": "ok", "level": "INFO"}))
    assert len(events) == 1
    assert events[0].host == "gpu-3" and events[0].rank == "rank2"
    assert actual_chain(events[0].chain) == expected_chain(capture(_chained_cause))


def test_line_interleaved_ranks_stay_apart():
    a, b = capture(_chained_cause), capture(_caret_expression)
    ta, tb = text_of(a).splitlines(), text_of(b).splitlines()
    lines = []
    for i in range(max(len(ta), len(tb))):
        if i < len(ta):
            lines.append(f"[rank0]: {ta[i]}")
        if i < len(tb):
            lines.append(f"[rank1]: {tb[i]}")
    events = sorted(_events("\n".join(lines)), key=lambda e: e.rank)
    assert [e.rank for e in events] == ["rank0", "rank1"]
    assert actual_chain(events[0].chain) == expected_chain(a)
    assert actual_chain(events[1].chain) == expected_chain(b)


def test_message_level_interleaving_of_sglang_ranks():
    errors = [capture(_value_error), capture(_bare_assert), capture(_chained_cause)]
    lines = []
    for rank, exc in enumerate(errors):
        body = text_of(exc).splitlines()
        lines.append(f"[2026-08-28 10:00:0{rank} TP{rank}] Scheduler hit an exception: {body[0]}")
        lines += body[1:]
        lines.append(f"[2026-08-28 10:00:0{rank} TP{(rank + 1) % 3}] Decode batch. #running-req: 3")
    events = sorted(_events("\n".join(lines)), key=lambda e: e.rank)
    assert [e.rank for e in events] == ["TP0", "TP1", "TP2"]
    for event, exc in zip(events, errors):
        assert actual_chain(event.chain) == expected_chain(exc)


def test_bare_exception_line_and_argparse_error():
    text = "\n".join([
        "starting",
        "ValueError: bad config value",
        "usage: launch_server.py [-h] [--tp TP]",
        "                        [--moe-a2a-backend {none,deepep}]",
        "launch_server.py: error: argument --moe-a2a-backend: invalid choice: 'x' (choose from 'none', 'deepep')",
        "usage: tool [-h]",
        "just printing help",
    ])
    events = _events(text)
    assert [(e.kind, e.root.exception_type, e.root.message) for e in events] == [
        (EventKind.BARE, "ValueError", "bad config value"),
        (EventKind.ARGPARSE, "ArgumentError",
         "argument --moe-a2a-backend: invalid choice: 'x' (choose from 'none', 'deepep')"),
    ]


@pytest.mark.parametrize("cut", [2, 3])
def test_cut_off_tracebacks_are_emitted_as_truncated(cut):
    lines = text_of(capture(_chained_cause)).splitlines()
    head = _events("\n".join(lines[:cut]))  # EOF mid-frames
    assert len(head) == 1 and head[0].truncated
    tail = _events("\n".join(lines[-4:]))  # rotation ate the header
    assert tail and tail[-1].root.exception_type in ("RuntimeError", "KeyError", "")


def test_unrelated_line_cuts_a_traceback():
    lines = text_of(capture(_value_error)).splitlines()
    text = "\n".join(lines[:2] + ["INFO 12-01 10:00:00 something else entirely"] + lines)
    events = _events(text)
    assert [e.truncated for e in events] == [True, False]


def test_idle_tick_shows_a_complete_record_provisionally_and_eof_closes_it():
    lines = text_of(capture(_value_error)).splitlines()
    stream = iter(lines + [None, None])
    produced = events_from_lines(stream, "stdin", NO_NOTICES)
    first = next(produced)  # the idle tick after the last line shows it; a second tick shows nothing new
    assert first.provisional and first.root.exception_type == "ValueError"
    final = next(produced)  # end of input closes the record: the same one, final now
    assert not final.provisional and (final.chain, final.span) == (first.chain, first.span)
    assert next(produced, None) is None


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception groups")
def test_two_exception_groups_back_to_back_stay_two():
    # Found by the property test: a new group's "+ Exception Group" header is drawn in the same
    # column as the box of the group before it.
    exc = capture(_group)
    lines = text_of(exc).splitlines()
    events = _events("\n".join(lines + lines))
    assert [(e.span.line_start, e.span.line_end) for e in events] == [(1, len(lines)), (len(lines) + 1, 2 * len(lines))]
    assert all(actual_chain(e.chain) == expected_chain(exc) for e in events)
