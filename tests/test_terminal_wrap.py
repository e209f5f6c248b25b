"""A terminal's copy of a log with a prefix on every line, hard-wrapped at the terminal's width: the
rest of each long line comes on the next line without the prefix. The tracebacks come out as they
were before the wrap: a header or chain separator cut inside its words, a message's words, source
lines, at every width, on the line-by-line path and on the fast path alike."""

from __future__ import annotations

import linecache
import traceback
from datetime import timedelta

import pytest

from analyzer.core import grammar as g
from analyzer.core.records import EventKind
from tests import logformats as fmt
from tests.failureforms import hard_wrapped, word_wrapped
from tests.realtb import actual_chain, capture, expected_chain, text_of
from tests.test_fastpath import assert_same, line_path


def _load_checkpoint_shard(name: str) -> None:
    raise KeyError(f"model.layers.{name}.mlp.experts.w2_weight_scale_inv is missing from the checkpoint shard")


def _chained_long_message() -> None:
    try:
        _load_checkpoint_shard("31")
    except KeyError as err:
        raise ValueError("The decoder prompt (length 9000) is longer than the maximum model length of 8192. "
                         "Make sure that `max_model_len` is no smaller than the number of text tokens plus "
                         "multimodal tokens, or shorten the prompt.") from err


def _handled_then_failed() -> None:
    try:
        _chained_long_message()
    except ValueError:
        raise RuntimeError("Worker failed with error 'The decoder prompt is too long', please check the stack "
                           "trace above for the root cause") from None


def _context_chain() -> None:
    try:
        _load_checkpoint_shard("7")
    except KeyError:
        raise RuntimeError("loading weights failed while another error was being handled")  # noqa: B904 (the context chain is the point)


ERRORS = (_chained_long_message, _handled_then_failed, _context_chain)
STYLES = {  # each with its prefix's length
    "vllm worker": (lambda exc: fmt.vllm_worker(fmt.vllm_record("WorkerProc hit an exception.", exc), rank=3), 65),
    "torchrun": (lambda exc: [f"[rank3]: {line}" for line in text_of(exc).rstrip("\n").split("\n")], 9),
    "vllm": (lambda exc: fmt.vllm_record("EngineCore failed to start.", exc), 35),
    # each line a record of its own, the clock ticking between them (the prefix alone tells no record goes on)
    "logger per line": (lambda exc: fmt.logging_each_line(text_of(exc).rstrip("\n").split("\n"), step=timedelta(milliseconds=7)),
                        42),
}
AROUND = ["INFO 11-28 03:12:39 [api_server.py:1080] vLLM API server version 0.9.1"]


def _traceback(lines: list[str]):
    events, *_ = line_path("\n".join([*lines, ""]).encode())
    tracebacks = [e for e in events if e.kind is EventKind.TRACEBACK]
    assert len(tracebacks) == 1, [(e.chain, e.span) for e in tracebacks]
    return tracebacks[0]


def _without_code(chain):
    return [(link.exception_type, link.message, link.link, [frame[:3] for frame in link.frames]) for link in chain]


@pytest.mark.parametrize("style", sorted(STYLES))
@pytest.mark.parametrize("error", ERRORS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("columns", [31, 47, 62, 79, 96])  # past the prefix: frame lines cut or not
def test_wrapped_traceback_reads_as_unwrapped(style, error, columns):
    exc = capture(error)
    format_lines, prefix = STYLES[style]
    lines = [line.rstrip("\r") for line in format_lines(exc)]  # (a terminal shows no carriage return)
    whole = _traceback([*AROUND, *lines, *AROUND])
    assert actual_chain(whole.chain) == expected_chain(exc)
    wrapped = hard_wrapped([*AROUND, *lines, *AROUND], prefix + columns)  # (all of a terminal's lines)
    assert len(wrapped) > len(lines) + 2 * len(AROUND)
    event = _traceback(wrapped)
    assert _without_code(actual_chain(event.chain)) == _without_code(expected_chain(exc))
    assert not event.truncated
    header = next(i for i, line in enumerate(lines) if g.HEADER_TEXT in line)
    assert event.span.line_start == 1 + len(hard_wrapped([*AROUND, *lines[:header]], prefix + columns))
    assert event.span.line_end == len(wrapped) - len(hard_wrapped(AROUND, prefix + columns))
    data = "\n".join([*wrapped, ""]).encode()
    assert assert_same(data) == assert_same(data)  # the fast path finds the same (a header cut: both lines)


_EVERY_WIDTH_QUICK = ("no prefix", "torchrun", "logger per line")  # (the others in the slow run: the quick suite's budget)


@pytest.mark.parametrize("style", [*_EVERY_WIDTH_QUICK, *(pytest.param(style, marks=pytest.mark.slow)
                                                          for style in sorted(STYLES) if style not in _EVERY_WIDTH_QUICK)])
@pytest.mark.parametrize("error", ERRORS, ids=lambda f: f.__name__)
def test_every_width(style, error):
    """Every width from a narrow terminal's to the longest line's, so every place a cut can fall in a
    frame line, a source line, a message or a separator (where this checkout's paths put them), where
    two lines or more are cut (one alone tells no width: below). The fast path reads them alike."""
    exc = capture(error)
    format_lines, prefix = STYLES.get(style, (lambda exc: text_of(exc).rstrip("\n").split("\n"), 0))
    lines = [line.rstrip("\r") for line in format_lines(exc)]
    around = AROUND if prefix else ["INFO starting"]
    header = next(i for i, line in enumerate(lines) if g.HEADER_TEXT in line)
    widths = [width for width in range(prefix + 18, max(map(len, lines)) + 1) if sum(len(line) > width for line in lines) > 1]
    assert len(widths) > 40
    for width in widths:
        wrapped = hard_wrapped([*around, *lines, *around], width)
        event = _traceback(wrapped)
        assert _without_code(actual_chain(event.chain)) == _without_code(expected_chain(exc)), width
        assert not event.truncated, width
        assert event.span.line_start == 1 + len(hard_wrapped([*around, *lines[:header]], width)), width
        assert event.span.line_end == len(wrapped) - len(hard_wrapped(around, width)), width
        assert assert_same("\n".join([*wrapped, ""]).encode(), chunks=(1 << 20, 97))


def test_one_long_line_tells_no_width():
    """A prefixed line followed by one without the prefix is no cut line on its own: only where two
    such lines are as long as each other, and no line is longer, is that the terminal's width."""
    exc = capture(lambda: _load_checkpoint_shard("1"))
    lines = [f"[rank0]: {line}" for line in text_of(exc).rstrip("\n").split("\n")]
    exception_line = lines[-1]
    for after in (["next record without a prefix"], [f"[rank0]: {'x' * (len(exception_line) - 9)}", "unprefixed",
                                                      f"[rank0]: {'y' * len(exception_line)}", "unprefixed"]):
        events, *_ = line_path("\n".join([*after, *lines, "next record without a prefix", ""]).encode())
        assert [e.chain[-1].message for e in events if e.kind is EventKind.TRACEBACK] == [exception_line.split(": ", 2)[2]]


@pytest.mark.parametrize("cut", range(1, len(g.HEADER_TEXT)))
def test_header_cut_anywhere(cut):
    assert g.rest_of_fixed_line("[x] " + g.HEADER_TEXT[:cut], g.HEADER_TEXT[cut:]) == "[x] " + g.HEADER_TEXT
    assert g.begins_header(g.HEADER_TEXT[:cut])


def test_fixed_lines_are_not_made_up():
    assert g.rest_of_fixed_line(g.HEADER_TEXT, "more") is None  # whole before the rest
    assert g.rest_of_fixed_line("Traceback (most", " recent call first):") is None
    assert g.rest_of_fixed_line("", g.HEADER_TEXT) is None  # nothing cut
    assert g.rest_of_fixed_line("During handling of the above ", "exception, another exception occurred:") \
        == g.CONTEXT_SEPARATOR
    assert not g.begins_header("Traceback (most recent call last):")
    assert not g.begins_header("")


@pytest.mark.parametrize("line", ['  File "/srv/vllm/worker.py", line 1234, in _run_speculative_decoding_step',
                                  '  File "/srv/x.py", line 7, in <module>', 'File "C:\\Program Files\\x.py", line 7'])
def test_frame_line_cut_anywhere(line):
    """A terminal's cut keeps every character: anywhere (in the word File too), the two parts make the line."""
    for cut in range(len(line) - len(line.lstrip()) + 1, len(line)):
        assert g.rest_of_frame_line(line[:cut], line[cut:]) == line, cut


def test_frame_line_cut_again():
    line = '  File "/srv/vllm/worker.py", line 1234, in _run_speculative_decoding_step'
    for first in range(line.index('"') + 1, len(line)):
        for second in range(first + 1, line.index(" in ") + 3):  # (in the function's name: two whole frames)
            cut, rest = line[:first], line[first:second]
            assert g.goes_on_frame_line(cut, rest), (first, second)
    assert not g.goes_on_frame_line(line[:40], line[40:])  # the whole line
    assert not g.goes_on_frame_line(line[:40], "    source()")
    assert not g.goes_on_frame_line("    source()", "x")


@pytest.mark.parametrize("cut", ['  File "/srv/ray/memory_monitor.py", line 76, in', '  File "/srv/x.py", line 76, in '])
def test_frame_line_cut_before_its_function(cut):
    """A terminal (or a wrapping viewer) that breaks a frame line just before the function's name."""
    assert g.rest_of_frame_line(cut, "raise_if_low_memory") == f"{cut.rstrip()} raise_if_low_memory"
    assert g.rest_of_frame_line(cut, "<module>") == f"{cut.rstrip()} <module>"
    assert g.rest_of_frame_line(cut, "KeyError: 'x'") is None
    events, *_ = line_path("\n".join(["Traceback (most recent call last):", cut, "raise_if_low_memory",
                                      "    self.error_threshold))", "ray.memory_monitor.RayOutOfMemoryError: More than 95%",
                                      ""]).encode())
    (event,) = events
    assert (event.root.exception_type, event.root.frames[-1].function) == (
        "ray.memory_monitor.RayOutOfMemoryError", "raise_if_low_memory")


@pytest.mark.parametrize("error", ERRORS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("width", [47, 62, 79])
def test_a_wrapped_traceback_without_prefixes(error, width):
    """No prefix tells a rest from a line: the frame lines the width cuts tell it (two, and no longer
    line), and from then on a message's or source line as long as it goes on in the next."""
    exc = capture(error)
    lines = hard_wrapped(text_of(exc).rstrip("\n").split("\n"), width)
    event = _traceback(["INFO starting", *lines, "INFO done"])
    assert _without_code(actual_chain(event.chain)) == _without_code(expected_chain(exc))
    assert (event.span.line_start, event.span.line_end) == (2, len(lines) + 1)
    data = "\n".join(["INFO starting", *lines, "INFO done", ""]).encode()
    assert assert_same(data)


_DEEP = ("C:\\Users\\User\\AppData\\Local\\pypoetry\\Cache\\virtualenvs\\env-x8Yp3\\lib\\site-packages\\"
         "playwright\\_impl\\_connection.py")


def _in_a_deep_venv() -> None:
    """A client library's error raised two frames deep in a virtualenv's files (their paths as long as Windows' are),
    while it handled another."""
    source = ("def send(channel):\n    return inner_send(channel)\n\n"
              "def inner_send(channel):\n    try:\n        channel['result']\n"
              "    except KeyError as err:\n        raise ConnectionError('Target page, context or browser has been closed') from err\n")
    linecache.cache[_DEEP] = (len(source), None, source.splitlines(True), _DEEP)
    scope: dict = {}
    exec(compile(source, _DEEP, "exec"), scope)  # (the source lines come from linecache)
    scope["send"]({})


@pytest.mark.parametrize("spare", [0, 3, 6])
def test_a_traceback_a_console_wrapped_at_blanks(spare):
    """A console that wraps at blanks (Windows', a notebook's) puts a frame line's word File alone on its line where
    the quoted path does not fit after it, the path on the next (`spare` columns to spare) and its place after: each
    frame reads whole again."""
    exc = capture(_in_a_deep_venv)
    lines = text_of(exc).rstrip("\n").split("\n")
    width = len(f'"{_DEEP}",') + spare
    wrapped = word_wrapped(lines, width)
    assert sum(line.strip() == "File" for line in wrapped) == 3  # (the frames in the deep file)
    event = _traceback(["INFO starting", *wrapped, "INFO done"])
    assert actual_chain(event.chain) == expected_chain(exc)
    assert not event.truncated and event.root.raise_site.function == "inner_send"
    assert assert_same("\n".join(["INFO starting", *wrapped, "INFO done", ""]).encode())


def test_a_paste_begun_at_a_frame_line_cut_inside_its_words():
    """A paste that begins at a frame line (its header above the copy) which a terminal cut anywhere between its path
    and its function (`", lin` + `e 22, in f`): the traceback begins at the first line, with every frame."""
    exc = capture(lambda: _load_checkpoint_shard("3"))
    lines = text_of(exc).rstrip("\n").split("\n")[1:]  # (from the first frame on)
    first = lines[0]
    for cut in range(first.index('",') + 1, first.index(" in ") + 4):
        event = _traceback([first[:cut], first[cut:], *lines[1:]])
        assert _without_code(actual_chain(event.chain)) == _without_code(expected_chain(exc)), cut
        assert event.span.line_start == 1, cut


class CheckpointShardMissingError(KeyError):
    """An error whose type's name is long enough for a terminal to cut inside it."""


def _missing_shard() -> None:
    raise CheckpointShardMissingError("model.layers.3.mlp.experts.w2_weight_scale_inv")


@pytest.mark.parametrize("style", ["no prefix", *sorted(STYLES)])
def test_an_exception_line_cut_inside_its_type_name(style):
    """The exception line cut inside its type's name (`...ShardMissi`, then `ngError: ...`, without the prefix where
    there is one) is the traceback's exception line, whatever the prefix's clock says."""
    exc = capture(_missing_shard)
    format_lines = STYLES.get(style, (lambda exc: text_of(exc).rstrip("\n").split("\n"),))[0]
    lines = [line.rstrip("\r") for line in format_lines(exc)]
    name = f"{__name__}.CheckpointShardMissingError"
    prefix = lines[-1].index(name)
    # (right after its module's dot too; a terminal at least 40 columns wide)
    for width in range(max(prefix + name.rindex("."), 40), prefix + len(name)):
        wrapped = hard_wrapped([*AROUND, *lines, *AROUND], width)
        assert any(line.endswith(name[:width - prefix]) for line in wrapped)  # (the name is cut)
        event = _traceback(wrapped)
        assert _without_code(actual_chain(event.chain)) == _without_code(expected_chain(exc)), width
        assert assert_same("\n".join([*wrapped, ""]).encode(), chunks=(1 << 20, 97))


def _kv_cache_too_small() -> None:
    raise ValueError("To serve at least one request with the model's max seq len (40960), 4.38 GiB KV cache is needed, "
                     "which is larger than the available KV cache memory (4.00 GiB). Try increasing "
                     "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.")


def test_a_lone_exception_line_cut_at_eighty_columns():
    """An exception line alone (an engine's log of the error, no stack), cut at a terminal's usual 80 columns: no
    two cut lines tell the width, but each piece reads as cut (inside a word, at a blank, or as long again)."""
    line = "".join(traceback.format_exception_only(capture(_kv_cache_too_small))).rstrip("\n")
    for prefix in ("", "(EngineCore_DP0 pid=64528) ERROR 11-18 13:44:09 [core.py:842] "):
        wrapped = hard_wrapped([prefix + line], 80)
        assert len(wrapped) > 3
        events, *_ = line_path("\n".join(["INFO starting", *wrapped, ""]).encode())
        assert [(e.root.exception_type, e.root.message) for e in events] == [("ValueError", line.split(": ", 1)[1])]


def test_a_message_line_of_eighty_columns_that_ends_a_sentence_is_not_cut():
    """A message whose own first line is 80 long (torch's CUDA version mismatch breaks there, its second line
    beginning with a capital) keeps its line break."""
    message = ("\nThe detected CUDA version (12.4) mismatches the version that was used to compile\n"
               "PyTorch (11.8). Please make sure to use the same CUDA versions.\n")
    assert len(message.split("\n")[1]) == 80
    text = "".join(traceback.format_exception_only(RuntimeError(message))).rstrip("\n")
    events, *_ = line_path("\n".join(["INFO starting", *text.split("\n"), ""]).encode())
    messages = [e.root.message for e in events]
    assert any(m.strip().endswith("used to compile") or "compile\nPyTorch" in m for m in messages), messages
    assert not any("compilePyTorch" in m for m in messages)
