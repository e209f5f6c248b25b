"""Tracebacks inside JSON log lines come out as from the plain log: Docker's json-file lines (one
line of the traceback per object, stdout and stderr interleaved, long lines in pieces), `journalctl
-o json` (one entry per line, processes interleaved, coloured lines as byte arrays), and app records
of a JSON formatter (message and exception fields), bare, behind a container's or kubectl's time and
inside the envelopes. Through the line path, the fast path and a pipe on stdin."""

from __future__ import annotations

import io
import json
import logging
import os
import sys
import threading
import traceback
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.core import triggers
from analyzer.core.normalize import LineNormalizer
from analyzer.core.records import EventKind, short_type
from analyzer.core.scan import events_from_lines
from analyzer.sources.files import STDIN
from tests import logformats as fmt
from tests.realtb import actual_chain, capture, expected_chain, raised, text_of
from tests.support import NO_NOTICES, builtin_engine
from tests.test_fastpath import assert_same
from tests.test_properties import PROPERTY, _parsed, encoded, logs


def _chained():
    try:
        {}["weights"]
    except KeyError as err:
        raise RuntimeError("Failed to load <weights> & more\nsecond line of the message") from err


def _noted():
    err = ValueError("tensor parallel size 3 does not divide 64 attention heads")
    err.add_note("while building layer 7")
    raise err


def _caret():
    values = {"a": [1, 2]}
    return values["a"][5] + values["a"][0]


def _group():
    raise ExceptionGroup("two ranks failed", [ValueError("rank 0"), KeyError("rank 1")])


ERRORS = [_chained, _noted, _caret] + ([_group] if sys.version_info >= (3, 11) else [])
NOISE = "INFO 12-01 10:00:00 [scheduler.py:1] Decode batch. #running-req: 3, gen throughput (token/s): 91.2"


def _lines(func) -> tuple[BaseException, list[str]]:
    exc = capture(func)
    return exc, text_of(exc).rstrip("\n").split("\n")


def _tracebacks(lines: list[str]):
    events = list(events_from_lines(lines, "t.log", NO_NOTICES))
    assert all(e.kind is EventKind.TRACEBACK and not e.truncated for e in events), events
    return events


def _same_as_plain(wrapped: list[str], plain: list[str], exc: BaseException):
    """One traceback, as from the plain lines: chain, context and the time it has."""
    got, expected = _tracebacks(wrapped), _tracebacks(plain)
    assert len(got) == len(expected) == 1
    assert actual_chain(got[0].chain) == expected_chain(exc)
    assert got[0].context == expected[0].context
    return got[0]


def _interleave(first: list, second: list) -> list:
    """Line by line, the second's lines running out or going on after the first's."""
    return [item for pair in zip(first, second) for item in pair] + first[len(second):] + second[len(first):]


# name -> the wrapped lines of (exception, its traceback's lines), and the plain lines they stand for
SHAPES = {
    "docker_json_file": lambda exc, tb: (fmt.docker_json_file([("stderr", line) for line in tb]), tb),
    "docker_stdout_between": lambda exc, tb: (
        fmt.docker_json_file(_interleave([("stderr", line) for line in tb], [("stdout", NOISE)] * 5)), tb),
    "journal_json": lambda exc, tb: (fmt.journal_json([(4321, line) for line in tb]), tb),
    "journal_coloured": lambda exc, tb: (fmt.journal_json([(4321, f"\x1b[31m{line}\x1b[0m") for line in tb]), tb),
    "json_logger": lambda exc, tb: ([fmt.json_logger("Scheduler hit an exception:", exc)],
                                    ["Scheduler hit an exception:", *tb]),
    "json_logger_renamed": lambda exc, tb: (
        [fmt.json_logger("Scheduler hit an exception:", exc, keys={"message": "msg", "levelname": "level"})],
        ["Scheduler hit an exception:", *tb]),
    "cri_json_logger": lambda exc, tb: (fmt.cri([fmt.json_logger("Worker failed", exc)]), ["Worker failed", *tb]),
    "kubectl_json_logger": lambda exc, tb: (fmt.kubectl_timestamps([fmt.json_logger("Worker failed", exc)]),
                                            ["Worker failed", *tb]),
    "docker_json_logger": lambda exc, tb: (fmt.docker_json_file([("stderr", fmt.json_logger("Worker failed", exc))]),
                                           ["Worker failed", *tb]),
    "json_each_line": lambda exc, tb: (fmt.json_each_line(tb), tb),
    "cri_json_each_line": lambda exc, tb: (fmt.cri(fmt.json_each_line(tb)), tb),
    "journal_json_logger": lambda exc, tb: (fmt.journal_json([(4321, fmt.json_logger("Worker failed", exc))]),
                                            ["Worker failed", *tb]),
}


@pytest.mark.parametrize("func", ERRORS, ids=lambda f: f.__name__.strip("_"))
@pytest.mark.parametrize("shape", SHAPES)
def test_each_shape_gives_the_traceback_of_the_plain_log(shape, func):
    exc, tb = _lines(func)
    wrapped, plain = SHAPES[shape](exc, tb)
    event = _same_as_plain(wrapped, plain, exc)
    assert event.timestamp == fmt.T0  # the envelope's or the record's time, the traceback's first
    if shape.startswith("journal"):
        assert (event.host, event.rank) == ("gpu-node-3", "pid=4321")


def test_docker_streams_each_holding_a_traceback_interleave_line_by_line():
    (first, tb1), (second, tb2) = _lines(_chained), _lines(_caret)
    events = _tracebacks(fmt.docker_json_file(_interleave([("stderr", line) for line in tb1],
                                                          [("stdout", line) for line in tb2])))
    assert {e.stream.split("#")[0]: actual_chain(e.chain) for e in events} == {
        "stderr": expected_chain(first), "stdout": expected_chain(second)}


def test_a_runners_relayed_lines_are_the_childs_per_stream():
    """milabench's events: each line the child wrote under `data`, its stream under `pipe`; the runner's own
    events (a metric, the return code) between them are no lines of either stream."""
    (first, tb1), (second, tb2) = _lines(_chained), _lines(_caret)
    relayed = fmt.relayed_events(_interleave([("stderr", line) for line in tb1], [("stdout", line) for line in tb2]))
    events = _tracebacks(relayed)
    assert {e.stream.split("#")[0]: actual_chain(e.chain) for e in events} == {
        "stderr": expected_chain(first), "stdout": expected_chain(second)}
    assert len(assert_same("\n".join([*relayed, ""]).encode())) == 2


def test_journal_processes_interleave_line_by_line():
    (first, tb1), (second, tb2) = _lines(_chained), _lines(_noted)
    events = _tracebacks(fmt.journal_json(_interleave([(11, line) for line in tb1], [(12, line) for line in tb2])))
    assert {e.rank: actual_chain(e.chain) for e in events} == {"pid=11": expected_chain(first),
                                                               "pid=12": expected_chain(second)}


def test_stderr_lines_logged_as_records_of_several_ranks_interleave():
    (first, tb1), (second, tb2) = _lines(_chained), _lines(_noted)
    events = _tracebacks(_interleave(fmt.json_each_line(tb1, extra='"rank": 0'),
                                     fmt.json_each_line(tb2, extra='"rank": 1')))
    assert {e.rank: actual_chain(e.chain) for e in events} == {"rank0": expected_chain(first),
                                                               "rank1": expected_chain(second)}


def test_a_journal_message_holding_several_lines_is_each_of_them():
    exc, tb = _lines(_chained)
    _same_as_plain(fmt.journal_json([(5, "\n".join(tb))]), tb, exc)


def test_docker_pieces_of_a_long_line_are_joined_per_stream():
    def tensor():
        raise ValueError("bad logits " + "0.125, " * 5000 + "...")  # one line of 35 KB: three pieces

    exc, tb = _lines(tensor)
    pieces = fmt.docker_json_file(_interleave([("stderr", line) for line in tb], [("stdout", NOISE)] * 9))
    assert len(pieces) > len(tb) + 9
    _same_as_plain(pieces, tb, exc)


def test_records_of_a_collector_that_drops_newlines_are_lines():
    """Fluent Bit's CRI parser: `log` without its newline, `logtag` F or P. Without a logtag, only a
    record that fills Docker's buffer is a piece of a longer line."""
    exc, tb = _lines(_chained)
    records = [line.replace('\\n","stream"', '","logtag":"F","stream"') for line in
               fmt.docker_json_file([("stderr", line) for line in tb])]
    assert '"logtag":"F"' in records[0]
    _same_as_plain(records, tb, exc)
    _same_as_plain([record.replace('"logtag":"F",', "") for record in records], tb, exc)  # nor a logtag


@pytest.mark.parametrize("func", [_caret, _noted], ids=lambda f: f.__name__.strip("_"))
def test_ecs_records_give_the_traceback_they_keep(func):
    """ECS keeps the frames, the type's name and the message apart (no chain, no notes): joined, they
    are the traceback Python prints of the last exception, notes aside."""
    exc = capture(func)
    plain = ["EngineCore failed", "Traceback (most recent call last):",
             *"".join(traceback.format_tb(exc.__traceback__)).rstrip("\n").split("\n"), f"{type(exc).__name__}: {exc}"]
    got, expected = _tracebacks(fmt.cri([fmt.ecs_logger("EngineCore failed", exc)])), _tracebacks(plain)
    assert [actual_chain(e.chain) for e in got] == [actual_chain(e.chain) for e in expected]
    assert got[0].chain[-1].frames and got[0].chain[-1].message == str(exc)
    assert got[0].timestamp == fmt.T0.replace(microsecond=123000)  # the record's own time, in ms


@pytest.mark.parametrize("key", ["exception", "error_detail"])
@pytest.mark.parametrize("func", [_chained, _noted, _caret], ids=lambda f: f.__name__.strip("_"))
def test_structlogs_dict_tracebacks_give_the_chain_they_keep(func, key):
    """structlog's dict tracebacks (Airflow 3's `error_detail`) keep each exception of the chain with its frames but no
    source lines: joined, they are the chain Python prints, notes included."""
    exc = capture(func)
    record = fmt.structlog_dict_tracebacks("Task failed with exception", exc, key=key)
    (got,) = _tracebacks([record])
    assert len(assert_same(f"{record}\n".encode())) == 1
    def said(chain):
        return [(short_type(link.exception_type), link.message, [frame[:3] for frame in link.frames], link.link)
                for link in chain]

    assert said(actual_chain(got.chain)) == said(expected_chain(exc))
    assert got.timestamp == fmt.T0


class BadRequestError(Exception):
    """The class an API client raises for a 400 (a proxy SDK's, named under its package)."""


BadRequestError.__module__ = "litellm"


@pytest.mark.parametrize("indent", [None, 2])
@pytest.mark.parametrize("wrapped", [True, False])
def test_an_openai_compatible_servers_error_body_is_the_error_it_names(indent, wrapped):
    """vLLM's and SGLang's error responses as curl prints them (`{"object": "error", "message": ..., "type":
    "BadRequestError", "code": 400}`, or those fields under `error`): that error, on both paths; pretty-printed,
    its message's member alone says no class. OpenAI's own types name no class: no error."""
    said = "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."
    fields = {"message": said, "type": "BadRequestError", "param": None, "code": 400}
    body = {"error": fields} if wrapped else {"object": "error", **fields}
    lines = ["$ curl -s localhost:30000/v1/completions -d @req.json", *json.dumps(body, indent=indent).split("\n")]
    found = assert_same("\n".join([*lines, ""]).encode())
    if indent is None:
        (event,) = found
        assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.BARE, "BadRequestError", said)
    else:
        assert found == []
    openai = json.dumps({"error": {**fields, "type": "invalid_request_error"}})
    assert assert_same(f"{openai}\n".encode()) == []


@pytest.mark.parametrize("wrapped", [True, False])
def test_an_openai_clients_status_error_logged_with_the_servers_body_is_the_error_the_body_names(wrapped):
    """The openai client's status error as an eval harness logs it (`Error code: 400 - {...}`, the server's body as a
    dict's repr: its message in double quotes, as it holds an apostrophe), request after request: each the error the body
    names."""
    said = "This model's maximum context length is 2048 tokens. However, you requested 6751 tokens."
    fields = {"message": said, "type": "BadRequestError", "param": None, "code": 400}
    body = {"error": fields} if wrapped else {"object": "error", **fields}
    logged = f"Error code: 400 - {body}"
    assert f'"{said}"' in logged
    lines = [*fmt.mmengine(logged), *fmt.mmengine("Current RPM 4.", level=logging.INFO), *fmt.mmengine(logged)]
    (event, again) = assert_same("\n".join([*lines, ""]).encode())
    assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.BARE, "BadRequestError", said)
    assert again.chain == event.chain and again.span.line_start == 3
    analysis = builtin_engine().analysis()  # (vLLM's ValueError, which its server names so in the body: its page)
    analysis.add(event)
    assert analysis.incidents()[0].diagnosis.pattern.id == "vllm.request-exceeds-context"


def test_an_error_body_printed_as_bytes_keeps_its_quotes_escaped():
    """A client that prints the body's bytes writes each single quote as their repr escapes it (`model\\'s`), which
    JSON has no escape for: the body is still the error it names, the quote as the server wrote it."""
    said = "The input (61709 tokens) is longer than the model's context length (40960 tokens)."
    body = json.dumps({"object": "error", "message": said, "type": "BadRequestError", "param": None, "code": 400})
    printed = repr(body.encode())[2:-1]
    assert "\\'" in printed
    (event,) = assert_same(f"I am still getting this error: \n\n{printed}\n".encode())
    assert (event.root.exception_type, event.root.message) == ("BadRequestError", said)


@pytest.mark.parametrize("form", ["json", "json indented", "repr"])
@pytest.mark.parametrize("key", ["error", "detail"])
def test_an_exception_line_a_member_holds_is_read_to_its_closing_quote(form, key):
    """An HTTP error's body whose message is an exception line (a proxy's `{"error": {"message":
    "litellm.BadRequestError: ..."}}`, FastAPI's `{"detail": "..."}`), compact or pretty-printed JSON or the
    dict a client printed, whole or cut off: that error, its message as the body spells it (escapes kept), to
    the string's closing quote."""
    exc = raised(BadRequestError('AnthropicException - {"type":"error","message":"prompt is too long"}'))
    line = traceback.format_exception_only(exc)[-1].rstrip("\n")
    assert line.startswith("litellm.BadRequestError: ")
    body = {"error": {"message": line, "type": None, "code": "400"}} if key == "error" else {"detail": line}
    text = repr(body) if form == "repr" else json.dumps(body, indent=2 if form == "json indented" else None)
    spelled = repr(str(exc))[1:-1] if form == "repr" else json.dumps(str(exc))[1:-1]
    for data in (text, text[:text.index("too long")]):  # (cut off: to the line's end)
        (event,) = assert_same(f"HTTP/1.1 400 Bad Request\n{data}\n".encode())
        assert (event.kind, event.root.exception_type) == (EventKind.BARE, "litellm.BadRequestError")
        assert spelled.startswith(event.root.message) and event.root.message.startswith("AnthropicException - {")
        assert event.root.message == spelled or data is not text
    assert assert_same(b'{"detail": "Not Found"}\n') == []


@pytest.mark.parametrize("key", ["error", "err", "exception"])
def test_an_exception_line_a_logfmt_pair_holds(key):
    """A logfmt record whose error pair holds an exception line (`error="ValueError: ..."`), or SageMaker's report of a
    failed job, its error after `ErrorMessage "`: that error, the text before the pair its context."""
    exc = raised(ValueError("tensor parallel size 3 does not divide 64 attention heads"))
    said = traceback.format_exception_only(exc)[-1].rstrip("\n")
    record = fmt.logfmt([("time", "2026-12-01T10:00:00Z"), ("level", "error"), ("msg", "worker failed"), (key, said)])
    assert f'{key}="ValueError: ' in record
    (event,) = assert_same(f"{record}\n".encode())
    assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.BARE, "ValueError", str(exc))
    assert event.context == 'time=2026-12-01T10:00:00Z level=error msg="worker failed"'
    (event,) = assert_same(f'ExitCode 1\nErrorMessage "{said}\n"\nCommand "/opt/conda/bin/python3 train.py"\n'.encode())
    assert (event.root.exception_type, event.root.message) == ("ValueError", str(exc))
    assert assert_same(b'level=info msg="retrying" error="connection refused"\n') == []


def test_records_of_several_ranks_keep_their_ranks():
    """A JSON formatter's records interleave whole; each names its rank, behind a container's time."""
    records = []
    for rank, func in enumerate(ERRORS):
        exc = capture(func)
        record = fmt.json_logger(f"rank {rank} failed", exc, when=datetime(2026, 11, 28, 3, 12, 40 + rank))
        records.append(record[:-1] + f', "rank": {rank}}}')
    events = _tracebacks(fmt.cri(records))
    assert [(e.rank, actual_chain(e.chain)) for e in events] == [
        (f"rank{rank}", expected_chain(capture(func))) for rank, func in enumerate(ERRORS)]


@settings(PROPERTY, max_examples=int(os.environ.get("ANALYZER_PROPERTY_EXAMPLES") or 40))
@given(st.data())
def test_exactly_the_tracebacks_written_come_out_of_docker_envelopes(data):
    """The property of tests/test_properties.py, each line in an envelope: line path and fast path."""
    lines, written = data.draw(logs())
    chunks = data.draw(encoded(fmt.docker_json_file([("stderr", line) for line in lines])))
    assert _parsed(chunks) == {w.line_start: w for w in written}


def _mixed_log() -> bytes:
    """Every shape, each after a record the fast path skips but whose fields the next may repeat."""
    lines = []
    noise = [fmt.json_each_line([NOISE])[0], fmt.cri(fmt.json_each_line([NOISE]))[0],
             fmt.journal_json([(4321, NOISE)])[0], fmt.kubectl_timestamps([NOISE])[0]]
    for func in ERRORS:
        exc, tb = _lines(func)
        for i, shape in enumerate(SHAPES.values()):
            lines += [noise[i % len(noise)], *shape(exc, tb)[0]]
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.skipif(not triggers.available(), reason="hyperscan is not installed")
def test_the_fast_path_reads_them_as_every_line_read():
    events = assert_same(_mixed_log())
    assert len(events) == len(ERRORS) * len(SHAPES)


def _summary(incidents) -> list[tuple]:
    return [(i.info.exception_type, i.info.message, len(i.event.chain), i.count, i.event.span.line_start,
             i.event.span.line_end, i.event.rank, i.event.timestamp) for i in incidents]


def _diagnosed(incidents) -> list[tuple]:
    """What an incident says of its error, not where or when it was written."""
    return [(i.role, i.fingerprint, i.is_run_root, i.count, i.info.exception_type, i.info.message,
             i.diagnosis.pattern, actual_chain(i.event.chain), i.event.context) for i in incidents]


@pytest.mark.parametrize("shape", ["docker_stdout_between", "journal_coloured", "cri_json_logger", "json_each_line"])
def test_the_incidents_are_those_of_the_unwrapped_log(shape, tmp_path):
    wrapped, plain = [], []
    for func in ERRORS:
        exc, tb = _lines(func)
        lines, unwrapped = SHAPES[shape](exc, tb)
        wrapped += lines
        plain += [NOISE, *unwrapped]
    (tmp_path / "wrapped.log").write_text("\n".join(wrapped) + "\n")
    (tmp_path / "plain.log").write_text("\n".join(plain) + "\n")
    engine = builtin_engine()
    expected = _diagnosed(engine.analyse([str(tmp_path / "plain.log")]).incidents)
    assert _diagnosed(engine.analyse([str(tmp_path / "wrapped.log")]).incidents) == expected
    assert len(expected) == len(ERRORS)


def test_stdin_gives_the_incidents_of_the_file(tmp_path, monkeypatch):
    data = _mixed_log()
    log = tmp_path / "containers.log"
    log.write_bytes(data)
    engine = builtin_engine()
    expected = _summary(engine.analyse([str(log)]).incidents)
    read, write = os.pipe()

    def writer() -> None:
        with os.fdopen(write, "wb") as pipe:
            for at in range(0, len(data), 4096):
                pipe.write(data[at:at + 4096])
                pipe.flush()

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(os.fdopen(read, "rb")))
    thread = threading.Thread(target=writer)
    thread.start()
    got = _summary(engine.analyse([STDIN]).incidents)
    thread.join(30)
    assert got == expected and len(expected) >= len(ERRORS)


def test_crafted_envelopes_stay_bounded():
    """A line holding a hundred thousand lines, or pieces that never end, costs what a traceback block may."""
    normalizer = LineNormalizer("t.log")
    many = json.dumps({"MESSAGE": "x\n" * 100_000, "_PID": "1", "__REALTIME_TIMESTAMP": "1"})
    assert len(normalizer.normalize(many, 1)) == 5000
    piece = json.dumps({"log": "y" * 100_000, "stream": "stderr", "time": "2026-11-28T03:12:40Z"})
    joined = [len(normalizer.normalize(piece, n)) for n in range(2, 60)]
    assert joined.count(1) == 1 and joined.index(1) == 41  # out as one line once 4 MiB are held
    assert normalizer.holding and len(normalizer.finish()) == 1


class _RendezvousTimeoutError(Exception):  # (named as torch's is)
    pass


_RendezvousTimeoutError.__module__ = "torch.distributed.elastic.rendezvous.api"
_RendezvousTimeoutError.__qualname__ = _RendezvousTimeoutError.__name__ = "RendezvousTimeoutError"


def _rendezvous():
    raise _RendezvousTimeoutError()


def test_torchelastics_error_file_names_the_error_even_without_text():
    """torchelastic's error handler logs the error file it writes, pretty-printed: its `"message": "Type: text"` member
    is the error, an empty text too (`"RendezvousTimeoutError: "`), and its `py_callstack` the same error's traceback:
    one error, raised where that says; a prose mention of a type is none."""
    lines = fmt.torchelastic_error_file(capture(_rendezvous))
    assert '    "message": "RendezvousTimeoutError: ",' in lines
    (event,) = assert_same("\n".join([*lines, ""]).encode())
    assert (event.root.short_type, event.root.message, event.root.raise_site.function) == ("RendezvousTimeoutError", "",
                                                                                           "_rendezvous")
    assert assert_same(b'the docs say "error": "KeyError" is logged\n') == []


def _call_store():
    raise RuntimeError("Connection reset by peer")


def _rendezvous_store():
    try:
        _call_store()
    except RuntimeError as err:
        raise _RendezvousTimeoutError("The connection to the C10d store has failed. See inner exception for details.") from err


def test_torchelastics_error_file_whose_callstack_a_copy_cut_is_the_chain_its_message_ends():
    """The error file of an error raised from another (its callstack the chain), the copy cut inside the callstack's
    string before the wrapper's exception line: one error, the cause first, the wrapper named by the file's message."""
    exc = capture(_rendezvous_store)
    lines = fmt.torchelastic_error_file(exc)
    at = next(k for k, line in enumerate(lines) if '"py_callstack"' in line)
    cut = lines[at][:lines[at].rindex("\\n  File ")]  # (inside its last frames)
    (event,) = assert_same("\n".join([*lines[:at], cut, ""]).encode())
    assert [(link.short_type, link.message) for link in event.chain] == [
        ("RuntimeError", "Connection reset by peer"), ("RendezvousTimeoutError", str(exc))]
    assert event.chain[0].raise_site.function == "_call_store" and event.truncated
