"""Forms a copy gives a traceback on its way into an issue: its line breaks lost or doubled (its
indentation lost too, or kept), a frame line's blank after its comma lost, its lines in a string escaped twice, typographic quotes around paths, a line number made a link, stray spaces before
its header, an IPython header copied without its type, an exception line glued to the user's words in
CJK, a frame line glued to the user's words by a colon, a traceback re-indented by hand; an exception
line alone whose type is a class of a module of exceptions; Ray's wrappers of its own
type over a failed dependency, also in a pytest report."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import traceback

import pytest
import regex

from analyzer.core import grammar as g
from analyzer.core.records import EventKind, Link
from tests import failureforms as forms
from tests import logformats as fmt
from tests.realtb import actual_chain, capture, expected_chain, text_of
from tests.test_fastpath import assert_same, line_path

AROUND = ["INFO 12-04 10:00:00 loading weights", "INFO 12-04 10:00:09 shutting down"]


def _load_shard(name: str) -> dict:
    return {}[name]


def _load_weights() -> None:
    try:
        _load_shard("model.layers.3.mlp.down_proj.weight")
    except KeyError as err:
        raise RuntimeError("Failed to load weights of layer 3") from err


def _read_header() -> None:
    raise Exception("Error while deserializing header: HeaderTooLarge")  # (a library's plain Exception)


def _load_file() -> None:
    _read_header()


def _tracebacks(lines: list[str]):
    events = assert_same("\n".join([*lines, ""]).encode(), chunks=(1 << 20, 89))  # (the fast path alike)
    return [event for event in events if event.kind is EventKind.TRACEBACK]


def _places(chain):
    return [(link.exception_type, link.message, link.link, [frame[:3] for frame in link.frames]) for link in chain]


def test_a_traceback_that_lost_its_line_breaks():
    exc = capture(_load_weights)
    (event,) = _tracebacks([AROUND[0], forms.on_one_line(text_of(exc).split("\n")), AROUND[1]])
    assert actual_chain(event.chain) == expected_chain(exc)  # (source lines too: carets apart)
    assert (event.span.line_start, event.span.line_end) == (2, 2)


@pytest.mark.parametrize("mark", [">", "\u2026"], ids=("less -S", "systemd"))
def test_frame_lines_a_pager_chopped_after_in(mark):
    """`less -S` (and systemd's pager, with an ellipsis) chops a long line at the screen's edge and marks the cut:
    a frame line cut right after `in`; a copy without the header. Each frame keeps its place."""
    exc = capture(_load_weights)
    lines = [f"{line[:line.index(', in ') + 4]}{mark}" if line.lstrip().startswith("File ") else line
             for line in text_of(exc).rstrip("\n").split("\n")]
    (event,) = _tracebacks([AROUND[0], *lines[1:], AROUND[1]])
    assert [[(f.path, f.lineno) for f in link.frames] for link in event.chain] == [
        [frame[:2] for frame in link.frames] for link in expected_chain(exc)]


def test_a_traceback_that_lost_its_line_breaks_begun_inside_its_first_frame_line():
    """The copy began after the first frame's path (`line 242, in f ...`): read from the next frame on; the error
    a plain `Exception` (not one an `except Exception:` source line names)."""
    exc = capture(_load_file)
    flat = forms.on_one_line(text_of(exc).split("\n")[1:])
    (event,) = _tracebacks([AROUND[0], flat[flat.index(", line ") + 2:], AROUND[1]])
    (expected,) = expected_chain(exc)
    assert (event.root.exception_type, event.root.message) == ("Exception", str(exc))
    assert [frame[:3] for frame in actual_chain(event.chain)[0].frames] == [frame[:3] for frame in expected.frames[1:]]


def test_a_traceback_that_lost_its_line_breaks_and_its_header():
    """The copy began at the first frame, then lost its line breaks: a traceback cut above its frames."""
    exc = capture(_load_weights)
    (event,) = _tracebacks([AROUND[0], forms.on_one_line(text_of(exc).split("\n")[1:]), AROUND[1]])
    assert event.truncated and _places(actual_chain(event.chain)) == _places(expected_chain(exc))


@pytest.mark.parametrize("source", [True, False], ids=("with its source", "frame alone"))
def test_a_copy_of_the_innermost_frame_glued_to_the_exception_line(source):
    """A two-line fragment: the frame above's source line, then the innermost frame line with its source
    line and the exception line glued on (the line breaks between them lost)."""
    exc = capture(lambda: _load_shard("model.layers.3.mlp.down_proj.weight"))
    lines = text_of(exc).rstrip("\n").split("\n")
    inner = next(k for k in range(len(lines) - 1, 0, -1) if lines[k].startswith("  File "))
    glued = " ".join(line.strip() for line in [lines[inner], *lines[inner + 1:-1] * source, lines[-1]])
    (event,) = _tracebacks([AROUND[0], lines[inner - 1].strip(), glued, AROUND[1]])
    (expected,) = expected_chain(exc)
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.message, event.truncated) == (expected.exception_type, expected.message, True)
    assert actual.frames[-1][:3] == expected.frames[-1][:3]


def _raise_http_error() -> None:
    raise ConnectionError("Error code: 400 - {'error': {'message': \"Unsupported parameter: 'max_tokens'\"}}") from None


def test_a_raise_statement_with_the_exception_line_glued_after_it():
    """The last source line of a traceback and the exception line on one line (the break between them
    lost): the error. A raise statement whose own text names an exception (in its string) is only code."""
    lines = text_of(capture(_raise_http_error)).rstrip("\n").split("\n")
    statement = next(line for line in lines if line.strip().startswith("raise "))
    (event,) = assert_same(f"{statement.strip()} {lines[-1]}\n".encode())
    assert (event.kind, event.root.exception_type, event.root.message) == (
        EventKind.BARE, "ConnectionError", lines[-1].split(": ", 1)[1])
    assert assert_same(b"raise ValueError(f\"Expected KeyError: {x}\") from err\nraise KeyError\n"
                       b"raise ValueError(\"x\") from KeyError\n") == []


class OfflineModelsEnabled(ConnectionError):
    pass


OfflineModelsEnabled.__module__ = "huggingface_hub.errors"


def _offline_config(repo: str) -> None:
    raise OfflineModelsEnabled(
        f"Cannot reach https://huggingface.co/{repo}/resolve/main/config.json: offline mode is enabled.")


@pytest.mark.parametrize("blank", [True, False], ids=("a-blank-between", "glued"))
def test_the_first_line_of_a_raise_over_several_lines_glued_to_the_exception_line(blank):
    """Python shows a call's first line as the frame's source (`raise OfflineModelsEnabled(`): glued to
    the exception line that names that class, the two lines they were."""
    lines = text_of(capture(lambda: _offline_config("mlx-community/parakeet"))).rstrip("\n").split("\n")
    statement = next(line.strip() for line in lines if line.strip().startswith("raise "))
    assert statement == "raise OfflineModelsEnabled("
    (event,) = assert_same(f"{statement}{' ' * blank}{lines[-1]}\n".encode())
    assert (event.root.exception_type, event.root.message) == (
        "huggingface_hub.errors.OfflineModelsEnabled", lines[-1].split(": ", 1)[1])
    assert assert_same(f"raise ValueError({lines[-1]}\n".encode()) == []  # (another class: a line of code)


def test_a_logged_traceback_that_lost_its_line_breaks_keeps_the_loggers_words():
    exc = capture(_load_weights)
    (event,) = _tracebacks([f"ERROR worker failed: {forms.on_one_line(text_of(exc).split(chr(10)))}"])
    assert _places(actual_chain(event.chain)) == _places(expected_chain(exc))
    assert event.context == "ERROR worker failed:"


def test_words_that_mention_a_traceback_are_no_collapsed_one():
    events, *_ = line_path(b"see Traceback (most recent call last): in the file attached\n")
    assert events == []


@pytest.mark.parametrize("strip", [False, True], ids=("indented", "stripped"))
def test_typographic_quotes_around_frame_paths(strip):
    exc = capture(_load_weights)
    (event,) = _tracebacks([AROUND[0], *forms.curly_quoted(text_of(exc).rstrip("\n").split("\n"), strip), AROUND[1]])
    assert _places(actual_chain(event.chain)) == _places(expected_chain(exc))


@pytest.mark.parametrize("headless", [False, True], ids=("whole", "from its first frame"))
def test_a_line_number_made_a_link(headless):
    exc = capture(_load_weights)
    lines = forms.line_number_linked(text_of(exc).rstrip("\n").split("\n"))
    if headless:  # the copy begins at the last link's first frame
        lines = lines[max(i for i, line in enumerate(lines) if line.startswith("Traceback")) + 1:]
    (event,) = _tracebacks([AROUND[0], *lines, AROUND[1]])
    places = _places(expected_chain(exc))
    assert [place[:2] + place[3:] for place in _places(actual_chain(event.chain))] == [
        place[:2] + place[3:] for place in (places[-1:] if headless else places)]  # (headless: no link before it)


@pytest.mark.parametrize("spaces", [1, 3])
def test_stray_spaces_before_a_header(spaces):
    """A header further in than its frames is no traceback indented as a whole: its frames read as they are."""
    exc = capture(_load_weights)
    lines = text_of(exc).rstrip("\n").split("\n")
    (event,) = _tracebacks([AROUND[0], " " * spaces + lines[0], *lines[1:], AROUND[1]])
    assert actual_chain(event.chain) == expected_chain(exc)


def test_an_ipython_header_copied_without_its_type():
    """IPython 7's traceback copied from the word `Traceback` on, a module-level cell named `<cell line: N>`."""
    lines = [line.replace("<ipython-input-2-5b1c0d2e9f3a> in <module>", "/tmp/ipykernel_906/333157.py in <cell line: 2>()")
             for line in forms.IPYTHON7_FROM_DEFINITION[2:]]
    (event,) = _tracebacks(["", "Traceback (most recent call last)", *lines])
    assert (event.root.exception_type, event.root.message) == ("ValueError", "6 shards, expected 8")
    assert [(frame.path, frame.lineno, frame.function) for frame in event.root.frames] == [
        ("/tmp/ipykernel_906/333157.py", 2, "<cell line: 2>"), ("<ipython-input-1-8e7f6a5b4c3d>", 3, "load")]


class Unsupported(Exception):
    """A class of a module of exceptions, named without an Error suffix (as torch._dynamo.exc's)."""


Unsupported.__module__ = "torch._dynamo.exc"


def test_an_exception_modules_class_alone_is_an_error():
    exc = Unsupported("Attempted to call function marked as skipped\n  Explanation: it is skipped.\n"
                      "  Hint: Avoid calling the function `f`.\n  Hint: Please file an issue.")
    lines = traceback.format_exception_only(exc)[0].rstrip("\n").split("\n")
    events = assert_same("\n".join([AROUND[0], *lines, "", AROUND[1], ""]).encode())
    assert [(event.kind, event.root.exception_type, event.root.message) for event in events] == [
        (EventKind.BARE, "torch._dynamo.exc.Unsupported", str(exc))]
    assert assert_same(b"INFO fastapi.routing.Route: /v1/models\n") == []  # (not a module of exceptions)


class OutOfResources(Exception):
    """A class named without an Error suffix under modules in lower case (as Triton's autotuner's was)."""


class BadStatusLine(Exception):
    """A class of a module of exceptions of one kind (as aiohttp's http_exceptions)."""


OutOfResources.__module__ = "triton.runtime.autotuner"
BadStatusLine.__module__ = "aiohttp.http_exceptions"


@pytest.mark.parametrize("exc", [OutOfResources("out of resource: shared memory, Required: 663808"),
                                 BadStatusLine("400, message: Invalid method encountered")], ids=("deep", "http_exceptions"))
def test_a_class_with_no_usual_suffix_under_its_modules_is_an_error(exc):
    """Its module's name tells an exception's class that has no usual suffix: modules of exceptions of one kind,
    or two modules or more in lower case before it, with a message (the class alone there names it)."""
    said = traceback.format_exception_only(exc)[0].rstrip("\n")
    assert _bare_errors(f"{AROUND[0]}\n{said}\n`{said}`\n".encode()) == [
        (EventKind.BARE, f"{type(exc).__module__}.{type(exc).__name__}", str(exc), "")] * 2
    assert assert_same(b"airflow.models.dagbag.DagBag: ERROR    Failed to import: /dags/x.py\n"  # (a logger's name)
                       b"pyarrow.lib.ArrowInvalid\nmultiprocessing.pool.Remote: \n") == []


class _DispatchError(Exception):
    """A private class, its name begun with an underscore (as grpc's _InactiveRpcError)."""


_DispatchError.__module__ = "builtins"  # (printed without its module)


def test_a_paste_wrapped_in_markdown_emphasis():
    """Underscores around the whole line (maybe inside or outside bold), or a span opened at the first frame
    line and closed after the exception line; a private class's own underscore is its name's."""
    exc, said = _inference_failure()
    for emphasised in (f"_{said}_", f"**_{said}_**", f"_**{said}**_"):
        assert _bare_errors(f"{emphasised}\n".encode()) == [(EventKind.BARE, "ConnectionError", str(exc), "")]
    lines = text_of(exc).rstrip("\n").split("\n")[1:]  # (begun at the first frame)
    (event,) = _tracebacks([f"_{lines[0].lstrip()}", *lines[1:-1], f"{lines[-1]}_"])
    assert [frame[:3] for frame in actual_chain(event.chain)[0].frames] == [frame[:3] for frame in expected_chain(exc)[0].frames]
    private = traceback.format_exception_only(_DispatchError("sendmsg: Broken pipe (32)"))[0].rstrip("\n")
    assert _bare_errors(f"{private}\n".encode()) == [(EventKind.BARE, "_DispatchError", "sendmsg: Broken pipe (32)", "")]


class GatedRepoError(Exception):
    pass


def _raise_for_status() -> None:
    raise GatedRepoError("401 Client Error. Access to model meta-llama/Llama-3.1-8B is restricted.")


def _download() -> None:
    _raise_for_status()


def test_a_copys_word_under_a_stack_cut_at_its_raise_statement_is_no_exception_line():
    """A web console's copy of a stack cut after its last frame, its `Copy` button's label below and the error again on
    one flattened line: the statement names the error (GatedRepoError, cut); the word is no class that Python printed.
    A word alone that the statement names (a class of `__main__`, or a builtin one) is the exception line."""
    exc = capture(_download)
    stack = text_of(exc).rstrip("\n").split("\n")[:-1]
    flattened = "Error: DownloadError " + " ".join(line.strip() for line in stack[1:])
    (event,) = _tracebacks([*stack, "", "Copy", flattened])
    assert (event.root.short_type, event.root.message, event.truncated) == ("GatedRepoError", str(exc), True)
    assert event.root.raise_site.function == "_raise_for_status"  # (its message the statement's string)
    named = [*stack[:-1], stack[-1].replace("GatedRepoError(", "Abort(")]
    (event,) = _tracebacks([*named, "Abort"])
    assert (event.root.exception_type, event.truncated) == ("Abort", False)


def test_a_ci_viewers_line_links_on_lines_of_their_own_are_no_lines_of_the_log():
    """A copy from GitHub Actions' log viewer puts each line's number, a link to it, on a line of its own above it
    (`[2622](https://github.com/o/r/actions/runs/8710434864/job/23974354114?pr=208#step:19:2623)`): the traceback
    between them is whole."""
    exc = capture(_load_weights)
    lines = text_of(exc).rstrip("\n").split("\n")
    run = "https://github.com/pytorch/pytorch-canary/actions/runs/8710434864/job/23974354114?pr=208"
    linked = [piece for k, line in enumerate(lines, 2622) for piece in (f"[{k}]({run}#step:19:{k + 1})", line)]
    (event,) = _tracebacks(linked)
    assert _places(actual_chain(event.chain)) == _places(expected_chain(exc))


def test_a_bold_span_a_paste_opened_at_an_exception_line_and_closed_lines_below():
    """Markdown bold opened at the cause's exception line and closed after the chain's separator (`**KeyError: ...`,
    `... following exception:**`): the cause is its error, raised where its frames say."""
    exc = capture(_load_weights)
    lines = text_of(exc).rstrip("\n").split("\n")
    cause = next(k for k, line in enumerate(lines) if line.startswith("KeyError: "))
    separator = lines.index(g.CAUSE_SEPARATOR)
    lines[cause], lines[separator] = f"**{lines[cause]}", f"{lines[separator]}**"
    first, *_ = _tracebacks(["**ERROR: the weights could not be loaded.**", *lines])
    assert _places(actual_chain(first.chain))[0] == _places(expected_chain(exc))[0]


def _import_the_extension() -> None:
    import nixl_ep_cpp_gone  # noqa: F401


def test_bold_a_paste_opened_before_a_workers_prefix_on_the_exception_line():
    """A copy of vLLM's engine core record, begun at a frame, the user's bold opened before the last line's prefix and
    never closed (`**(EngineCore pid=169) ERROR ... ImportError: ...`): the traceback's own error, where it was raised."""
    exc = capture(_import_the_extension)
    lines = fmt.vllm_worker(fmt.vllm_record("EngineCore failed to start.", exc), name="EngineCore")
    cut = lines[lines.index(next(line for line in lines if '  File "' in line)):]  # (begun at the first frame)
    cut[-1] = f"**{cut[-1]}"
    (event,) = _tracebacks(cut)
    assert _places(actual_chain(event.chain)) == _places(expected_chain(exc))


def test_a_loggers_record_a_user_set_in_bold_as_a_whole():
    """KServe's model server logs a model that failed to load on one line, naming the error's class and message; a
    paste set that line in markdown bold, its prefix and all: the same error as from the plain line."""
    exc = capture(lambda: __import__("sklearn_svm_classes_gone"))
    (line,) = fmt.tornado(f"fail to load model sklearn-iris from dir /mnt/models. exception type {type(exc)}, "
                          f"exception msg: {exc}")
    plain = _bare_errors(f"{line}\n".encode())
    assert [error[1:3] for error in plain] == [("ModuleNotFoundError", str(exc))]
    assert _bare_errors(f"**{line}**\n".encode()) == plain


def _submit_after_the_pool_broke() -> None:
    from concurrent.futures.process import BrokenProcessPool

    raise BrokenProcessPool("A child process terminated abruptly, the process pool is not usable anymore")


def test_a_well_known_class_without_the_usual_suffix_named_alone():
    """The class named without its module (a user's copy): concurrent.futures' BrokenProcessPool; as Triton's
    OutOfResources and dask's KilledWorker are."""
    exc = capture(_submit_after_the_pool_broke)
    said = f"{type(exc).__name__}: {exc}"
    assert _bare_errors(f"{said}\n`{said}`\n".encode()) == [(EventKind.BARE, "BrokenProcessPool", str(exc), "")] * 2
    assert assert_same(b"BrokenProcessPoolSize: 4\n") == []


def _raise_if_error(response: dict) -> None:
    raise ConnectionError(f"inference failed: {response['error']}")


def _infer() -> None:
    response = {"error": "model densenet_onnx is not ready"}
    _raise_if_error(response)


def _inference_failure() -> tuple[BaseException, str]:
    """A real error, and its exception line as Python prints it."""
    exc = capture(_infer)
    return exc, traceback.format_exception_only(exc)[0].rstrip("\n")


def _bare_errors(data: bytes) -> list[tuple]:
    """The errors both paths find in `data`, each as (kind, type, message, context)."""
    return [(e.kind, e.root.exception_type, e.root.message, e.context) for e in assert_same(data)]


def test_a_paste_that_doubled_its_line_breaks_and_lost_its_indentation():
    """A source line such as `_raise_if_error(response)` reads like a wrapped type (`Type(Inner)`); after a
    frame line and a blank line it is still that frame's source line."""
    exc = capture(_infer)
    lines = forms.double_spaced(forms.stripped(text_of(exc).rstrip("\n").split("\n")))
    (event,) = _tracebacks([AROUND[0], *lines, AROUND[1]])
    assert actual_chain(event.chain) == expected_chain(exc)


def _create_stream(config):
    return config["model"].create_stream()


def _serve_stream():
    if not _create_stream({"model": None}):
        return


def test_a_paste_that_doubled_its_line_breaks_under_caret_lines():
    """Python 3.11's caret lines under the source lines, each line followed by a blank one."""
    exc = capture(_serve_stream)
    lines = text_of(exc).rstrip("\n").split("\n")
    assert any(line.strip().startswith("^") for line in lines)
    (event,) = _tracebacks([AROUND[0], *forms.double_spaced(lines), AROUND[1]])
    assert actual_chain(event.chain) == expected_chain(exc)


def _import_settings():
    exec(compile("import json\nsettings = json.loads('{')\n", "/srv/webui/modules/settings_loader.py", "exec"), {})


def test_a_console_copy_with_blank_lines_after_frames_and_sources_and_no_indentation():
    """A Windows console's copy pasted on a web page: indentation gone, two blank lines after each frame line and
    one after each source line, the module-level frame's `<module>` taken for an HTML tag (`..., line 2, in`):
    one traceback, whole, its frames in place."""
    exc = capture(_import_settings)
    lines = forms.html_rendered(forms.stripped(text_of(exc).rstrip("\n").split("\n")))
    assert any(line.endswith(", line 2, in") for line in lines)
    spaced = [piece for line in lines for piece in (
        [line, "", ""] if line.startswith("File ") else [line] if g.CARETS.match(line) else [line, ""])]
    (event,) = _tracebacks([AROUND[0], *spaced, AROUND[1]])
    expected = traceback.extract_tb(exc.__traceback__)
    assert [(frame.path, frame.lineno) for frame in event.root.frames] == [(f.filename, f.lineno) for f in expected]
    assert (event.root.exception_type, event.root.message) == ("json.decoder.JSONDecodeError", str(exc)) and not event.truncated


def test_an_exception_line_glued_to_words_in_cjk():
    line = traceback.format_exception_only(RuntimeError("Expected to mark a variable ready only once."))[0].rstrip()
    events = assert_same(f"单卡不报错，双卡运行报如下错误：{line}\n".encode())
    assert [(event.kind, event.root.exception_type, event.root.message, event.context) for event in events] == [
        (EventKind.BARE, "RuntimeError", "Expected to mark a variable ready only once.", "单卡不报错，双卡运行报如下错误")]
    assert assert_same("说明：Note: this is not an error\n".encode()) == []
    events = assert_same(f"import paddlenlp as ppnlp报错: {line}\n".encode())  # an ASCII colon after CJK words
    assert [(event.root.exception_type, event.context) for event in events] == [("RuntimeError", "import paddlenlp as ppnlp报错")]
    assert assert_same("说明: ValueError 是什么\n".encode()) == []
    events = assert_same(f"报错{line}\n".encode())  # nothing between
    assert [(event.root.exception_type, event.context) for event in events] == [("RuntimeError", "报错")]


class RaySystemError(Exception):
    """Ray's own error for a task that could not run (here: its module was missing on the worker)."""


RaySystemError.__module__ = "ray.exceptions"


def _import_on_worker() -> None:
    raise RaySystemError("System error: No module named 'modin'")


@pytest.mark.parametrize("in_pytest", [False, True], ids=("driver", "pytest report"))
def test_rays_wrappers_of_its_own_type_give_the_error_that_failed_the_first_task(in_pytest):
    exc = capture(_import_on_worker)
    lines = forms.ray_failed_dependency(exc)
    if in_pytest:  # a CI run's report: `E` and pytest's indentation on every line
        lines = ["    def test_deploy():", ">       ray.get(refs)", "", *[f"E                       {line}" for line in lines],
                 "", "modin/conftest.py:81: RayTaskError"]
    events = assert_same("\n".join([*lines, ""]).encode())
    (event,) = [event for event in events if event.kind is EventKind.TRACEBACK]
    (expected,) = expected_chain(exc)
    root = event.chain[0]
    assert (root.exception_type, root.message) == ("ray.exceptions.RaySystemError", expected.message)
    assert [(frame.path, frame.lineno, frame.function) for frame in root.frames] == [frame[:3] for frame in expected.frames]
    assert [link.message.split(" (")[0] for link in event.chain[1:]] == ["ray::prepare_partition()", "ray::deploy_ray_func()"]


def _setup_plugins(name: str) -> None:
    raise RuntimeError(f"runtime env plugin {name} not found.")


@pytest.mark.parametrize("on_driver", [False, True], ids=("alone", "under the driver's traceback"))
def test_rays_own_error_naming_its_remote_task_on_the_next_line(on_driver):
    """`RuntimeEnvSetupError: ...` then `ray::Controller.method() (pid=...)` on a line of its own, then the
    remote frames: the remote error is the root cause, Ray's its consequence."""
    exc = capture(lambda: _setup_plugins("fake"))
    (event,) = _tracebacks([AROUND[0], *forms.ray_own_error_over_remote(exc, on_driver), AROUND[1]])
    root, wrapper = actual_chain(event.chain)[:2]
    (expected,) = expected_chain(exc)
    assert (root.exception_type, root.message, root.frames) == (expected.exception_type, expected.message, expected.frames)
    assert (wrapper.exception_type, wrapper.message) == (
        "ray.exceptions.RuntimeEnvSetupError", "Failed to setup runtime environment.")


def test_a_ray_wrapper_without_the_remotes_frames_is_its_inner_error_where_ray_raised_it():
    """`raise value.as_instanceof_cause()` raises an instance of the wrapper and of the remote error's type
    both; with no remote frames below (`<no detail available>`), the inner type is the error, at Ray's frame."""
    driver = text_of(capture(_load_weights)).rstrip("\n").split("\n")
    last = max(i for i, line in enumerate(driver) if line.startswith("Traceback"))
    lines = [*driver[last:-1], "ray.exceptions.RayTaskError(SyntaxError): <no detail available>"]
    (event,) = _tracebacks(lines)
    assert [(link.exception_type, link.message, link.link.value) for link in event.chain] == [
        ("SyntaxError", "<no detail available>", "first"),
        ("ray.exceptions.RayTaskError(SyntaxError)", "<no detail available>", "cause")]
    assert event.chain[0].frames == event.chain[1].frames and event.chain[0].raise_site.function == "_load_weights"


@pytest.mark.parametrize("printed", [repr, json.dumps], ids=("a dict's repr", "JSON in a log line"))
def test_a_traceback_held_in_a_strings_escapes(printed):
    """A client that prints the error body a server sent back: the server's traceback in one string."""
    exc = capture(_load_weights)
    body = printed({"detail": text_of(exc), "status": 500})
    (event,) = _tracebacks([AROUND[0], f"ERROR request failed with body {body}", AROUND[1]])
    assert actual_chain(event.chain) == expected_chain(exc)


def test_a_remote_modules_traceback_in_ansibles_json_with_windows_line_breaks():
    """Ansible reports a module that failed on the host as `fatal: [host]: FAILED! => {...}`, its output in
    `module_stdout`, the traceback's line breaks those of the host's terminal (`\\r\\n`)."""
    exc = capture(_load_weights)
    result = {"changed": False, "module_stderr": "", "module_stdout": text_of(exc).replace("\n", "\r\n"), "msg": "MODULE FAILURE"}
    lines = ["TASK [Install Docker] ****", f"fatal: [10.130.2.203]: FAILED! => {json.dumps(result)}", "PLAY RECAP ****"]
    (event,) = _tracebacks(lines)
    assert actual_chain(event.chain) == expected_chain(exc)


def test_one_escaped_line_break_before_a_frame_is_no_traceback():
    assert assert_same(b'INFO see the docs:\\n  File "README.md" explains it\n') == []


@pytest.mark.parametrize("wrap", ["torchrun", "vllm"])
@pytest.mark.parametrize("share", [-0.1, 0.3, 0.9])  # how far into the first frame line's path the copy begins
def test_a_paste_begun_inside_a_prefixed_frame_line_keeps_its_traceback_whole(share, wrap):
    """Copied from the middle of `[rank0]:   File "/srv/...` (or at its word File): the first line lost its
    prefix with its start. A prefix that begins a record on each line (vLLM's logger's behind its engine's) begins
    none on the second line: the record the first began goes on."""
    exc = capture(_load_weights)
    lines = text_of(exc).rstrip("\n").split("\n")
    if wrap == "torchrun":
        lines = [f"[rank0]: {line}" for line in lines]
    else:
        lines = fmt.vllm_worker(fmt.vllm_record("EngineCore failed to start.", exc), name="EngineCore_DP0", pid=418)
    last = max(i for i, line in enumerate(lines) if "Traceback" in line)
    first = lines[last + 1]
    path = first.index('File "') + len('File "')
    start = path + int(share * (first.index('"', path) - path)) if share >= 0 else first.index("File")
    (event,) = _tracebacks([first[start:], *lines[last + 2:]])
    (expected,) = _places(expected_chain(exc)[-1:])
    assert (event.rank, event.root.exception_type, event.root.message) == ("rank0" if wrap == "torchrun" else "pid=418",
                                                                            *expected[:2])
    assert [frame[1:] for frame in expected[3]] == [(f.lineno, f.function) for f in event.root.frames]


def _pip_output(lines: list[str]) -> list[str]:
    """pip (22 and later) showing a build backend's failure: its output indented six spaces under the
    failing step, closed by `[end of output]`, then pip's note."""
    return ["  error: subprocess-exited-with-error", "  ", "  × python setup.py bdist_wheel did not run successfully.",
            "  │ exit code: 1", f"  ╰─> [{len(lines)} lines of output]", *(f"      {line}" for line in lines),
            "      [end of output]", "  ", "  note: This error originates from a subprocess, and is likely not a problem with pip."]


@pytest.mark.parametrize("headless", [False, True], ids=("whole", "from its last frame"))
def test_a_build_backends_traceback_in_pips_output(headless):
    exc = capture(_load_weights)
    lines = text_of(exc).rstrip("\n").split("\n")
    if headless:  # a paste begun at the last frame
        lines = lines[max(i for i, line in enumerate(lines) if line.lstrip().startswith("File ")):]
    (event,) = _tracebacks(_pip_output(lines))
    (*_, expected) = expected_chain(exc)
    last = event.chain[-1]  # (the message ends at pip's `[end of output]`)
    assert (last.exception_type, last.message) == (expected.exception_type, expected.message)
    assert last.raise_site.lineno == expected.frames[-1][1]


def test_a_traceback_held_in_a_string_from_its_first_frame():
    """A paste begun at a frame of a traceback held in a string's escapes (a task's failure payload): the
    string's closing quote after its last line break ends it."""
    exc = capture(_load_weights)
    body = repr({"exc": text_of(exc), "args": "[9]"})
    start = body.index("  File", body.index("direct cause"))  # the last link's first frame
    (event,) = _tracebacks([AROUND[0], body[start:], AROUND[1]])
    (*_, expected) = expected_chain(exc)
    assert (event.root.exception_type, event.root.message) == (expected.exception_type, expected.message)


@pytest.mark.parametrize(("words", "colon"), [("3. the server error log is", glue) for glue in (":", "\uff1a", ": ", "```")]
                         + [("运行时一直出现", "")])
def test_a_frame_line_glued_to_words_by_a_colon(words, colon):
    """A paste begun at the innermost frame, in the middle of a sentence (or a code fence opened there; or
    glued to CJK words without a colon): the words are its context."""
    exc = capture(_infer)
    lines = text_of(exc).rstrip("\n").split("\n")
    innermost = max(i for i, line in enumerate(lines) if line.startswith("  File "))
    closing = "```" if colon == "```" else ""
    (event,) = _tracebacks([AROUND[0], f"{words}{colon}{lines[innermost].lstrip()}",
                            *lines[innermost + 1:-1], lines[-1] + closing, AROUND[1]])
    (expected,) = expected_chain(exc)
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.message, actual.frames) == (
        expected.exception_type, expected.message, expected.frames[-1:])
    assert event.context == words
    assert assert_same(b"see File \"x.py\", line 3, in f\nthe log:File x.py line 3\n") == []  # (no colon; no frame)


def test_a_traceback_indented_as_a_whole_copied_from_its_last_frame_line_without_its_blanks():
    """pip's output of a failed build indents the child's traceback by four; a copy begun at its last frame line lost
    that line's blanks: the exception line, less indented than the source line above it, is still the error's, and
    pip's own line after it, further out, is no line of its message."""
    exc = capture(_infer)
    lines = ["    " + line for line in text_of(exc).rstrip("\n").split("\n")]
    innermost = max(i for i, line in enumerate(lines) if line.lstrip().startswith("File "))
    (event,) = _tracebacks([lines[innermost].lstrip(), *lines[innermost + 1:],
                            "ERROR: Command errored out with exit status 1: python setup.py egg_info", AROUND[1]])
    (expected,) = expected_chain(exc)
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.frames, actual.message) == (
        expected.exception_type, expected.frames[-1:], expected.message)  # (pip's line, further out, is none of it)


@pytest.mark.parametrize("mark", ["# ", "#"])
def test_a_traceback_pasted_into_code_as_comments(mark):
    """A traceback kept in a script as comments, every line behind `# ` (an editor's toggle) or `#` alone: read as the
    traceback it is."""
    exc = capture(_infer)
    lines = text_of(exc).rstrip("\n").split("\n")
    (event,) = _tracebacks(["import torch", "", *(mark + line for line in lines), "model = torch.load(path)"])
    assert actual_chain(event.chain) == expected_chain(exc)


def _check_cuda_version() -> None:
    raise RuntimeError("\nThe detected CUDA version (12.2) mismatches the version that was used to compile\n"
                       "PyTorch (11.7). Please make sure to use the same CUDA versions.\n")


def test_a_message_begun_on_the_next_line_in_a_traceback_indented_as_a_whole_copied_from_its_last_frame():
    """pip 23's `╰─> [N lines of output]` indents the child's lines by six; the error's message begins with a line break
    (`RuntimeError: ` ends its line, a copy dropped the blank), its lines indented as the exception line is:
    the message is read whole, without pip's indentation."""
    exc = capture(_check_cuda_version)
    lines = ["      " + line for line in text_of(exc).split("\n")[:-1]]  # (the message's last line break: a blank line)
    innermost = max(i for i, line in enumerate(lines) if line.lstrip().startswith("File "))
    copied = [lines[innermost].lstrip(), *(line.removesuffix(": ") + ":" if line.endswith(": ") else line
                                           for line in lines[innermost + 1:]),
              "      [end of output]", "", "  note: This error originates from a subprocess, and is likely not a problem with pip."]
    (event,) = _tracebacks(copied)
    (expected,) = expected_chain(exc)
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.frames) == (expected.exception_type, expected.frames[-1:])
    assert actual.message.strip() == expected.message.strip()


@pytest.mark.parametrize("quote", ["'", '"'])
@pytest.mark.parametrize("glue", [":{quote}{frame}", " {quote}  {frame}"], ids=("colon", "blank"))
def test_a_frame_line_glued_to_words_by_a_colon_and_the_quote_a_user_opened(quote, glue):
    """`i got an error:'File "x.py", ...` (or `i got an error "  File "x.py", ...`, the quote alone after a blank,
    the frame's indentation kept), the quote closed after the exception line: the frame is read, its place the
    raise site."""
    exc = capture(_infer)
    lines = text_of(exc).rstrip("\n").split("\n")
    innermost = max(i for i, line in enumerate(lines) if line.startswith("  File "))
    glued = "when i run the worker, i got an error" + glue.format(quote=quote, frame=lines[innermost].lstrip())
    (event,) = _tracebacks([AROUND[0], glued, *lines[innermost + 1:-1], lines[-1] + quote, AROUND[1]])
    (expected,) = expected_chain(exc)
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.frames) == (expected.exception_type, expected.frames[-1:])
    assert actual.message.startswith(expected.message) and event.context == "when i run the worker, i got an error"


@pytest.mark.parametrize("header", [False, True], ids=("from its first frame", "with its header"))
@pytest.mark.parametrize("source", [6, 2], ids=("source further in", "source at the frames' indentation"))
def test_an_exception_line_indented_as_its_frames(source, header):
    """A traceback a description re-indented by hand: its exception line as far in as its frames, not at
    the line's start (where it would close the traceback) nor under a frame (where it would be source)."""
    exc = capture(_load_weights)
    last = text_of(exc).rstrip("\n").split("\n\n")[-1].split("\n")  # (the outermost link's traceback)
    (event,) = _tracebacks([AROUND[0], *last[:1] * header, *forms.reindented(last, source), AROUND[1]])
    assert event.truncated is not header  # (with its header it is whole)
    (actual,) = actual_chain(event.chain)
    expected = expected_chain(exc)[-1]
    assert (actual.exception_type, actual.message, actual.frames) == (
        expected.exception_type, expected.message, expected.frames)


@pytest.mark.parametrize("indent", [4, 8])
def test_a_traceback_indented_as_a_whole_its_first_frame_one_blank_short(indent):
    """A markdown code block: every line indented, the first frame line one blank out of line. The
    exception line at the header's indentation is still the traceback's."""
    exc = capture(_load_weights)
    last = text_of(exc).rstrip("\n").split("\n\n")[-1].split("\n")  # (the outermost link's traceback)
    (event,) = _tracebacks([AROUND[0], *forms.misaligned(last, indent), AROUND[1]])
    (actual,) = actual_chain(event.chain)
    expected = expected_chain(exc)[-1]
    assert (actual.exception_type, actual.message, actual.frames, event.truncated) == (
        expected.exception_type, expected.message, expected.frames, False)


@pytest.mark.parametrize("mark", ["_", "*", "**"])
def test_a_frame_line_behind_markdown_emphasis(mark):
    """A paste of pip's output of a build in markdown italics: the emphasis glued to the first frame line."""
    exc = capture(_load_weights)
    last = text_of(exc).rstrip("\n").split("\n\n")[-1].split("\n")[1:]  # (from its first frame: pip's tail)
    lines = [f"      {line}" for line in last]
    lines[0] = lines[0].replace("File", f"{mark}File", 1)
    (event,) = _tracebacks(["  Getting requirements to build wheel ... error", *lines, "      [end of output]", ""])
    (actual,) = actual_chain(event.chain)
    expected = expected_chain(exc)[-1]
    assert (actual.exception_type, actual.message, actual.frames) == (expected.exception_type, expected.message, expected.frames)


class ChefBuildError(Exception):
    pass


def _build_backend(backend: str) -> None:
    problems = [f"Backend '{backend}' is not available.", "Note: the build backend could not be imported."]
    raise ChefBuildError("\n\n".join(problems))


@pytest.mark.parametrize("utf8", [True, False], ids=("utf-8", "ascii"))
def test_a_cleo_apps_report_of_an_error(utf8):
    """Poetry's report (Cleo's): the class name, its message and where it was raised; no traceback."""
    exc = capture(lambda: _build_backend("setuptools.build_meta:__legacy__"))
    lines = ["  - Installing proxy-tools (0.1.0): Failed", "", "PEP517 build of a dependency failed",
             *forms.cleo_report(exc, utf8), "", "Note: This error originates from the build backend."]
    (event,) = _tracebacks(lines)
    (expected,) = expected_chain(exc)
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.message) == ("ChefBuildError", str(exc))
    assert actual.frames == expected.frames[-1:]  # (the innermost frame, its source line too)
    # a class name alone over a blank and indented words, with no place after them, stays alone
    events = assert_same(b"  ChefBuildError\n\n  Backend is not available.\n  ValueError: other\n")
    assert [(e.root.exception_type, e.root.message) for e in events] == [("ChefBuildError", ""), ("ValueError", "other")]


class SolveFailure(Exception):
    """Poetry's resolver's error (its name ends in neither Error nor Exception)."""


def _resolve_conflict() -> None:
    raise SolveFailure("Because my-api depends on flask-restful-swagger-2 (^2-0.35) which doesn't match any versions, "
                       "version solving failed.")


def test_a_cleo_report_copied_without_its_blank_lines():
    """Poetry's report with the blank lines between its name, message and place lost in a copy: the class's name
    alone, then a line indented as the report's message, is read as such a report (its place confirms it)."""
    exc = capture(_resolve_conflict)
    lines = [line for line in forms.cleo_report(exc) if line.strip()]
    (event,) = _tracebacks(["Resolving dependencies...", *lines, "The following error occurred when trying to handle this error:"])
    (expected,) = expected_chain(exc)
    assert (event.root.exception_type, event.root.message) == ("SolveFailure", str(exc))
    assert actual_chain(event.chain)[0].frames == expected.frames[-1:]
    # a class's name alone over an indented frame line is no such report
    assert [e.root.exception_type for e in assert_same(b"  SolveFailure\n  File \"x.py\", line 3, in f\n")] == ["SolveFailure"]


def test_a_cleo_report_in_a_docker_builds_plain_progress_among_another_steps_lines():
    """BuildKit's plain output puts the step and its seconds in front of each line (`#16 3.943 `), and steps run at
    once interleave: Poetry's report in step 16 is read whole, another step's lines between its lines."""
    exc = capture(lambda: _build_backend("setuptools.build_meta:__legacy__"))
    report = fmt.buildkit("\n".join(["  • Installing pyparsing (3.0.9)", "", *forms.cleo_report(exc)]).split("\n"))
    other = fmt.buildkit([f"Downloading wheel {k}" for k in range(len(report))], step=12)
    lines = [line for pair in zip(report, other) for line in pair]
    (event,) = assert_same("\n".join([" => ERROR [builder 4/4] RUN poetry install", *lines, ""]).encode())
    assert (event.root.exception_type, event.root.message) == ("ChefBuildError", str(exc))
    assert event.root.frames[-1].function == "_build_backend"


def _backend_subprocess_failed() -> None:
    backend = capture(lambda: os.environ["PEP517_BUILD_BACKEND_UNSET"])  # the backend's own failure, for real
    output = traceback.format_exception(backend)
    problems = ["Backend subprocess exited when trying to invoke get_requires_for_build_wheel", "".join(output).rstrip("\n")]
    raise ChefBuildError("\n\n".join(problems))


def test_a_cleo_report_whose_message_quotes_the_traceback_that_failed_first():
    """Poetry's ChefBuildError quotes its build backend's output, a traceback: that error is the chain's root, the
    report's error its consequence."""
    exc = capture(_backend_subprocess_failed)
    (event,) = _tracebacks(["  - Installing wget (3.2): Failed", *forms.cleo_report(exc), ""])
    assert [(link.exception_type, link.link) for link in event.chain] == [("KeyError", Link.FIRST),
                                                                          ("ChefBuildError", Link.CAUSE)]
    assert event.root.message == "'PEP517_BUILD_BACKEND_UNSET'" and event.root.raise_site.function == "__getitem__"
    assert event.chain[-1].message == str(exc)


@pytest.mark.parametrize("spaced", [False, True], ids=("ipython", "spyder's blank lines"))
def test_ipythons_plain_mode(spaced):
    """CPython's layout with IPython's frame lines (`Cell In[1], line 3 in load`, `File path:346 in loads`)."""
    lines = forms.ipython_plain_traceback()
    if spaced:  # Spyder's console: a blank line after the header and after each frame's source line
        lines = [lines[0], "", *(piece for line in lines[1:-1] for piece in ([line, ""] if line.startswith("    ") else [line])),
                 lines[-1]]
    (event,) = _tracebacks([AROUND[0], *lines, AROUND[1]])
    (link,) = event.chain
    assert link.exception_type == "JSONDecodeError" and link.message.startswith("Expecting property name")
    assert [(frame.path.rsplit("/", 1)[-1], frame.function, frame.code) for frame in link.frames][:2] == [
        ("Cell In[2]", "<module>", "load('{')"), ("Cell In[1]", "load", "return json.loads(s)")]
    assert [frame.path.rsplit("/", 1)[-1] for frame in link.frames[2:]] == ["__init__.py", "decoder.py", *(
        ["decoder.py"] if len(link.frames) == 5 else [])]
    assert link.frames[-1].function == "raw_decode" and link.frames[-1].lineno > 0


@pytest.mark.parametrize("indent", ["  ", "   ", "\t"])
def test_an_exception_line_quoted_alone_and_indented(indent):
    """A description quotes the error alone, indented (maybe under the `raise` that raised it)."""
    exc, said = _inference_failure()
    events = assert_same("\n".join([AROUND[0], f"{indent}...", f"{indent}raise ConnectionError(message)",
                                    f"{indent}{said}", AROUND[1], ""]).encode())
    assert [(e.kind, e.root.exception_type, e.root.message, e.span.line_start) for e in events] == [
        (EventKind.BARE, "ConnectionError", str(exc), 4)]
    assert assert_same(f"{indent}Error: not a Python exception\n{indent}retrying after ValueError: x\n".encode()) == []


@pytest.mark.parametrize("closed", ["on its line", "on the next line"])
@pytest.mark.parametrize(("quote", "mark"), [('"', '"'), (" '", "'"), ("[", "]"), ("\u201c", "   \u201d"), ('" ', ' "')],
                         ids=("double", "single after a blank", "square brackets", "curly", "blanks inside"))
def test_an_exception_line_in_quotes(closed, quote, mark):
    """The error quoted whole, its message maybe running on to the next line, where the quote closes."""
    exc, said = _inference_failure()
    quoted = [f"{quote}{said}{mark}"] if closed == "on its line" else [f"{quote}{said}", f"Check the server.{mark}"]
    events = assert_same("\n".join([AROUND[0], *quoted, AROUND[1], ""]).encode())
    assert [(e.kind, e.root.exception_type, e.root.message, e.span.line_start) for e in events] == [
        (EventKind.BARE, "ConnectionError", str(exc), 2)]
    assert assert_same(b'"see ValueError: x"\n') == []  # (a member holding one is an error's body: test_json_shapes)


@pytest.mark.parametrize("module", ["absent_package_7f3a.serve.deploy", "absent_package_7f3a.py"])
def test_runpys_report_that_python_dash_m_found_no_module(module):
    """`python -m pkg.mod` with `pkg` missing: runpy names the error it met in parentheses (a real run)."""
    said = subprocess.run([sys.executable, "-m", module], capture_output=True, text=True).stderr.rstrip("\n")
    events = assert_same("\n".join([f"$ python -m {module}", said, ""]).encode())
    assert [(e.kind, e.root.exception_type, e.root.message, e.span.line_start) for e in events] == [
        (EventKind.BARE, "ModuleNotFoundError", "No module named 'absent_package_7f3a'", 2)]
    assert events[0].context.endswith(f"Error while finding module specification for '{module}'")


def test_a_notebooks_copy_begun_at_a_library_frame_without_the_word_file():
    """A notebook viewer shows a frame's place as a link; its copy may keep only the path
    (`/usr/lib/x.py:41, in check(n)`), the numbered context and `---->` marker below it."""
    lines = forms.ipython_library_frame()
    at = next(i for i, line in enumerate(lines) if line.startswith("File /"))
    (event,) = _tracebacks([AROUND[0], lines[at][len("File "):], *lines[at + 1:], AROUND[1]])
    (link,) = event.chain
    assert (link.exception_type, link.message) == ("ValueError", "6 shards, expected 8")
    assert [(frame.path, frame.lineno, frame.function) for frame in link.frames] == [
        ("/usr/lib/python3.11/loader/shards.py", 41, "check")]
    assert assert_same(b"see /usr/lib/x.py:41, in the docs\nthe run at x.py:41, in check(n) was slow\n") == []


def test_colour_codes_a_viewer_showed_in_caret_notation():
    """A CI page's copy shows ESC as `^[` (`^[[31mERROR^[[0m`): the codes go, as real ones do; a regex's
    `^[[:alpha:]]` in a message is no colour code."""
    exc, said = _inference_failure()
    lines = fmt.vllm_worker([f"ERROR 01-26 09:25:37 [core.py:935] {said}"], name="EngineCore_DP0", pid=738)
    coloured = "> [2026-01-26T17:25:37Z] " + lines[0].replace("(EngineCore_DP0 pid=738)", "^[[0;36m(EngineCore_DP0 pid=738)^[[0;0m").replace(
        "ERROR ", "^[[31mERROR^[[0m ", 1)
    (event,) = assert_same(f"{coloured}\n".encode())
    assert (event.root.exception_type, event.root.message, event.rank) == ("ConnectionError", str(exc), "pid=738")
    (event,) = assert_same(b"ValueError: pattern ^[[:alpha:]] is not supported\n")
    assert event.root.message == "pattern ^[[:alpha:]] is not supported"


def test_a_record_quoted_whole_as_one_code_span():
    """`` `ERROR 05-16 10:53:31 [core.py:390] AttributeError: ...` ``: the span is the user's, the record the log's."""
    exc, said = _inference_failure()
    (event,) = assert_same(f"`ERROR 05-16 10:53:31 [core.py:390] {said}`\n".encode())
    assert (event.kind, event.root.exception_type, event.root.message) == (EventKind.BARE, "ConnectionError", str(exc))


class nixlNotFoundError(Exception):  # (named as the extension module's class is)
    """An extension's exception class named in lower case (nixl's bindings)."""


nixlNotFoundError.__module__ = "nixl._bindings"


def test_an_extensions_class_named_in_lower_case_alone_is_an_error():
    exc = nixlNotFoundError("NIXL_ERR_NOT_FOUND")
    said = traceback.format_exception_only(exc)[0].rstrip("\n")
    assert said == "nixl._bindings.nixlNotFoundError: NIXL_ERR_NOT_FOUND"
    (event,) = assert_same(f"{AROUND[0]}\n{said}\n{AROUND[1]}\n".encode())
    assert (event.kind, event.root.exception_type, event.root.message) == (
        EventKind.BARE, "nixl._bindings.nixlNotFoundError", "NIXL_ERR_NOT_FOUND")
    assert assert_same(b"nixlNotFoundError: NIXL_ERR_NOT_FOUND\nconsole.error: x\n") == []  # (no module: no class)


@pytest.mark.parametrize("lead", ["", " "])
def test_a_paste_begun_just_after_a_frames_word_file(lead):
    """` "/x/y.py", line 3, in f`: the copy began after `File`, the frame's quote kept."""
    exc = capture(_infer)
    lines = text_of(exc).rstrip("\n").split("\n")
    last = max(i for i, line in enumerate(lines) if line.startswith("  File "))
    (event,) = assert_same("\n".join([lead + lines[last][len("  File "):], *lines[last + 1:]]).encode())
    frame = exc.__traceback__.tb_next.tb_next  # where it was raised
    assert event.truncated and event.root.message == str(exc)
    assert [(f.lineno, f.function) for f in event.root.frames] == [(frame.tb_lineno, frame.tb_frame.f_code.co_name)]


def _open_variable(name):
    return {"tmin": 0}[name]


@pytest.mark.parametrize("raised", [lambda: _open_variable("tmax"), _infer], ids=("KeyError", "ConnectionError"))
def test_a_message_that_is_another_exceptions_repr(raised):
    """dask's worker logs a failed task's exception as `Exception: %r` of its repr (distributed's
    `Compute Failed` record, formatted here by logging): that exception is the error."""
    exc = capture(raised)
    record = logging.LogRecord("distributed.worker", logging.WARNING, "worker.py", 3370,
                               "Compute Failed\nKey:       ('open_dataset-tmax', 0)\nFunction:  getter\nargs:      ()\n"
                               "kwargs:    {}\nException: %r\n", (repr(exc),), None)
    lines = logging.Formatter("%(asctime)s - %(name)s - %(levelname)s - %(message)s").format(record).split("\n")
    (event,) = assert_same("\n".join(lines).encode())
    assert [(link.exception_type, link.message) for link in event.chain] == [
        (type(exc).__name__, str(exc)), ("Exception", repr(repr(exc)))]
    assert [e.root.exception_type for e in assert_same(b"Exception: f(x)\nValueError: KeyError\n")] == ["Exception",
                                                                                                        "ValueError"]
    # (an older worker's: the repr as Python before 3.7 wrote it, a comma after a lone argument, not quoted again)
    (event,) = assert_same(f"{lines[0]}\nException: {type(exc).__name__}({exc.args[0]!r},)\n".encode())
    assert (event.root.exception_type, event.root.message) == (type(exc).__name__, str(exc))


def _launch_graph():
    raise RuntimeError("CUDA error: an illegal memory access was encountered")


def _capture_graphs():
    try:
        _launch_graph()
    except RuntimeError as err:
        raise Exception(f"Capture cuda graph failed: {type(err).__name__}: {err}") from None


def test_a_wrappers_message_that_quotes_the_error_after_its_words():
    """`Exception: Capture cuda graph failed: RuntimeError: ...`: the quoted error is the root cause, raised
    in the frames the two share; the wrapper follows from it."""
    exc = capture(_capture_graphs)
    (event,) = _tracebacks(text_of(exc).rstrip("\n").split("\n"))
    assert [(link.exception_type, link.message, link.link) for link in event.chain] == [
        ("RuntimeError", "CUDA error: an illegal memory access was encountered", Link.FIRST),
        ("Exception", str(exc), Link.CAUSE)]
    assert event.chain[0].frames == event.chain[1].frames and event.chain[1].frames[-1].function == "_capture_graphs"
    plain = assert_same(b"ValueError: bad value: 3\nRuntimeError: expected ValueError: got 3\nRuntimeError: load: KeyError: 'w'\n")
    assert [[link.exception_type for link in e.chain] for e in plain] == [["ValueError"], ["RuntimeError"],
                                                                          ["KeyError", "RuntimeError"]]


class InductorError(RuntimeError):
    pass


InductorError.__module__ = "torch._inductor.exc"


def _compile_kernel():
    try:
        import triton.language.extra.ascend.libdevice  # noqa: F401 - missing here, as on the machine of the report
    except ModuleNotFoundError as err:
        raise InductorError(f"{type(err).__qualname__}: {err}") from None  # (as torch wraps a compile error)


def test_a_wrappers_message_that_is_the_errors_own_line():
    """torch's `InductorError: ModuleNotFoundError: No module named ...`: the error the message is is the
    root cause. A message that names its own class first (litellm's) is only that error."""
    exc = capture(_compile_kernel)
    (event,) = _tracebacks(text_of(exc).rstrip("\n").split("\n"))
    assert [(link.exception_type, link.link) for link in event.chain] == [
        ("ModuleNotFoundError", Link.FIRST), ("torch._inductor.exc.InductorError", Link.CAUSE)]
    assert event.chain[0].message.startswith("No module named 'triton")
    (own,) = assert_same(b"litellm.APIConnectionError: litellm.APIConnectionError: OllamaException - refused\n")
    assert [link.exception_type for link in own.chain] == ["litellm.APIConnectionError"]


class ResourceExhaustedError(Exception):  # (named as TensorFlow's is)
    pass


ResourceExhaustedError.__module__ = "tensorflow.python.framework.errors_impl"


def _allocate():
    raise ResourceExhaustedError("OOM when allocating tensor with shape[100,4096,32]")


def test_tensorflow_1s_summary_of_an_error_seen_above():
    """TensorFlow 1's session ends an op's error with `ResourceExhaustedError (see above for traceback): ...`:
    alone, that line is the error; after the traceback it sums up, it is that error told again."""
    exc = capture(_allocate)
    summary = f"{type(exc).__name__} (see above for traceback): {exc}"
    (alone,) = assert_same(f"{AROUND[0]}\n{summary}\n{AROUND[1]}\n".encode())
    assert (alone.root.exception_type, alone.root.message) == ("ResourceExhaustedError", str(exc))
    events = assert_same("\n".join([*text_of(exc).rstrip("\n").split("\n"), "", summary, ""]).encode())
    assert events[0].root.exception_type == "tensorflow.python.framework.errors_impl.ResourceExhaustedError"
    assert assert_same(b"x (see above for traceback): y\n") == []


def _rpc():
    raise _InactiveRpcError("socket closed")


def _assert_backend(backend=None):
    if backend is None:  # (an `assert` here pytest would rewrite: its message would grow)
        raise AssertionError("backend not set")


def _assert_bare():
    raise AssertionError


@pytest.mark.parametrize("copies", [2, 3])
def test_an_exception_line_ranks_printed_in_step(copies):
    """Ranks that print the same uncaught error at once, their writes alternating piece by piece:
    `AssertionErrorAssertionError: : msgmsg` is the line each printed, bare or at its traceback's end."""
    for exc in (capture(_infer), capture(_rpc), capture(_assert_backend), capture(_assert_bare)):
        said = traceback.format_exception_only(exc)[0].rstrip("\n")
        lines = text_of(exc).rstrip("\n").split("\n")
        (bare,) = assert_same(f"{AROUND[0]}\n{forms.printed_in_step(exc, copies)}\n{AROUND[1]}\n".encode())
        (whole,) = _tracebacks([*lines[:-1], forms.printed_in_step(exc, copies)])
        for event in (bare, whole):
            assert (event.root.exception_type, event.root.message) == (said.partition(": ")[0], said.partition(": ")[2])
    assert assert_same(b"ValueErrorKeyError: : ab\n") != []  # (no copies: read as it stands)


def _collate():
    raise KeyError("input_ids_j")


def test_an_exception_line_ranks_printed_in_step_whose_message_only_one_wrote_before_the_line_ended():
    """`KeyErrorKeyError: : 'input_ids_j'`: two ranks' class names and colons in step, the message once (the other's
    after the line break): the line each printed."""
    exc = capture(_collate)
    line = forms.printed_in_step(exc)
    line = line[:len(line) - len(str(exc))]  # (the second copy of the message cut)
    (event,) = assert_same(f"{AROUND[0]}\n{line}\n{AROUND[1]}\n".encode())
    assert (event.root.exception_type, event.root.message) == ("KeyError", "'input_ids_j'")


class _InactiveRpcError(Exception):  # (named as grpc's is)
    """A private exception class (grpc's channel raises one)."""


_InactiveRpcError.__module__ = "grpc._channel"


def test_a_private_class_alone_is_an_error():
    exc = _InactiveRpcError('<_InactiveRpcError of RPC that terminated with:\n\tstatus = StatusCode.UNAVAILABLE\n>')
    said = traceback.format_exception_only(exc)[0].split("\n")[0]
    assert said.startswith("grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC")
    for line in (said, said[len("grpc._channel."):]):
        (event,) = assert_same(f"{AROUND[0]}\n{line}\n{AROUND[1]}\n".encode())
        assert (event.kind, event.root.message) == (EventKind.BARE, said.split(": ", 1)[1])
        assert event.root.exception_type == line.split(":")[0]


@pytest.mark.parametrize("which", ["innermost", "every"])
def test_a_source_line_that_alone_lost_its_indentation(which):
    """The frame lines kept their indentation, their source lines did not (a paste, an editor's reflow)."""
    exc = capture(_infer)
    lines = text_of(exc).rstrip("\n").split("\n")
    sources = [i for i, line in enumerate(lines) if line.startswith("    ") and lines[i - 1].startswith("  File ")]
    for i in sources[-1:] if which == "innermost" else sources:
        lines[i] = lines[i].strip()
    (event,) = _tracebacks([AROUND[0], *lines, AROUND[1]])
    assert actual_chain(event.chain) == expected_chain(exc)


@pytest.mark.parametrize("cut", [", in ", ", in", ", "], ids=("before the function", "after in", "after the number"))
@pytest.mark.parametrize("quoted", [False, True], ids=("plain", "quoted"))
def test_a_copy_begun_at_a_frame_line_wrapped_in_its_place(cut, quoted):
    """A page wrapped the innermost frame line before its function (or its `in f`), and the copy begins there."""
    exc = capture(_infer)
    lines = text_of(exc).rstrip("\n").split("\n")
    at = max(i for i, line in enumerate(lines) if line.startswith("  File "))
    head, rest = lines[at].rsplit(cut, 1)
    copy = [head + cut.rstrip(" "), rest.lstrip(), *lines[at + 1:]]  # (the wrap took the space it broke at)
    if quoted:  # a markdown quote of it
        copy = [f"> {line}" for line in copy]
    (event,) = _tracebacks([AROUND[0], *copy, AROUND[1]])
    (expected,) = expected_chain(exc)[-1:]
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.message, actual.frames) == (expected.exception_type, expected.message, expected.frames[-1:])


def test_streamlits_error_box_copied_from_the_page():
    """The exception line first, then `Traceback:` and the frames (oldest first, flush left)."""
    exc = capture(_infer)
    lines = forms.streamlit_error_box(exc)
    (event,) = _tracebacks([AROUND[0], *lines, "", AROUND[1]])
    (expected,) = expected_chain(exc)
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.message, actual.frames) == (expected.exception_type, expected.message, expected.frames)
    assert not event.truncated
    (indented,) = _tracebacks([AROUND[0], lines[0], f"  {lines[1]}", *lines[2:], "", AROUND[1]])  # (a paste's blanks)
    assert actual_chain(indented.chain) == actual_chain(event.chain)
    (spaced,) = _tracebacks([AROUND[0], *lines[:2], "", *lines[2:], "", AROUND[1]])  # (a blank line above the frames)
    assert actual_chain(spaced.chain) == actual_chain(event.chain)
    events = assert_same(f"{lines[0]}\nTraceback: see the log above\nINFO next\n".encode())  # (no box: the line alone)
    assert [(e.kind, e.span.line_start, e.span.line_end) for e in events] == [(EventKind.BARE, 1, 1)]


def _infer_kept() -> str:
    responses: dict[str, dict[str, str]] = {"densenet_onnx": {}}
    return responses["densenet_onnx"]["error"]


def test_streamlit_clouds_error_box_every_line_flush_left():
    """Streamlit Cloud's box (its message redacted, its type kept) as a copy gives it: frames, their source lines
    and the carets under them all flush left."""
    exc = capture(_infer_kept)
    shown = [line.strip() for frame in traceback.format_tb(exc.__traceback__) for line in frame.rstrip("\n").split("\n")]
    assert any(set(line) <= set("^~") for line in shown)  # (3.11's carets under a source line)
    redacted = f"{type(exc).__name__}: This app has encountered an error. The original error message is redacted."
    (event,) = _tracebacks([AROUND[0], redacted, "Traceback:", *shown, "", AROUND[1]])
    (expected,) = expected_chain(exc)
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.frames) == (expected.exception_type, expected.frames)
    assert not event.truncated
    assert_same("\n".join([redacted, "Traceback:", *shown]).encode())


@pytest.mark.parametrize("quote", ["`{}`", "\u201d{}\u201c", "\u201c{}\u201d", " **{}**"],
                         ids=("code span", "curly quotes reversed", "curly quotes", "bold"))
def test_an_exception_line_quoted_in_a_sentence(quote):
    """The error quoted in the middle of the user's sentence: the words before it are its context."""
    exc, said = _inference_failure()
    assert _bare_errors(f"设置--tp 2后报错{quote.format(said)}，但是单卡正常\n".encode()) == [
        (EventKind.BARE, "ConnectionError", str(exc), "设置--tp 2后报错")]
    assert assert_same(f"see {quote.format('Note: not an error')} and `x: y`\n".encode()) == []
    assert assert_same(f"it raises a {quote.format('KeyError')} here\n".encode()) == []  # (a class named, no error)


@pytest.mark.parametrize("label", ["7b-model", "[rankx]", "actual error", "Full traceback", "An unexpected error has occurred",
                                   "Error when loading model", "Error in stream_response", "UNAVAILABLE: Internal"])
def test_an_exception_line_behind_a_one_word_label(label):
    """A word (bracketed or not), or a few words naming the error or beginning with Error, in front of the
    exception line; or a status and its detail (Triton's model status)."""
    exc, said = _inference_failure()
    assert _bare_errors(f"python -m vllm.entrypoints.openai.api_server\n{label}: {said}\n".encode()) == [
        (EventKind.BARE, "ConnectionError", str(exc), label)]
    assert assert_same(f"INFO: {said}\nINFO: retrying after {said}\nNote: {said}\ntwo words: {said}\n"
                       f"[INFO]: {said}\nthree more words error: {said}\n".encode()) == []
    assert assert_same(b"error_class: KeyError\n") == []  # (a class named, no error)


def _table(rows: list[list[str]]) -> list[str]:
    """A table as Triton prints its models' status (and tabulate's "grid" format draws one): each row's
    cells padded to its column's width between bars, a rule of dashes above, below and under the first."""
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    rule = "+" + "+".join("-" * (width + 2) for width in widths) + "+"
    lines = ["| " + " | ".join(cell.ljust(width) for cell, width in zip(row, widths)) + " |" for row in rows]
    return [rule, lines[0], rule, *lines[1:], rule]


def test_an_exception_line_in_a_cell_of_a_table():
    """Triton's status table names each model's load error in a cell: the cells before it are its context."""
    exc, said = _inference_failure()
    table = _table([["Model", "Version", "Status"], ["add_sub", "1", f"UNAVAILABLE: Internal: {said}"],
                    ["identity", "1", "READY"]])
    data = "\n".join(["I0704 00:33:26.738428 168 server.cc:676] ", *table, "I0704 server.cc:707] next"]) + "\n"
    assert _bare_errors(data.encode()) == [
        (EventKind.BARE, "ConnectionError", str(exc), "add_sub | 1 | UNAVAILABLE: Internal")]
    assert assert_same("\n".join(_table([["Error", "Count"], ["ValueError", "3"]])).encode() + b"\n") == []  # (a class named)


@pytest.mark.parametrize("printed", [lambda body: json.dumps(body), lambda body: json.dumps(body)[:-2]],
                         ids=("whole", "cut by the paste"))
def test_an_error_whose_class_a_member_of_its_own_names(printed):
    """An API's JSON error that names the class in one member and its message in another (a serialised
    exception), maybe behind a logger's words."""
    exc, _ = _inference_failure()
    body = printed({"$error": {"code": "PIPELINE_ERROR", "name": type(exc).__name__, "message": str(exc)}})
    for line in (body, f"INFO: the call failed: {body}"):
        ((kind, exception_type, message, _),) = _bare_errors(f"{line}\n".encode())
        assert (kind, exception_type, message) == (EventKind.BARE, "ConnectionError", str(exc))
    assert assert_same(b'{"name": "ValueError", "count": 3}\n') == []  # (a class named, no message)


def test_a_console_copy_that_puts_each_lines_time_on_a_line_above_it():
    """A log console's copy: each record's time on a line of its own before it, through a traceback too. The
    lines go on as if the times were not there, and each line takes the time above it."""
    exc = capture(_load_weights)
    lines = [AROUND[0], *text_of(exc).rstrip("\n").split("\n"), AROUND[1]]
    copied = [part for k, line in enumerate(lines) for part in (f"2025-10-29 20:19:{k:02d}", line)]
    (event,) = assert_same("\n".join(copied).encode() + b"\n")
    assert actual_chain(event.chain) == expected_chain(exc)
    assert not event.truncated and event.timestamp is not None and event.timestamp.second == 1
    assert line_path("\n".join(copied).encode())[2].second == 0  # (the input's time: its first)


@pytest.mark.parametrize("cut", [1, 9], ids=("at its first character", "inside its text"))
def test_a_paste_begun_inside_a_docker_json_file_record(cut):
    """Copied from the middle of a line of Docker's json-file log: the first record lost its opening, and
    what is left of its line is still that record's (a frame line, its place kept)."""
    exc = capture(_load_weights)
    lines = fmt.docker_json_file([("stderr", line) for line in text_of(exc).rstrip("\n").split("\n")])
    first = next(k for k, line in enumerate(lines) if "File" in line)
    start = lines[first].index("File") - 1 + cut - 1  # (from the blank before `File`, or inside the path)
    (event,) = assert_same("\n".join([lines[first][start:], *lines[first + 1:]]).encode() + b"\n")
    (expected, _) = _places(expected_chain(exc))  # (the root, the chain's first link: its frames are those cut)
    assert (event.root.exception_type, event.root.message) == expected[:2] and event.truncated
    assert event.root.frames[0].lineno == expected[3][0][1]
    assert not assert_same(b'  File x", line 1\\n","stream":"stderr","time":"2023"}\n')  # (no record's opening fits)


def _job_status() -> None:
    status = "JobStatus.FAILED_DRIVER"
    if status != "JobStatus.SUCCEEDED":  # (an assert as Python runs it outside pytest, which rewrites its message)
        raise AssertionError(status)


def test_a_class_in_brackets_after_a_users_words():
    """SkyPilot reports a job's failure as `[Class] message` (its format_exception) after its own words."""
    exc = capture(_job_status)
    line = f"Failure reason: Unexpected error occurred: [{type(exc).__name__}] {exc}"
    assert _bare_errors(f"$ sky jobs logs 1\n{line}\n".encode()) == [
        (EventKind.BARE, "AssertionError", str(exc), "Failure reason: Unexpected error occurred")]
    assert _bare_errors(f"[{type(exc).__name__}] {exc}\n".encode())[0][1:3] == ("AssertionError", str(exc))
    assert _bare_errors(b"Launch failed: [ValueError] bad value\n")[0][1:3] == ("ValueError", "bad value")
    assert assert_same(b"note: see [ValueError] in the docs\nINFO: [RuntimeError] raised when ...\n") == []


def test_an_errors_repr_with_arguments_that_are_no_strings_after_words():
    """W&B's sweep agent: `Run 8n4zd2d6 errored: KeyError(1)`, the error's repr, its argument a number."""
    exc = capture(lambda: {0: "a"}[1])
    assert repr(exc) == "KeyError(1)"
    assert _bare_errors(f"Run 8n4zd2d6 errored: {exc!r}\n".encode()) == [
        (EventKind.BARE, "KeyError", "1", "Run 8n4zd2d6 errored")]


@pytest.mark.parametrize("coloured", [False, True], ids=("escaped", "colour tags"))
def test_a_traceback_copied_from_a_pages_html_source(coloured):
    """A report or a log viewer's page copied from its HTML: quotes and brackets as entities (`&quot;`,
    `&lt;module&gt;`), a terminal's colours as tags around the prefix (`<font color=...>...</font>`), the tags of
    preformatted text around it (`<pre>`)."""
    import html as html_module

    exc = capture(_load_weights)
    lines = [html_module.escape(line) for line in text_of(exc).rstrip("\n").split("\n")]
    if coloured:
        lines = [f'<font color="#06989A">2020-04-24T13:27:11.360233+00:00 app[web.1]:</font> {line}' for line in lines]
    (event,) = _tracebacks([AROUND[0], *lines, AROUND[1]])
    assert actual_chain(event.chain) == expected_chain(exc)
    assert assert_same(b"see &lt;b&gt; and x &amp;&amp; y\n") == []
    assert _bare_errors(b"test_parallel failed\n\t&lt;class &apos;AssertionError&apos;&gt;\n")[0][1] == "AssertionError"
    # in preformatted text's tags (a bot's report: `<pre>AssertionError: ...`, the last line closing it)
    (event,) = _tracebacks([AROUND[0], f"<pre>{lines[0]}", *lines[1:-1], f"{lines[-1]}</pre>", AROUND[1]])
    assert actual_chain(event.chain) == expected_chain(exc)
    said = html_module.escape(lines[-1] if not coloured else text_of(exc).rstrip("\n").split("\n")[-1])
    assert _bare_errors(f"<pre>{said}\nassert False</pre>\n".encode())[0][1:3] == tuple(said.split(": ", 1))


def test_an_error_logged_by_its_class_alone_after_words():
    """SD.Next logs a failing callback as `<what>: AttributeError` (the class, not its text) through its
    pipe-delimited format, at error level; at info level it is no error."""
    exc = capture(lambda: None.model_loaded)  # type: ignore[attr-defined]
    formatter = logging.Formatter("%(asctime)s | %(name)s | %(levelname)s | %(module)s | %(message)s")

    def logged(level: int) -> str:
        record = logging.LogRecord("sd", level, "/app/modules/errors.py", 12,
                                   f"executing callback: scripts/lycoris.py model_loaded_callback: {type(exc).__name__}",
                                   None, None)
        return formatter.format(record)

    assert _bare_errors(f"{logged(logging.ERROR)}\n".encode()) == [(EventKind.NOTICE, "AttributeError", "", "")]
    assert assert_same(f"{logged(logging.INFO)}\n".encode()) == []


class _UpstreamError(Exception):
    pass


_UpstreamError.__module__, _UpstreamError.__qualname__ = "proxylib", "UpstreamError"


def test_an_error_logged_after_a_dash_behind_a_format_nobody_listed():
    """A proxy logs `Exception occured - proxylib._UpstreamError: ...` through a format of its own, its level
    inside it (`01:49:22 - Proxy:ERROR: server.py:8778 - `): that error. At info level it is no error."""
    def failing():
        raise _UpstreamError("stream disconnected before completion")

    exc = capture(failing)
    formatter = logging.Formatter("%(asctime)s - Proxy:%(levelname)s: %(filename)s:%(lineno)d - %(message)s", "%H:%M:%S")

    def logged(level: int) -> str:
        said = f"proxy_server.data_generator(): Exception occured - {type(exc).__module__}.{type(exc).__qualname__}: {exc}"
        return formatter.format(logging.LogRecord("proxy", level, "/app/proxy_server.py", 8778, said, None, None))

    assert _bare_errors(f"{logged(logging.ERROR)}\n".encode()) == [
        (EventKind.NOTICE, "proxylib.UpstreamError", str(exc), "")]
    assert assert_same(f"{logged(logging.INFO)}\n".encode()) == []


def test_pips_resolver_failure_logged_without_a_traceback():
    """pip's resolver names its failure (ResolutionImpossible, no Error suffix) on an ERROR line of its own, after the
    line that names the conflicting requirements (the texts of pip's resolver factory)."""
    lines = ["ERROR: Cannot install torch==2.4.0 and vllm==0.6.3 because these package versions have conflicting dependencies.",
             "", "The conflict is caused by:", "    The user requested torch==2.4.0", "    vllm 0.6.3 depends on torch==2.4.1",
             "ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/"
             "#dealing-with-dependency-conflicts"]
    ((kind, exception_type, message, _),) = _bare_errors("\n".join(lines).encode() + b"\n")
    assert (kind, exception_type, message.split(" https:")[0]) == (EventKind.NOTICE, "ResolutionImpossible", "for help visit")


@pytest.mark.parametrize("strip", [False, True], ids=("indented", "stripped"))
def test_frames_whose_function_a_rendered_page_dropped_as_a_tag(strip):
    """`in <module>` copied from a rendered issue reads `in`: still a frame, its function unknown."""
    exc = capture(lambda: _load_shard("model.layers.3.mlp.down_proj.weight"))
    lines = forms.html_rendered(text_of(exc).rstrip("\n").split("\n"))
    assert any(line.endswith(", in") for line in lines)
    (event,) = _tracebacks([AROUND[0], *(forms.stripped(lines) if strip else lines), AROUND[1]])
    (expected,) = expected_chain(exc)
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.message) == (expected.exception_type, expected.message)
    assert [frame[:2] for frame in actual.frames] == [frame[:2] for frame in expected.frames]
    assert [frame[2] for frame in actual.frames] == [None if frame[2].startswith("<") else frame[2] for frame in expected.frames]


@pytest.mark.parametrize("wrap", ["torchrun", "worker"])
def test_lines_of_one_prefix_a_paste_joined(wrap):
    """Two prefixed lines joined into one (a source line and the next frame line): the prefix repeated
    inside the line tells where the second began."""
    exc = capture(_infer)
    lines = text_of(exc).rstrip("\n").split("\n")
    prefixed = ([f"[rank0]: {line}" for line in lines] if wrap == "torchrun"
                else fmt.vllm_worker(lines, name="VllmWorker", rank=0, pid=4300))
    at = next(i for i, line in enumerate(lines) if line.startswith("    ") and i + 1 < len(lines) and lines[i + 1].startswith("  File"))
    prefixed[at:at + 2] = [f"{prefixed[at]} {prefixed[at + 1]}"]
    (event,) = _tracebacks([AROUND[0], *prefixed, AROUND[1]])
    assert actual_chain(event.chain) == expected_chain(exc)
    quoted = [f"> {line}" for line in text_of(capture(lambda: _check_positive(-1))).rstrip("\n").split("\n")]
    (event,) = _tracebacks(quoted)  # (a quote's `> ` is no channel: `if x > 0` stays one line)
    assert event.root.frames[-1].code.startswith('if not x > 0: raise ValueError(f"{x} > 0 is false")')


def _check_positive(x: int) -> None:
    if not x > 0: raise ValueError(f"{x} > 0 is false")  # noqa: E701 - one line, ` > ` inside it


def _read_rows(path: str) -> list:
    with open(path) as handle:
        return handle.readlines()


def _load_table() -> list:
    return _read_rows("/nonexistent/rows.csv")


@pytest.mark.parametrize("first_only", [True, False], ids=("the first", "every one"))
def test_frame_lines_a_paste_begins_inside_of(first_only):
    """A user's copy that begins each frame line at its path (`/lib/x.py", line 3, in f`): the first one
    where the selection began, or every one, trimmed by hand alike. Each is still its frame."""
    exc = capture(_load_table)
    lines = text_of(exc).rstrip("\n").split("\n")[1:]  # (no header)
    frames = [k for k, line in enumerate(lines) if line.startswith('  File "')]
    for k in frames[:1] if first_only else frames:
        lines[k] = lines[k][len('  File "'):]
    (event,) = _tracebacks([AROUND[0], *lines, AROUND[1]])
    (expected,) = expected_chain(exc)
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.message) == (expected.exception_type, expected.message)
    assert [frame[:4] for frame in actual.frames] == [frame[:4] for frame in expected.frames]


@pytest.mark.parametrize("wrap", [fmt.fastchat_stderr, fmt.ci_clock], ids=("FastChat's stderr", "a CI runner's clock"))
def test_a_paste_begun_inside_the_first_frame_line_of_a_log_prefixed_line_by_line(wrap):
    """The selection began inside the first frame line's path and so left out that line's prefix (a time,
    FastChat's stderr record), which the lines after it have and which is learned only from them: that frame
    is still the traceback's first."""
    exc = capture(_load_table)
    lines = wrap(text_of(exc).rstrip("\n").split("\n")[1:])  # (no header)
    lines[0] = lines[0][lines[0].index('File "') + len('File "/'):]
    (event,) = assert_same("\n".join(lines).encode())
    (expected,) = expected_chain(exc)
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.message, event.span.line_start) == (expected.exception_type, expected.message, 1)
    assert [frame[1:4] for frame in actual.frames] == [frame[1:4] for frame in expected.frames]


def test_a_functions_name_left_of_a_frame_the_paste_elided():
    """`  ...` where the user cut frames, then the name of the function of the next one alone and its
    source line: what is left of a frame, not the exception's line (a class's name is capitalised)."""
    exc = capture(_load_table)
    lines = text_of(exc).rstrip("\n").split("\n")
    inner = max(k for k, line in enumerate(lines) if line.startswith('  File "'))
    elided = [*lines[:3], "  ...", "_read_rows", *lines[inner + 1:]]
    (event,) = _tracebacks([AROUND[0], *elided, AROUND[1]])
    (expected,) = expected_chain(exc)
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.message) == (expected.exception_type, expected.message)
    assert [frame[:3] for frame in actual.frames] == [frame[:3] for frame in expected.frames[:1]]


@pytest.mark.parametrize("level", ["**ERROR:**", "**ERROR**:", "**ERROR:**  ", "[Genesis] [14:26:37] [ERROR]"])
def test_an_error_level_in_markdown_bold_or_after_bracketed_tags(level):
    exc, said = _inference_failure()
    assert [(kind, name, message) for kind, name, message, _ in _bare_errors(f"{level} {said}\nvllm: 0.8.5\n".encode())] == [
        (EventKind.NOTICE, "ConnectionError", str(exc))]


@pytest.mark.parametrize(("before", "context"), [
    ("1.Service start failed. ", "1.Service start failed."), ("It stopped! ", "It stopped!"),
    ("模型服务启动失败\uff0c", "模型服务启动失败\uff0c"),
    ("[Bug] Service fails with the error message: ", "[Bug] Service fails with the error message:"),
    ("i run it but i got ", "i run it but i got"), ("No, I still get ", "No, I still get"), ("I got a ", "I got a"),
    ("on a second GPU it returns ", "on a second GPU it returns"),
    ("Caught an ", "Caught an"), ("- bug: ", "bug"),
    (" - ", ""), ("  -> ", ""), ("2. ", ""), ("### ", ""),
    ("Prefill transfer failed for request rank=0 with exception ", "Prefill transfer failed for request rank=0 with exception"),
    ("Request 12 failed with error ", "Request 12 failed with error")],
    ids=("sentence", "exclamation", "fullwidth comma", "error message", "got", "get", "got a", "returns", "caught an", "bullet label",
         "list item", "arrow",
         "numbered", "heading", "with exception", "with error"))
def test_an_exception_line_after_the_users_sentence(before, context):
    """The error after a sentence of the user's (its end, or a fullwidth comma glued to it), after words that
    introduce it, or behind a label in a markdown list."""
    exc, said = _inference_failure()
    assert _bare_errors(f"[Actual Result]\n{before}{said}\n".encode()) == [
        (EventKind.BARE, "ConnectionError", str(exc), context)]
    assert assert_same(f"INFO: done. {said}\nWARNING: retried. {said}\nLoaded the model. Note: see the docs\n"
                       f"It failed. Error: bad\nINFO: it got {said}\nWARNING: the error: {said}\n".encode()) == []


@pytest.mark.parametrize("head", ["", "[rank7]: "])
@pytest.mark.parametrize("closed", ["on its line", "below"])
def test_an_exception_line_in_a_code_span_the_users_words_open(head, closed):
    """``... it returns  `[rank7]: Type: ...``: words that introduce the error open an inline code span, the line's
    channel head (torchrun's) inside it, the span closed on the line or lines below: the error, its words as context."""
    exc, said = _inference_failure()
    text = f"As soon as I use two GPUs on a node it returns  `{head}{said}" + ("`" if closed == "on its line" else "")
    below = [] if closed == "on its line" else [f"{head}Last error:", f"{head}Cuda failure 'invalid device pointer' `"]
    lines = [*(f"INFO step {k} done" for k in range(300)), text, *below]
    ((kind, name, message, context), *_) = _bare_errors("\n".join([*lines, ""]).encode())
    assert (kind, name, message) == (EventKind.BARE, "ConnectionError", str(exc))
    assert context == "As soon as I use two GPUs on a node it returns"


@pytest.mark.parametrize("margin", ["123:", "logs/train.log:123:"], ids=("grep -n", "grep -Hn"))
def test_an_exception_line_grep_found_behind_its_number(margin):
    """`grep -n Error train.log` pasted: each line it found behind its number and a colon, glued (and the file's name
    before them, with `-H`): the error, its number no words of the user's."""
    exc, said = _inference_failure()
    lines = [f"{margin.replace('123', '78')}Exception in device=TPU:7: the XRT session was cancelled", f"{margin}{said}"]
    ((kind, name, message, context),) = _bare_errors("\n".join([*lines, ""]).encode())
    assert (kind, name, message, context) == (EventKind.BARE, "ConnectionError", str(exc), "")


class RateLimitError(Exception):
    """litellm's error: its str() names its class again, under its module (`litellm.RateLimitError: ...`)."""

    def __str__(self) -> str:
        return f"litellm.RateLimitError: {self.args[0]}"


def test_an_error_whose_text_names_its_class_after_words_that_name_it():
    """`print(f"Caught a {type(e).__name__}: {e}")` of an error whose str() begins with its class: the words name the
    class, then the error's own line follows."""
    try:
        raise RateLimitError("RateLimitError: OpenAIException - You exceeded your current quota")
    except RateLimitError as e:
        printed = f"Caught a {type(e).__name__}: {e}"
    assert _bare_errors(f"{printed}\n\nThis means you have run out of credits.\n".encode()) == [
        (EventKind.BARE, "litellm.RateLimitError", "RateLimitError: OpenAIException - You exceeded your current quota",
         "Caught a RateLimitError")]


@pytest.mark.parametrize("word", ["Uncaught", "Unhandled"])
def test_an_error_an_excepthook_logs_as_uncaught(word):
    """An excepthook that logs the error before the process dies (OLMo's `log.critical("Uncaught %s: %s", ...)`),
    its traceback below cut off by the paste: that error."""
    exc, said = _inference_failure()
    formatter = logging.Formatter("[%(asctime)s] %(levelname)s [%(name)s, rank=0] %(message)s", "%Y-%m-%d %H:%M:%S")
    record = logging.LogRecord("root", logging.CRITICAL, "train.py", 12, f"{word} %s: %s", (type(exc).__name__, exc), None)
    ((kind, name, message, _),) = _bare_errors(f"{formatter.format(record)}\n".encode())
    assert (name, message) == ("ConnectionError", str(exc))


class _TransferError(Exception):
    """An error whose text names its class and a field before its reason, as SGLang's KVTransferError's does."""

    def __init__(self, room: int, reason: str) -> None:
        super().__init__(reason)
        self.room, self.reason = room, reason

    def __str__(self) -> str:
        return f"{type(self).__name__}(bootstrap_room={self.room}): {self.reason}"


def _send_chunk() -> None:
    raise _TransferError(3583236771377794168, "Failed to send kv chunk of 3583236771377794168 to 10.72.0.9:44781")


def test_an_error_that_names_its_class_and_fields_in_the_users_words():
    """A server logs an error's text after words that introduce it, the text naming its class and a field before
    the reason: the class and the reason are read; not at a lower level, nor without the words."""
    exc = capture(_send_chunk)
    logged = f"[2025-05-29 23:23:23] Prefill transfer failed for request rank=0 req.rid='a5e' with exception {exc}"
    assert _bare_errors(f"{logged}\n".encode()) == [
        (EventKind.BARE, "_TransferError", exc.reason, "Prefill transfer failed for request rank=0 req.rid='a5e' with exception")]
    assert assert_same(f"INFO: retried with exception {exc}\nthe room: {exc}\n".encode()) == []


def test_an_exception_line_typed_with_a_fullwidth_colon():
    """`RuntimeError：E19999: ...`: the colon after the type typed on a CJK keyboard, in quotes in a sentence."""
    exc, said = _inference_failure()
    typed = said.replace(": ", "\uff1a", 1)
    assert _bare_errors(f'decode error: "{typed} "\n'.encode()) == [(EventKind.BARE, "ConnectionError", str(exc), "decode error:")]


def _open_missing() -> None:
    open("/nonexistent/flows.py")  # noqa: SIM115 - it fails


@pytest.mark.parametrize("quoted", [False, True], ids=("alone", "code span"))
def test_an_exceptions_repr_alone_on_its_line(quoted):
    """`ValueError("...")` on its own line (a logger's `repr(err)`, a user's copy of it): that error, its
    message as `str()` gives it; an OSError's errno as its `str()` puts it."""
    for exc, message in ((capture(_infer), str(capture(_infer))), (capture(_open_missing), None)):
        if message is None:
            message = f"[Errno {exc.errno}] {exc.strerror}"  # (its repr keeps the errno and the text, not the path)
        shown = f"`{exc!r}`" if quoted else repr(exc)
        assert [(kind, name, said) for kind, name, said, _ in _bare_errors(f"raised exception:\n{shown}\n".encode())] == [
            (EventKind.BARE, type(exc).__name__, message)]
    assert assert_same(b"x = ValueError('a')\nreturn KeyError()\n") == []


def _open_config() -> list:
    return _read_rows(
        "/nonexistent/"
        "settings/"
        "config.csv",
    )


@pytest.mark.parametrize("elide", [False, True], ids=("whole", "elided"))
def test_a_statement_over_lines_in_a_traceback_that_lost_its_indentation(elide):
    """Python 3.13+ shows the statement a frame ran whole, over its lines (or its first and last around
    `...<N lines>...`); a paste that stripped every line's indentation leaves its bracket open to tell
    that the lines after its first are still its."""
    exc = capture(_open_config)
    lines = forms.py313_traceback(exc, elide)
    assert any(line.strip() == "...<3 lines>..." for line in lines) == elide
    (event,) = _tracebacks([AROUND[0], *(line.strip() for line in lines), AROUND[1]])
    (expected,) = expected_chain(exc)
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.message) == (expected.exception_type, expected.message)
    assert [frame[:3] for frame in actual.frames] == [frame[:3] for frame in expected.frames]
    assert not event.truncated


def test_a_fragment_whose_exception_line_is_indented_as_its_source_line():
    """A user's cut from a log: the innermost frame line (flush left), its source and caret lines, and the
    exception line indented as far as they are."""
    exc = capture(_load_table)
    lines = text_of(exc).rstrip("\n").split("\n")
    inner = max(k for k, line in enumerate(lines) if line.startswith('  File "'))
    fragment = [lines[inner].strip(), *lines[inner + 1:-1], f"    {lines[-1]}"]
    (event,) = _tracebacks([AROUND[0], *fragment, AROUND[1]])
    (expected,) = expected_chain(exc)
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.message) == (expected.exception_type, expected.message)
    assert [frame[:4] for frame in actual.frames] == [frame[:4] for frame in expected.frames[-1:]]


@pytest.mark.parametrize(("line", "context"), [
    ('when I run it I keep getting the following error "{said}" and it stops', "when I run it I keep getting the following error"),
    ('it results in the following error: "{said}" ', "it results in the following error:"),
    ("Exception {said}", "Exception")], ids=("quoted after the word error", "quoted after error and a colon", "the word Exception before it"))
def test_an_exception_line_the_users_words_quote_or_name(line, context):
    exc, said = _inference_failure()
    assert _bare_errors(f"{line.format(said=said)}\n".encode()) == [(EventKind.BARE, "ConnectionError", str(exc), context)]
    assert assert_same(b"Exception ignored in: <function f>\nno error \"x\" here\n") == []


def test_a_code_span_opened_with_a_blank_in_front_of_a_cleo_report():
    """A user wrapped Poetry's whole report in one inline code span: its backtick and a blank glued to the
    class's line, the other backtick to the last source line."""
    exc = capture(lambda: _build_backend("setuptools.build_meta:__legacy__"))
    report = forms.cleo_report(exc)[1:]
    (event,) = _tracebacks([f"`{report[0][1:]}", *report[1:-1], f"{report[-1]}`"])
    assert (event.root.exception_type, event.root.message, event.root.frames[-1].function) == (
        "ChefBuildError", str(exc), "_build_backend")


def _import_plugin():
    import analyzer_test_plugin_that_is_not_installed  # noqa: F401


def test_an_exception_line_that_prints_the_class_itself():
    """FreeCAD's report view ends a traceback with `f"{type(e)}: {e}"`: `<class 'ModuleNotFoundError'>: ...`,
    a class of a module with its module."""
    for exc in (capture(_import_plugin), capture(lambda: _build_backend("x"))):
        lines = text_of(exc).rstrip("\n").split("\n")
        (event,) = _tracebacks([f"12:55:12  pyException: {lines[0]}", *lines[1:-1], f"{type(exc)}: {exc}".split("\n")[0],
                                AROUND[1]])
        (expected,) = expected_chain(exc)
        (actual,) = actual_chain(event.chain)
        assert (actual.exception_type, actual.message.split("\n")[0], actual.frames) == (
            expected.exception_type, expected.message.split("\n")[0], expected.frames)


def test_windows_paths_escaped_as_in_a_repr():
    """A web page's copy (Bazarr's) doubles each backslash of a Windows path, as a string's repr does: the
    frames' package-relative paths are those of the paths themselves."""
    exc = capture(_load_weights)
    escaped = 'File "C:\\\\Python311\\\\Lib\\\\site-packages\\\\app\\\\weights.py"'
    lines = [line.replace(f'File "{__file__}"', escaped) for line in text_of(exc).rstrip("\n").split("\n")]
    (event,) = _tracebacks([AROUND[0], *lines, AROUND[1]])
    assert {frame.relpath for link in event.chain for frame in link.frames if "realtb" not in frame.path} == {"app/weights.py"}
    assert event.root.raise_site is not None and event.root.raise_site.place.startswith("app/weights.py:")


def test_a_traceback_logged_as_the_list_of_its_lines():
    """`logger.error(traceback.format_exception(...))` logs the list's repr on one line (SpiderFoot's scan log):
    its strings are the traceback's lines, the quotes of each as repr chose them."""
    exc = capture(_load_weights)
    listed = traceback.format_exception(exc)
    assert any(line.startswith('"') for line in map(repr, listed))  # (a line with a quote: repr's double quotes)
    line = f"2024-11-21 11:49:46 | SpiderFoot | ERROR | Unhandled exception encountered during scan: {listed!r}"
    (event,) = _tracebacks([AROUND[0], line, AROUND[1]])
    assert actual_chain(event.chain) == expected_chain(exc)
    (cut,) = _tracebacks([AROUND[0], f"cut: {listed[:2]!r}"[:-8], AROUND[1]])  # (the line cut inside the list)
    assert cut.truncated and not cut.root.exception_type


def test_a_paste_in_a_span_of_two_backticks():
    """Markdown's span of two backticks, opened glued to the paste's first line (a frame) and closed alone."""
    exc = capture(_load_weights)
    lines = text_of(exc).rstrip("\n").split("\n")
    inner = max(k for k, line in enumerate(lines) if line.startswith('  File "'))
    (event,) = _tracebacks([AROUND[0], f"``{lines[inner].lstrip()}", *lines[inner + 1:], "``", AROUND[1]])
    (expected,) = expected_chain(exc)[-1:]
    (actual,) = actual_chain(event.chain)
    assert (actual.exception_type, actual.frames) == (expected.exception_type, expected.frames[-1:])


def test_a_frame_line_with_a_terminals_padding_joined_into_it():
    """A terminal that pads each line to its width wrapped a long frame line, and the copy joined it again with the
    padding inside: before the path's closing quote (`serving_chat.py          ", line 681, in f`) or between the line's
    comma and `in` (`line 627,          in process`). The frames are Python's."""
    exc = capture(_load_weights)
    lines = text_of(exc).rstrip("\n").split("\n")
    padded = [regex.sub(r'", line (\d+), in ', (lambda m: f'{" " * 20}", line {m[1]}, in ') if k % 2 else
                        (lambda m: f'", line {m[1]},{" " * 21}in '), line, count=1) for k, line in enumerate(lines)]
    assert sum(" " * 20 in line for line in padded) >= 2
    (event,) = _tracebacks(padded)
    assert _places(actual_chain(event.chain)) == _places(expected_chain(exc))


def test_a_frames_line_in_markdown_bold():
    """A user bolded the line of the frames that matter (`File "x.py", **line 476**, in start`), the comma inside
    the bold or after it; or the function (`line 377, **in greedy_until**`)."""
    exc = capture(_load_weights)
    lines = text_of(exc).rstrip("\n").split("\n")
    bolded = [regex.sub(r", line (\d+),", rf", **line \1{',**' if k % 2 else '**,'}", line) for k, line in enumerate(lines)]
    assert sum("**line " in line for line in bolded) >= 2
    (event,) = _tracebacks([AROUND[0], *bolded, AROUND[1]])
    assert actual_chain(event.chain) == expected_chain(exc)
    functions = [regex.sub(r", in (\S+)$", r", **in \1**", line) for line in lines]  # (or its function)
    (event,) = _tracebacks([AROUND[0], *functions, AROUND[1]])
    assert actual_chain(event.chain) == expected_chain(exc)


def test_a_traceback_that_lost_its_line_breaks_but_kept_its_indents():
    """Each break a blank, each line's indentation kept: `...last):   File "x.py", line 3, in f     g(1)   File ...`.
    (The header's words are no prefix of the frame after them.)"""
    exc = capture(_load_weights)
    (event,) = _tracebacks([AROUND[0], " ".join(text_of(exc).rstrip("\n").split("\n")), AROUND[1]])
    assert _places(actual_chain(event.chain)) == _places(expected_chain(exc))
    (event,) = _tracebacks([AROUND[0], *text_of(exc).replace("Traceback (most recent call last):\n", "Traceback (most "
                                                               "recent call last):  ").rstrip("\n").split("\n")])
    assert _places(actual_chain(event.chain)) == _places(expected_chain(exc))  # (a header glued to its first frame alone)


def test_a_frame_line_that_lost_the_blank_after_its_comma():
    exc = capture(_load_weights)
    lines = [line.replace(", in ", ",in ") for line in text_of(exc).rstrip("\n").split("\n")]
    (event,) = _tracebacks([AROUND[0], *lines, AROUND[1]])
    assert _places(actual_chain(event.chain)) == _places(expected_chain(exc))


def test_a_traceback_in_a_string_escaped_twice():
    """A JSON body holding a dict's repr that holds the traceback's lines (Zappa's error response): escaped twice."""
    exc = capture(_load_weights)
    body = json.dumps(str({"message": "An uncaught exception happened while servicing this request.",
                           "traceback": traceback.format_exception(exc)}))
    assert "\\\\n" in body
    (event,) = _tracebacks([AROUND[0], body, AROUND[1]])
    assert _places(actual_chain(event.chain)) == _places(expected_chain(exc))


def test_markdown_around_a_traceback_and_its_lines():
    """An inline code span opened before a frame's line (its indentation inside the span or before it); three levels of quote
    before an exception line (`>>> ValueError: ...`); a dunder name as markdown's source escapes it (`\\_\\_init\\_\\_`)
    or as it renders it (`**init**`); a heading's marks, maybe in bold; a docstring's quotes; each line a code span, maybe indented;
    bold italic."""
    exc = capture(_load_weights)
    lines = text_of(exc).rstrip("\n").split("\n")
    (event,) = _tracebacks([f"`{lines[1]}", *lines[2:-1], f"{lines[-1]}`"])
    assert event.root.frames[0].lineno == expected_chain(exc)[0].frames[0][1] and event.truncated
    for opened in (" `", "  `"):  # (or after the frame's indentation, or a blank of it)
        (event,) = _tracebacks([opened + lines[1].lstrip(" "), *lines[2:-1], f"{lines[-1]}`"])
        assert event.root.frames[0].lineno == expected_chain(exc)[0].frames[0][1]
    (event,) = assert_same(f">>> {lines[-1]}\n".encode())
    assert (event.root.exception_type, event.kind) == (expected_chain(exc)[-1].exception_type, EventKind.BARE)
    escaped = [line.replace('.py"', '/\\_\\_init\\_\\_.py"', 1) if line.startswith("  File") else line for line in lines]
    (event,) = _tracebacks(escaped)
    assert all(frame.path.endswith("/__init__.py") for frame in event.root.frames)
    # markdown rendered: a dunder name bold (`**init**`), a heading's marks before the exception line
    rendered = [*(line.replace('.py"', '/**init**.py"', 1).rsplit(", in ", 1)[0] + ", in **init**" if line.startswith("  File")
                  else line for line in lines[:-1]), f"## {lines[-1]}"]
    (event,) = _tracebacks(rendered)
    assert {(frame.path.rsplit("/", 1)[-1], frame.function) for frame in event.final.frames} == {("__init__.py", "__init__")}
    assert event.final.exception_type == expected_chain(exc)[-1].exception_type
    # ... inside bold opened there and closed on the line below (`**### ImportError: ...`, `words.**`), the copy begun
    # at the last link's first frame, the innermost frame's code not shown (a frozen module's)
    last = len(lines) - 1 - lines[::-1].index(g.HEADER_TEXT)
    innermost = max(k for k, line in enumerate(lines) if line.startswith("  File "))
    (event,) = _tracebacks([*lines[last + 1:innermost + 1], f"**### {lines[-1]}", "Requirements installed successfully.**"])
    final = expected_chain(exc)[-1]
    assert (event.final.exception_type, event.final.message.split("\n")[0]) == (final.exception_type, final.message)
    assert [(frame.path, frame.lineno, frame.function) for frame in event.final.frames] == [frame[:3] for frame in final.frames]
    # each line its own code span, the span indented (its frame lines' indentation inside it); bold italic
    (event,) = _tracebacks([f"{'  ' * (k % 2)}`{line}`" for k, line in enumerate(lines)])
    assert _places(actual_chain(event.chain)) == _places(expected_chain(exc))
    (event,) = assert_same(f"***{lines[-1]}***\n".encode())
    assert event.root.exception_type == expected_chain(exc)[-1].exception_type
    # a bare exception line in a docstring's quotes (its message's further lines below it)
    (event,) = assert_same(f'"""{lines[-1]}\n    status = UNAVAILABLE\n"""\n'.encode())
    assert (event.root.exception_type, event.root.message.split("\n")[0]) == (expected_chain(exc)[-1].exception_type,
                                                                            expected_chain(exc)[-1].message)


def test_a_heading_named_traceback_is_no_exception_line():
    """`Traceback:` heads a report's stack (Django's page, a console that prints a failed tool's fields): a header
    cut from its stack and that heading below it name no class `Traceback`."""
    exc, said = _inference_failure()
    lines = ["Traceback (most recent call last):", "", "Traceback:", "", f"Exception Type: {type(exc).__name__}",
             f"Exception Value: {exc}"]
    assert all(event.root.exception_type != "Traceback" for event in assert_same("\n".join([*lines, ""]).encode()))
