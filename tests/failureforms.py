"""Every way a server failure gets printed, produced for real where Python can produce it.

Each function returns the text as it lands in a log (a list of lines): crashes of child processes
are run and their stderr captured, exceptions are raised and formatted by the module that prints
them in production (`traceback`, `faulthandler`, `concurrent.futures`, `multiprocessing`,
IPython's `ultratb`, `logging`). Where no Python code prints a form (libstdc++'s terminate
handler, Ray's RayTaskError, a log viewer's newest-first export, a markdown paste), the text is
built from the format's definition around real tracebacks.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import doctest
import faulthandler
import io
import json
import linecache
import logging
import os
import re
import socket
import subprocess
import sys
import tempfile
import textwrap
import traceback
import unittest
from collections.abc import Callable
from pathlib import Path

from tests.realtb import capture, text_of


def _run(script: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-X", "faulthandler", "-c", textwrap.dedent(script)],
                          capture_output=True, text=True, timeout=60, check=False)


# ----------------------------------------------------------------------------- native crashes

SEGFAULT_SCRIPT = """
    import ctypes

    def read_weights(address):
        return ctypes.string_at(address)

    read_weights(0)
"""


def segfault_child(bar: bool = False) -> list[str]:
    """A child that reads address 0: faulthandler's `Fatal Python error: Segmentation fault` dump;
    with `bar`, while a progress bar's line is half written on stderr (as tqdm leaves it)."""
    head = ("import sys\nsys.stderr.write('Capturing batches (bs=448):   8%|###   | 4/51 [00:20<03:35,  4.59s/it]')\n"
            "sys.stderr.flush()\n") if bar else ""
    result = _run(head + textwrap.dedent(SEGFAULT_SCRIPT))
    assert result.returncode != 0
    return result.stderr.splitlines()


def pydantic_report(title: str, error: Exception | None, field: str = "", *, literal: str = "") -> str:
    """The text of pydantic's ValidationError for one failed check, as pydantic-core displays its errors: the
    title, the location (a field's name; none for the model's own validator), the message indented with its type
    and input, and the link to its docs. `error` is what a validator raised (`Value error, ...` for a ValueError,
    `Assertion failed, ...` for an assert); without one, a type check that failed (`literal` its message)."""
    if error is None:
        kind, said = "literal_error", literal
    elif isinstance(error, AssertionError):
        kind, said = "assertion_error", f"Assertion failed, {error}"
    else:
        kind, said = "value_error", f"Value error, {error}"
    lines = [f"1 validation error for {title}", *([field] if field else []),
             f"  {said} [type={kind}, input_value=ArgsKwargs((), {{'model': ...ax_cpu_loras': None}}), "
             "input_type=ArgsKwargs]", f"    For further information visit https://errors.pydantic.dev/2.11/v/{kind}"]
    return "\n".join(lines)


BUS_ERROR_SCRIPT = """
    import signal

    def write_shared(buffer):
        signal.raise_signal(signal.SIGBUS)  # what a write past a full /dev/shm gets from the kernel

    write_shared(None)
"""


def bus_error_child() -> list[str]:
    """A child ended by SIGBUS: faulthandler's `Fatal Python error: Bus error` dump."""
    result = _run(BUS_ERROR_SCRIPT)
    assert result.returncode != 0
    return result.stderr.splitlines()


SPAWN_CHILD_SCRIPT = """
import os, sys
from multiprocessing.spawn import spawn_main
r, w = os.pipe()
os.close(w)  # the parent failed before it wrote the process to run
sys.argv = [sys.argv[0], "--multiprocessing-fork"]
spawn_main(pipe_handle=r)
"""


def spawn_child_left_empty() -> list[str]:
    """A spawned child whose parent failed to pickle the process (on Windows the child is started before): the real
    `multiprocessing.spawn._main` reading an empty pipe, `EOFError: Ran out of input`."""
    result = _run(textwrap.dedent(SPAWN_CHILD_SCRIPT))
    assert result.returncode != 0
    return result.stderr.splitlines()


def shell_signal_report(shell: str, signal: str, script: bool = False) -> list[str]:
    """What a real shell prints when the Python it ran dies of `signal` (SIGSEGV, SIGABRT, ...):
    bash `bash: line 1: 4242 Segmentation fault      python3 -c ...` (from a script, `run.sh: line 1:
    ...`), dash `Segmentation fault`. Only the shell's stderr: the child prints nothing."""
    child = f'{sys.executable} -c "import os, signal; os.kill(os.getpid(), signal.{signal})"; true\n'
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "run.sh")
        path.write_text(child)
        command = [shell, str(path)] if script else [shell, "-c", child]
        result = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    return result.stderr.splitlines()


def abort_child() -> list[str]:
    """A child that aborts with a second thread alive: `Fatal Python error: Aborted`, two threads."""
    result = _run("""
        import os, threading

        def wait_forever(event):
            event.wait()

        event = threading.Event()
        threading.Thread(target=wait_forever, args=(event,), daemon=True).start()

        def shutdown():
            os.abort()

        shutdown()
    """)
    assert result.returncode != 0
    return result.stderr.splitlines()


def dumped_stack(header: str) -> list[str]:
    """`faulthandler.dump_traceback` of this thread written to a file, under `header` (the line
    faulthandler writes first when a fatal signal makes it dump)."""
    def deep_in_the_model():
        with tempfile.TemporaryFile("w+") as handle:
            faulthandler.dump_traceback(handle, all_threads=False)
            handle.seek(0)
            return handle.read().splitlines()

    return [header, "", *deep_in_the_model()]


def rust_main_error(message: str, causes: list[str]) -> list[str]:
    """A Rust program whose `main` returned an anyhow error: Rust prints `Error: ` and the error's `Debug` form, which
    anyhow writes as its message, a blank line, `Caused by:` and each cause indented four blanks, numbered from 0
    where there is more than one."""
    numbered = [f"    {k}: {cause}" for k, cause in enumerate(causes)] if len(causes) > 1 else [f"    {causes[0]}"]
    return [f"Error: {message}", "", "Caused by:", *numbered]


def cxx_terminate(exception_type: str = "c10::Error", what: str = "") -> list[str]:
    """libstdc++'s verbose terminate handler on a c10 CUDA error (c10/cuda/CUDAException.cpp),
    optionally rethrown by another thread that puts `what` in front of it (the NCCL watchdog)."""
    return [
        f"terminate called after throwing an instance of '{exception_type}'",
        f"  what():  {what}CUDA error: an illegal memory access was encountered",
        ("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
         "incorrect."),
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
        "",
        ("Exception raised from c10_cuda_check_implementation at /pytorch/c10/cuda/CUDAException.cpp:43 "
         "(most recent call first):"),
        ("frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f3a2c4b9446 in "
         "/usr/local/lib/python3.11/site-packages/torch/lib/libc10.so)"),
        ("frame #1: <unknown function> + 0x1234 (0x7f3a2c4b7000 in /usr/local/lib/python3.11/site-packages/torch/lib/"
         "libc10_cuda.so)"),
    ]


def ray_unhandled(mangled: str = "N3c105ErrorE", pid: int = 270291) -> list[str]:
    """`cxx_terminate` as a Ray worker's terminate handler logs it (src/ray/util/logging.cc): its own record at level E
    naming the type as `typeid(e).name()` does, mangled, then what() and the rest of the report, each line behind
    the worker's prefix as Ray's log monitor shows it."""
    report = cxx_terminate()
    what = report[1].split("what():  ", 1)[1]
    record = f"[2025-02-19 08:58:32,022 E {pid} {pid + 82}] logging.cc:108: Unhandled exception: {mangled}. what(): {what}"
    return [f"(RayWorkerWrapper pid={pid}, ip=10.175.94.190) {line}" for line in [record, *report[2:]]]


def cxx_terminate_of_ranks(ranks: int, exception_type: str = "c10::Error") -> list[str]:
    """`cxx_terminate` as several ranks that abort at once leave it: the handler writes its line in pieces (the
    words, the type, the closing quote and line break), so their pieces interleave. One order they come in: each
    rank's words, each rank's type, then the quotes; the first rank's what() after them."""
    words = "terminate called after throwing an instance of '"
    report = cxx_terminate(exception_type)
    return [words * ranks + exception_type * ranks + "'", *(["'"] * (ranks - 1)), *report[1:]]


def _embed_tokens():
    raise RuntimeError("CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously reported "
                       "at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider "
                       "passing CUDA_LAUNCH_BLOCKING=1")


def device_assertion(threads: int = 3, rocm: bool = False) -> list[str]:
    """CUDA's device-side assert: each failing thread prints the kernel's file, line and function and
    the condition (CUDA's __assert_fail; ROCm's words it its own way), then the next call raises in Python."""
    printed = [("/pytorch/aten/src/ATen/native/hip/Indexing.hip:1500: indexSelectSmallIndex: Device-side assertion "
                "`srcIndex < srcSelectDimSize' failed.") if rocm else
               (f"/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1500: indexSelectSmallIndex: block: [32,0,0], "
                f"thread: [{60 + t},0,0] Assertion `srcIndex < srcSelectDimSize` failed.") for t in range(threads)]
    return [*printed, *text_of(capture(_embed_tokens)).splitlines()]


# ----------------------------------------------------------------------------- wrapped exceptions

def _load_shard(name: str):
    raise ValueError(f"shard {name} has 3 heads, expected 4")


def pool_failure() -> list[str]:
    """A ProcessPoolExecutor task that raised: the worker's `_RemoteTraceback` quoted in `\"\"\"`."""
    with concurrent.futures.ProcessPoolExecutor(max_workers=1) as pool:
        future = pool.submit(_load_shard, "model-00003")
        err = capture(future.result)
    return text_of(err).splitlines()


PROCESS_SCRIPT = """
    import multiprocessing

    def load(path):
        with open(path) as handle:
            return handle.read()

    if __name__ == "__main__":
        for path in ("/nonexistent/weights-1.bin", "/nonexistent/weights-2.bin"):
            child = multiprocessing.Process(target=load, args=(path,))
            child.start()
            child.join()
"""


def failing_processes() -> list[str]:
    """Two multiprocessing children failing one after the other: `Process Process-N:` headers."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(textwrap.dedent(PROCESS_SCRIPT))
    result = subprocess.run([sys.executable, handle.name], capture_output=True, text=True, timeout=60, check=False)
    return result.stderr.splitlines()


def elastic_root_cause(traceback_lines: list[str], rank: int = 0) -> list[str]:
    """torchrun's summary of a failed child (torch.distributed.elastic's ChildFailedError message): the
    `Root Cause (first observed failure):` table, whose `traceback :` field holds the child's traceback
    from its error file, each line after the first indented two more spaces."""
    first, *rest = traceback_lines
    return ["=" * 60, "train.py FAILED", "-" * 60, "Failures:", "  <NO_OTHER_FAILURES>", "-" * 60,
            "Root Cause (first observed failure):", f"[{rank}]:", "  time      : 2024-08-05_10:01:43",
            "  host      : gpu-node-3", f"  rank      : {rank} (local_rank: {rank})", "  exitcode  : 1 (pid: 46669)",
            "  error_file: /tmp/torchelastic_i4d4ivao/none_jzj2c4lc/attempt_0/0/error.json",
            f"  traceback : {first}", *(f"  {line}" for line in rest), "=" * 60]


class ProcessRaisedException(Exception):
    """torch.multiprocessing.spawn's: a child's failure, its traceback in the message."""


def _child_init_process_group():
    raise RuntimeError("Distributed package doesn't have NCCL built in")


def _spawn_join():
    child = text_of(capture(_child_init_process_group))  # what the child sent its parent
    raise ProcessRaisedException(f"\n\n-- Process 0 terminated with the following error:\n{child}")


def spawn_failure() -> list[str]:
    """`torch.multiprocessing.spawn` failing: the parent's ProcessRaisedException, whose message is a
    blank line, `-- Process 0 terminated with the following error:` and the child's traceback."""
    return text_of(capture(_spawn_join)).splitlines()


def _replica_init():
    try:
        _load_shard("model-00001")
    except ValueError:
        raise RuntimeError(traceback.format_exc()) from None  # as Ray Serve's replica wrapper does


def nested_traceback() -> list[str]:
    """An exception whose message is a whole traceback (Ray Serve re-raising format_exc())."""
    return text_of(capture(_replica_init)).splitlines()


def _torchscript_message(said: str, serialized: bool, frames: bool) -> str:
    """What TorchScript's interpreter puts in the RuntimeError it raises when an operation of a scripted function
    fails: its words, its own stack of the scripted code (each call with the source around it, blank lines too, and
    the call marked `<--- HERE`; a serialized module's stack of its serialized code first), then the error."""
    stack = [
        '  File "/venv/lib/python3.10/site-packages/torch_scatter/composite/softmax.py", line 16, in scatter_softmax',
        "    index = broadcast(index, src, dim)",
        "",
        "    max_value_per_index = scatter_max(src, index, dim=dim)[0]",
        "                          ~~~~~~~~~~~ <--- HERE",
        "    max_per_src_element = max_value_per_index.gather(dim, index)",
    ] if frames else []
    serialized_stack = ["Traceback of TorchScript, serialized code (most recent call last):",
                        '  File "code/__torch__/torch_scatter/composite/softmax.py", line 12, in scatter_softmax',
                        "    _3 = torch.torch_scatter.scatter.scatter_max(src, index0, dim, None, None)",
                        "         ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~ <--- HERE", ""] if serialized else []
    header = "Traceback of TorchScript, original code" if serialized else "Traceback of TorchScript"
    return "\n".join(["The following operation failed in the TorchScript interpreter.", *serialized_stack,
                      f"{header} (most recent call last):", *stack, f"RuntimeError: {said}"])


def _run_scripted(said: str, serialized: bool, frames: bool) -> None:
    raise RuntimeError(_torchscript_message(said, serialized, frames))


def _train_step(said: str) -> None:
    try:
        _run_scripted(said, False, True)
    except RuntimeError as err:
        raise ValueError("the training step failed") from err


def torchscript_failure(said: str, serialized: bool = False, frames: bool = True, wrapped: bool = False) -> BaseException:
    """The RuntimeError a scripted function's failed operation raises (its Python traceback real), the error it failed
    with `said` under TorchScript's stack in its message; `wrapped`: an error raised from it."""
    return capture(lambda: _train_step(said) if wrapped else _run_scripted(said, serialized, frames))


def ucx_signal(signal: str = "Segmentation fault", said: str = "address not mapped to object at address 0x10") -> list[str]:
    """UCX's signal handler's report (ucs_handle_error): its tag (host, pid, thread), the signal and what it says, then
    the native backtrace, numbered innermost first, under a head naming the thread, and a rule."""
    libs = "/usr/local/lib/python3.10/dist-packages/.nixl.mesonpy.libs/plugins/../../nixl.libs"
    frames = [f"{libs}/libucs-97f10f8d.so.0.0.0(ucs_handle_error+0x294) [0x7fbec008fba4]",
              "/usr/lib/x86_64-linux-gnu/libc.so.6(+0x1a07cd) [0x7fc0957437cd]",
              f"{libs}/libuct-b36f5a30.so.0.0.0(uct_tcp_ep_am_bcopy+0x8a) [0x7fbeb852804a]",
              f"{libs}/libucp-ec3800ce.so.0.0.0(ucp_worker_progress+0x2a) [0x7fbeb80ee935]"]
    return [f"[gpu-node-7:12796:1:13303] Caught signal 11 ({signal}: {said})", "==== backtrace (tid:  13303) ====",
            *(f"{k:2d}  {frame}" for k, frame in enumerate(frames)), "================================="]


CHILD_SCRIPT = """
    import warnings

    warnings.warn("the registry was imported twice", RuntimeWarning)

    def load_model_cls():
        import a_module_the_child_lacks

    load_model_cls()
"""


def _inspect_in_subprocess():
    returned = _run(CHILD_SCRIPT)
    try:
        returned.check_returncode()
    except subprocess.CalledProcessError as err:
        raise RuntimeError(f"Error raised in subprocess:\n{returned.stderr}") from err


def child_output_in_message() -> list[str]:
    """vLLM's `_run_in_subprocess`: a child process fails, `check_returncode` raises, and the parent
    raises again with the child's stderr (a warning, then the child's own traceback) as its message."""
    return text_of(capture(_inspect_in_subprocess)).splitlines()


def ray_task_error(cut_frame: bool = False, replica: bool = False, chained: bool = False, nested: bool = False) -> list[str]:
    """RayTaskError(ValueError) as Ray prints it on the driver: the driver's traceback, the wrapper
    line naming the remote task, the remote frames (without a header) and the remote error. Ray cuts
    the remote's first frames; `cut_frame`: the caret lines of the first were left under the wrapper. `replica`: the
    remote error a Ray Serve replica's RuntimeError whose message is the traceback of the error its init raised.
    `chained`: the remote error raised `from` the ValueError; Ray names the remote task in place of every header of
    the remote's chain, the first on the wrapper's line. `nested`: the remote task got the error from a task it waited
    for: under the first wrapper line, the waiting task's frames (down to where the wait raised), then the second
    task's wrapper line (with carets of its own where `cut_frame`), its frames and its error."""
    def driver():
        raise RuntimeError("placeholder")

    driver_lines = text_of(capture(driver)).splitlines()[:-1]  # header and frames
    remote_error = capture(_replica_init if replica else _open_checkpoint if chained else lambda: _load_shard("model-00002"))
    task = "ray::Loader.load() (pid=4242, ip=10.0.0.5, actor_id=0a1b2c3d, repr=<loader.Loader object at 0x7f00deadbeef>)"
    remote = [task if line.startswith("Traceback ") else line for line in text_of(remote_error).splitlines()]
    wrapper = f"ray.exceptions.RayTaskError({type(remote_error).__name__}): "
    carets = ["           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"] * 2 if cut_frame else []
    if nested:  # (the waiting task's frames without their header and the error line its wait raised)
        waited = text_of(capture(lambda: _wait_for_shards(["model-00002"]))).splitlines()[1:-1]
        loader = "ray::Loader.read_shard() (pid=4251, ip=10.0.0.6, actor_id=4e5f6a7b, repr=<loader.Loader object at 0x7f00cafe0123>)"
        return [*driver_lines, wrapper + task, *carets, *waited, wrapper + loader, *carets, *remote[1:]]
    return [*driver_lines, wrapper + task, *carets, *remote[1:]]


def _wait_for_shards(names: list[str]):
    for name in names:
        raise RuntimeError(f"placeholder for ray.get of {name}")


def _open_checkpoint():
    try:
        _load_shard("model-00004")
    except ValueError as err:
        raise RuntimeError("Failed to load checkpoint") from err


def job_error_over_ray_task_error() -> list[str]:
    """A job runner's error whose message ends with a failed Ray task's (`str(RayTaskError)`: the remote task's name,
    then on the lines below its frames without their header and its error), raised for real on the driver."""
    remote = text_of(capture(lambda: _load_shard("model-00002"))).splitlines()[1:]
    said = "\n".join(["ray::Loader.load() (pid=4242, ip=10.0.0.5)", *remote])

    def run_job():
        raise RuntimeError(f"Job 140208822563728 failed with status failed and error: {said}")

    return text_of(capture(run_job)).splitlines()


def ray_failed_dependency(system_error: BaseException) -> list[str]:
    """A task whose argument came from a failed task, as Ray prints it: a wrapper of Ray's own type (no
    inner type in parentheses) naming each remote task, each over its remote frames, down to the error
    that failed the first (`system_error`, raised and formatted for real), whose frames end the text."""
    remote = text_of(system_error).rstrip("\n").split("\n")
    raylet = ['  File "python/ray/_raylet.pyx", line 458, in ray._raylet.execute_task',
              '  File "python/ray/_raylet.pyx", line 349, in ray._raylet.raise_if_dependency_failed']
    return ["ray.exceptions.RayTaskError: ray::deploy_ray_func() (pid=538, ip=172.17.0.3)", *raylet,
            "ray.exceptions.RayTaskError: ray::prepare_partition() (pid=457, ip=172.17.0.3)", *remote[1:]]


def knack_traceback(exc: BaseException, parts: int = 3) -> list[str]:
    """Azure CLI's debug log of a command's error (knack): the header, each frame as `path, ln N, in f` with its path cut
    to its last `parts` parts and its source line under it, then the exception line."""
    frames = traceback.extract_tb(exc.__traceback__)
    return ["Traceback (most recent call last):",
            *(line for f in frames for line in ("/".join(f.filename.split("/")[-parts:]) + f", ln {f.lineno}, in {f.name}",
                                                f"    {f.line}")),
            *traceback.format_exception_only(exc)[-1].rstrip("\n").split("\n")]


def pybind_what(exc: BaseException) -> list[str]:
    """pybind11's `format_value_and_trace` of a Python error that reached C++: `Type: value`, then, under
    `At:`, each frame from the one that raised outwards as `  path(line): function`."""
    frames = traceback.extract_tb(exc.__traceback__)
    return [f"{type(exc).__name__}: {exc}", "", "At:", *(f"  {f.filename}({f.lineno}): {f.name}" for f in reversed(frames))]


def streamlit_error_box(exc: BaseException) -> list[str]:
    """Streamlit's error box as a copy from the page gives it: the exception line, `Traceback:`, then the
    frames oldest first, flush left, each with its source line four spaces in."""
    frames = traceback.extract_tb(exc.__traceback__)
    return [traceback.format_exception_only(exc)[-1].rstrip("\n"), "Traceback:",
            *(line for f in frames for line in (f'File "{f.filename}", line {f.lineno}, in {f.name}', f"    {f.line}"))]


def reticulate_error(exc: BaseException) -> list[str]:
    """R's reticulate reporting a Python error it called into: R's words, the exception line, a blank, `Detailed
    traceback:`, then the frames oldest first as Python indents them."""
    frames = traceback.format_list(traceback.extract_tb(exc.__traceback__))
    return ["Error in py_call_impl(callable, dots$args, dots$keywords) : ",
            f"  {traceback.format_exception_only(exc)[-1].rstrip()}", "", "Detailed traceback:",
            *(line for frame in frames for line in frame.rstrip("\n").split("\n"))]


def py2_shutdown_thread(exc: BaseException) -> list[str]:
    """Python 2's report of a thread's exception at interpreter shutdown: frames without source lines, the exception
    line naming the class as `type()` prints it (`<type 'exceptions.AttributeError'>: ...`)."""
    frames = traceback.extract_tb(exc.__traceback__)
    return ["Exception in thread Thread-1465 (most likely raised during interpreter shutdown):",
            "Traceback (most recent call last):", *(f'  File "{f.filename}", line {f.lineno}, in {f.name}' for f in frames),
            f"<type 'exceptions.{type(exc).__name__}'>: {exc}"]


def supervisorctl_fault(exc: BaseException) -> list[str]:
    """supervisorctl's report of a fault supervisord answered with: the class, the message, the file and line."""
    inner = traceback.extract_tb(exc.__traceback__)[-1]
    return [f"error: {type(exc)}, {exc}: file: {inner.filename} line: {inner.lineno}"]


def asyncore_compact(exc: BaseException) -> list[str]:
    """supervisord's log of an exception a channel raised, with asyncore's compact traceback (`(class:message
    [file|function|line] ...)`, the innermost frame last)."""
    frames = " ".join(f"[{f.filename}|{f.name}|{f.lineno}]" for f in traceback.extract_tb(exc.__traceback__))
    return [f"2016-11-17 09:14:15,546 CRIT uncaptured python exception, closing channel <POutputDispatcher at 139665565490424 "
            f"for <Subprocess at 139665565913240 with name router0 in state RUNNING> (stdout)> ({type(exc)}:{exc} {frames})"]


def py313_traceback(exc: BaseException, elide: bool = False) -> list[str]:
    """A traceback as Python 3.13+ prints it (no carets here): under each frame, the whole statement it was
    running, each of its lines as far in as the statement's first; with `elide`, a statement of more than
    two lines as its first and last around `...<N lines>...`."""
    lines = ["Traceback (most recent call last):"]
    for frame in traceback.extract_tb(exc.__traceback__):
        lines.append(f'  File "{frame.filename}", line {frame.lineno}, in {frame.name}')
        assert frame.lineno is not None and frame.end_lineno is not None
        source = [linecache.getline(frame.filename, n).rstrip() for n in range(frame.lineno, frame.end_lineno + 1)]
        indent = len(source[0]) - len(source[0].lstrip())
        shown = [line[indent:] for line in source]
        if elide and len(shown) > 2:
            shown = [shown[0], f"...<{len(shown) - 2} lines>...", shown[-1]]
        lines.extend(f"    {line}" for line in shown)
    return [*lines, traceback.format_exception_only(exc)[-1].rstrip("\n")]


def dagster_error(exc: BaseException, comma: bool = False, ui: bool = False, label: bool = True) -> list[str]:
    """Dagster's text of a serialised error (`SerializableErrorInfo.to_string`): the exception line, a blank line,
    `Stack Trace:` and the frames as `traceback.format_list` gives them, then its cause after `The above exception
    was caused by the following exception:`, told the same way; with `comma`, the frames joined by a comma, as
    some releases printed them. The outermost error first. `ui`: as a copy of its UI's page gives it, the line that
    introduces the cause a paragraph of its own (a blank line below it too). Without `label`, as releases of 2020
    print it: the frames right after the blank line, no `Stack Trace:` above them."""
    stack = traceback.format_list(traceback.extract_tb(exc.__traceback__))
    above = "\nStack Trace:\n" if label else "\n"
    text = "".join(traceback.format_exception_only(exc)) + (above + ("," if comma else "").join(stack) if stack else "")
    if exc.__cause__ is not None:
        cause = "\n".join(dagster_error(exc.__cause__, comma, ui, label))
        spaced = "\n" if ui else ""
        text += f"\nThe above exception was caused by the following exception:\n{spaced}{cause}"
    return text.rstrip("\n").split("\n")


def airflow3_page(exc: BaseException) -> list[str]:
    """An error in Airflow 3's task log as a copy from its page gives it: the exception line, then each frame
    oldest first as the page renders it (`File "path", line N in function`, no source), a blank line after each."""
    frames = traceback.extract_tb(exc.__traceback__)
    return [traceback.format_exception_only(exc)[-1].rstrip("\n"),
            *(line for f in frames for line in (f'File "{f.filename}", line {f.lineno} in {f.name}', ""))]


def tracker_title(exc: BaseException) -> list[str]:
    """An error as an error tracker's issue page heads it (Sentry's, copied): the class's name alone (the event's
    `type`), the message (its `value`) on the lines below, then the page's next section after a blank line."""
    return [type(exc).__name__, *str(exc).split("\n"), "", "Stack Trace", "Newest"]


def werkzeug_debugger_page(exc: BaseException) -> list[str]:
    """Werkzeug's debugger page (Flask's, in debug mode) as a copy of its text gives it: the class's name, the exception
    line, a blank, the heading `Traceback (most recent call last)` without its colon, each frame and the line it ran
    flush left, the exception line again, then (a blank line between the page's blocks) its words on the debugger."""
    said = traceback.format_exception_only(exc)[-1].rstrip("\n")
    frames = traceback.extract_tb(exc.__traceback__)
    return [said.split(":", 1)[0], said, "", "Traceback (most recent call last)",
            *(line for f in frames for line in (f'File "{f.filename}", line {f.lineno}, in {f.name}', (f.line or "").strip())),
            said, "", "The debugger caught an exception in your WSGI application. You can now look at the traceback which led "
            "to the error."]


class _KeyErrorMessage(str):
    """torch's KeyErrorMessage: a KeyError shows its message as it is, not its repr."""

    def __repr__(self) -> str:
        return self


class _Dataset:
    def __init__(self) -> None:
        self.images: dict[str, str] = {}

    def __getitem__(self, i: int) -> str:
        return self.images[i]  # type: ignore[index]


def _worker_fetch(dataset: _Dataset, index: int) -> str:
    return dataset[index]


def dataloader_worker_error() -> BaseException:
    """An error in a DataLoader worker as torch raises it again in the main process (its ExceptionWrapper):
    the same type, `Caught KeyError in DataLoader worker process 0.` and the worker's whole traceback after
    `Original ` in its message."""
    err = capture(lambda: _worker_fetch(_Dataset(), 0))  # (in the worker)
    said = "".join(traceback.format_exception(type(err), err, err.__traceback__))
    msg = f"Caught {type(err).__name__} in DataLoader worker process 0.\nOriginal {said}"

    def reraise() -> None:  # (in the main process, which got the text)
        raise KeyError(_KeyErrorMessage(msg))

    return capture(reraise)


def precommit_report(command: list[str]) -> list[str]:
    """pre-commit's report of a command it ran that failed (its CalledProcessError as pre-commit words it, then where
    its log is), the command run for real: each part of the output four blanks in, ` (none)` where it printed none."""
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)

    def indented_or_none(part: str) -> str:
        return "\n    " + part.replace("\n", "\n    ").rstrip() if part else " (none)"

    said = (f"command: {tuple(command)!r}\nreturn code: {done.returncode}\nstdout:{indented_or_none(done.stdout)}\n"
            f"stderr:{indented_or_none(done.stderr)}")
    return [*f"An unexpected error has occurred: CalledProcessError: {said}".split("\n"),
            "Check the log at /home/u/.cache/pre-commit/pre-commit.log"]


def cleo_report(exc: BaseException, utf8: bool = True) -> list[str]:
    """A Cleo app's report of an uncaught exception (Poetry's), as Cleo 2 writes it: a blank line, the
    class name, a blank line, the message (each line two blanks in), a blank line, `at path:line in
    function` and the source four lines around it, numbered, the raising line marked."""
    inner = traceback.extract_tb(exc.__traceback__)[-1]
    arrow, bar = ("\u2192", "\u2502") if utf8 else (">", "|")
    source = linecache.getlines(inner.filename)
    assert inner.lineno is not None
    first, last = max(1, inner.lineno - 4), min(len(source), inner.lineno + 4)
    width = max(3, len(str(last)))
    snippet = [f"    {arrow + ' ' if n == inner.lineno else '  '}{n:>{width}}{bar} {source[n - 1].rstrip()}"
               for n in range(first, last + 1)]
    message = str(exc).replace("\n", "\n  ")
    return ["", f"  {type(exc).__name__}", "", f"  {message}", "", f"  at {inner.filename}:{inner.lineno} in {inner.name}",
            *snippet]


def scons_error(exc: BaseException) -> list[str]:
    """SCons's report of an exception a build script raised (PlatformIO's builds): the exception line with a
    colon after its message, then each frame oldest first as `  File "path", line N:` with its source line
    under it."""
    frames = traceback.extract_tb(exc.__traceback__)
    return [f"{type(exc).__name__}: {exc}:",
            *(line for f in frames for line in (f'  File "{f.filename}", line {f.lineno}:', f"    {(f.line or '').strip()}"))]


def snakemake_error(exc: BaseException, snakefile: str, lineno: int, new: bool = False, wrapper: str = "RuleException") -> list[str]:
    """Snakemake's report of an error in a rule (its `format_error`): the wrapper's class alone, the error's class
    and its place in the workflow (`in line N of FILE:`; since Snakemake 8 `in file FILE, line N:`), its message's
    lines, then the frames oldest first without source lines."""
    place = f"in file {snakefile}, line {lineno}" if new else f"in line {lineno} of {snakefile}"
    frames = [f'  File "{f.filename}", line {f.lineno}, in {f.name}' for f in traceback.extract_tb(exc.__traceback__)]
    return [f"{wrapper}:", f"{type(exc).__name__} {place}:", *str(exc).split("\n"), *frames]


def renpy_report(exc: BaseException, game_frames: int) -> list[str]:
    """Ren'Py's report of an uncaught exception (traceback.txt): the game's own frames first, under `While running
    game code:`, then the whole stack under `Full traceback:`, the exception line after each."""
    frames = traceback.format_list(traceback.extract_tb(exc.__traceback__))
    said = traceback.format_exception_only(exc)[0].rstrip("\n")
    lines = lambda chosen: [line for frame in chosen for line in frame.rstrip("\n").split("\n")]  # noqa: E731
    return ["I'm sorry, but an uncaught exception occurred.", "", "While running game code:", *lines(frames[:game_frames]),
            said, "", "-- Full Traceback " + "-" * 60, "", "Full traceback:", *lines(frames), said, "",
            "Windows-10-10.0.19045 AMD64", "Ren'Py 8.3.4.24120703"]


def sentry_raw(exc: BaseException, shown: int) -> list[str]:
    """Sentry's raw stack of an event as its page copies it: the exception line (and its message's lines), how many
    frames it leaves out and `...`, then the innermost `shown` frames in Python's order, each with its source line."""
    frames = traceback.format_list(traceback.extract_tb(exc.__traceback__))
    said = traceback.format_exception_only(exc)[0].rstrip("\n").split("\n")
    return [*said, f"({len(frames) - shown} additional frame(s) were not displayed)", "...",
            *(line for frame in frames[-shown:] for line in frame.rstrip("\n").split("\n"))]


def lambda_response(exc: BaseException, legacy: bool = False, indent: int | None = 2) -> list[str]:
    """The error AWS Lambda's Python runtime returns to the caller, as JSON: the console shows it indented, `aws lambda
    invoke` writes it on one line. Its stack is the frames as `traceback.format_list` gives them; before Python 3.8
    each was `[file, line, function, source]`, and the console listed the stack first."""
    frames = traceback.extract_tb(exc.__traceback__)
    said = {"errorMessage": str(exc), "errorType": type(exc).__name__, "requestId": "8da27dae-7bf7-496f-a818-adb9f030f808"}
    body = ({"stackTrace": [[f.filename, f.lineno, f.name, f.line] for f in frames], **said} if legacy
            else {**said, "stackTrace": traceback.format_list(frames)})
    return json.dumps(body, indent=indent).split("\n")


def azure_failure(exc: BaseException, flat: bool = False) -> list[str]:
    """Azure Functions' host reporting a Python function's failure (Core Tools' output): the host's wrapper, the
    worker's `Exception: ` and exception line, `Stack: ` and the frames. The portal's monitor shows it on one line,
    each line's indentation and break made one blank."""
    lines = ["System.Private.CoreLib: Exception while executing function: Functions.HttpTrigger. "
             "System.Private.CoreLib: Result: Failure", *f"Exception: {type(exc).__name__}: {exc}".split("\n"),
             *f"Stack: {''.join(traceback.format_tb(exc.__traceback__))}".rstrip("\n").split("\n")]
    return [" ".join(line.strip() for line in lines)] if flat else lines


def error_reporting(exc: BaseException, console: bool = False) -> list[str]:
    """Google Cloud Error Reporting's stack of a Python error: the exception line, then each frame newest first as
    `at function (path:line)`; as its console's page copies (`console`): a blank line under the exception line, a dot
    before each function (its class, none) and blanks inside the brackets, `at .f ( path:line )`."""
    frames = traceback.extract_tb(exc.__traceback__)
    listed = (f"at .{f.name} ( {f.filename}:{f.lineno} )" if console else f"at {f.name} ({f.filename}:{f.lineno})"
              for f in reversed(frames))
    return [traceback.format_exception_only(exc)[-1].rstrip("\n"), *([""] if console else []), *listed]


def unittest_import_failure(module: str, missing: str) -> list[str]:
    """unittest's report of a test module that failed to import, as its runner prints it: the loader's ImportError
    holds the import's traceback in its message."""
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, f"{module}.py").write_text(f"import {missing}\n")
        stream = io.StringIO()
        try:
            suite = unittest.defaultTestLoader.discover(folder, pattern=f"{module}.py", top_level_dir=folder)
            unittest.TextTestRunner(stream=stream).run(suite)
        finally:
            sys.path.remove(folder)  # (discover put it there)
            sys.modules.pop(module, None)
        return stream.getvalue().replace(folder, "/srv/app/tests").rstrip("\n").split("\n")  # (the same each time)


def doctest_failure(source: str) -> list[str]:
    """doctest's report of the examples of `source` that failed, as its runner prints it (a docstring at line 7 of
    /x/selector.py): what each was expected to print, then what it printed."""
    test = doctest.DocTestParser().get_doctest(source, {}, "selector", "/x/selector.py", 7)
    out = io.StringIO()
    doctest.DocTestRunner(verbose=False).run(test, out=out.write)
    return out.getvalue().rstrip("\n").split("\n")


EXCEPTHOOK_SCRIPT = """
    import sys

    def report(kind, value, tb):
        dialog = None
        dialog.ShowModal()  # (a crash reporter whose window is gone)

    def on_close():
        raise RuntimeError("wrapped C/C++ object of type Frame has been deleted")

    sys.excepthook = report
    on_close()
"""


def excepthook_failure() -> list[str]:
    """What CPython prints when `sys.excepthook` fails on an uncaught exception: the hook's error, then the original."""
    return _run(EXCEPTHOOK_SCRIPT).stderr.rstrip("\n").split("\n")


def ray_own_error_over_remote(remote_error: BaseException, on_driver: bool = False) -> list[str]:
    """One of Ray's own errors over the remote error that caused it (RuntimeEnvSetupError, as `ray.get`
    raises it): the wrapper's exception line, the remote task named on the line after it, the remote
    frames (no header) and the remote error. `on_driver`: under the driver's traceback."""
    def driver():
        raise RuntimeError("placeholder")

    remote = text_of(remote_error).rstrip("\n").split("\n")
    above = text_of(capture(driver)).splitlines()[:-1] if on_driver else []
    return [*above, "ray.exceptions.RuntimeEnvSetupError: Failed to setup runtime environment.",
            "ray::ServeController.get_serve_status() (pid=40678, ip=127.0.0.1, repr=<ray.serve.controller."
            "ServeController object at 0x10db66520>)", *remote[1:]]


def _config_error():
    class ConfigError(Exception):
        pass

    raise ConfigError("tensor_parallel_size must divide the number of heads")


def locals_type() -> list[str]:
    """An exception class defined inside a function: its type prints as `mod.func.<locals>.Name`."""
    return text_of(capture(_config_error)).splitlines()


def _compile_step():
    raise TypeError("'NoneType' object is not subscriptable")


def _dynamo_wrapped():
    try:
        try:
            _compile_step()
        except TypeError as err:
            raise RuntimeError(
                f"{type(err).__name__}: {err}\n\n"
                "You can suppress this exception and fall back to eager by setting:\n"
                "    import torch._dynamo\n"
                "    torch._dynamo.config.suppress_errors = True\n") from err
    except RuntimeError as err:
        raise Exception(f"Capture cuda graph failed: {err}")  # noqa: B904 - as SGLang raises it; 'During handling'


def paragraph_message() -> list[str]:
    """A message with a blank line and an indented paragraph (torch._dynamo's hint), then a chain."""
    return text_of(capture(_dynamo_wrapped)).splitlines()


# ----------------------------------------------------------------------------- IPython

IPYTHON_CELLS = ("def load(shards):\n    total = sum(shards)\n    raise ValueError(f'{total} shards, expected 8')\n",
                 "import math\nload([1, 2, 3])\n")


IPYTHON_CHAIN_CELL = ("def load():\n    try:\n        {}['lm_head.weight']\n    except KeyError as err:\n"
                      "        raise RuntimeError('weights incomplete') from err\nload()\n")


def ipython_traceback(cells: tuple[str, ...] = IPYTHON_CELLS) -> list[str]:
    """IPython's own format, printed by a real InteractiveShell when IPython is installed."""
    try:
        from IPython.core.interactiveshell import InteractiveShell
    except ImportError:
        return IPYTHON_FROM_DEFINITION
    InteractiveShell.clear_instance()  # cells are numbered from 1 in each shell
    shell = InteractiveShell.instance(colors="nocolor")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for cell in cells:
            shell.run_cell(cell, store_history=True)
    return out.getvalue().splitlines()


# IPython.core.ultratb's layout (a dashed rule, `Type  Traceback (most recent call last)` padded to
# 75 columns, frames `Cell In[N], line L[, in f(args)]` / `File path:L, in f(args)` over numbered
# context with `---->` on the current line), for machines without IPython.
IPYTHON_FROM_DEFINITION = [
    "-" * 75,
    "ValueError" + " " * 32 + "Traceback (most recent call last)",
    "Cell In[2], line 2",
    "      1 import math",
    "----> 2 load([1, 2, 3])",
    "",
    "Cell In[1], line 3, in load(shards)",
    "      1 def load(shards):",
    "      2     total = sum(shards)",
    "----> 3     raise ValueError(f'{total} shards, expected 8')",
    "",
    "ValueError: 6 shards, expected 8",
]


# IPython's Plain mode (`%xmode Plain`, Spyder's console): CPython's layout but IPython's frame lines,
# `Cell In[N], line L[ in f]` and `File path:L in f` (no comma, no arguments), for machines without IPython.
IPYTHON_PLAIN_FROM_DEFINITION = [
    "Traceback (most recent call last):",
    "  Cell In[2], line 1",
    "    load('{')",
    "  Cell In[1], line 3 in load",
    "    return json.loads(s)",
    "  File /usr/lib/python3.11/json/__init__.py:346 in loads",
    "    return _default_decoder.decode(s)",
    "  File /usr/lib/python3.11/json/decoder.py:353 in raw_decode",
    "    obj, end = self.scan_once(s, idx)",
    "JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
]


def ipython_plain_traceback() -> list[str]:
    """A JSONDecodeError raised in the standard library under two cells, in IPython's Plain mode,
    printed by a real InteractiveShell when IPython is installed."""
    try:
        from IPython.core.interactiveshell import InteractiveShell
    except ImportError:
        return IPYTHON_PLAIN_FROM_DEFINITION
    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance(colors="nocolor")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        shell.run_line_magic("xmode", "Plain")
        for cell in ("import json\ndef load(s):\n    return json.loads(s)\n", "load('{')"):
            shell.run_cell(cell, store_history=True)
    InteractiveShell.clear_instance()
    return out.getvalue().splitlines()[1:]  # (after the line that tells the mode)


def ipython_library_frame() -> list[str]:
    """The IPython traceback above, raised in a library's file below the cells."""
    return [*IPYTHON_FROM_DEFINITION[:-1], "File /usr/lib/python3.11/loader/shards.py:41, in check(n)",
            "     40     if n != 8:", "---> 41         raise ValueError(f'{n} shards, expected 8')", "",
            "ValueError: 6 shards, expected 8"]


def ipython_error_output(cells: tuple[str, ...] = IPYTHON_CELLS) -> tuple[str, str, list[str]] | None:
    """What a Jupyter kernel sends of a cell's error, from a real InteractiveShell in colour: its type's name, its
    text and the traceback as a list of coloured strings (each maybe of several lines); None without IPython."""
    try:
        from IPython.core.interactiveshell import InteractiveShell
    except ImportError:
        return None
    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance(colors="linux")
    sent: list[tuple[str, str, list[str]]] = []
    shell._showtraceback = lambda kind, value, stb: sent.append((kind.__name__, str(value), stb))
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in cells:
            shell.run_cell(cell, store_history=True)
    InteractiveShell.clear_instance()
    return sent[0]


def jupyter_json(form: str, error: tuple[str, str, list[str]]) -> list[str]:
    """A cell's error as Jupyter keeps it in JSON, pretty-printed as each writer does: a saved notebook's output
    (`ipynb`, nbformat's indent of one), the kernel's error message (`message`), or a notebook view's error object
    copied (`object`, VS Code's: name, message and the whole traceback as one string)."""
    name, text, stb = error
    if form == "ipynb":
        output = {"ename": name, "evalue": text, "output_type": "error", "traceback": stb}
        cell = {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [output], "source": ["load([1, 2, 3])"]}
        return json.dumps({"cells": [cell], "nbformat": 4}, indent=1, sort_keys=True, ensure_ascii=False).splitlines()
    if form == "message":
        content = {"traceback": stb, "ename": name, "evalue": text}
        return json.dumps({"msg_type": "error", "content": content, "metadata": {}}, indent=2).splitlines()
    return json.dumps({"name": name, "message": text, "stack": "\n".join(stb)}, indent="\t").splitlines()


def ipython_copies(lines: list[str]) -> tuple[list[str], list[str]]:
    """Two copies of an IPython traceback: one begun at its first frame in a file (`File /x.py:3, in f(a)`,
    the header and the cell above it left out), and Databricks' (the exception line first, cells as
    `File <command-1108086693486187>, line N`)."""
    first_file = next(i for i, line in enumerate(lines) if line.startswith("File "))
    databricks = [re.sub(r"^Cell In\[\d+\], line (\d+)", r"File <command-1108086693486187>, line \1", line)
                  for line in lines[2:-1] if line]
    return lines[first_file:], [lines[-1], *databricks]


# IPython 7's layout of the same error: frames `<ipython-input-N-hash> in f(args)` or `path in f(args)`,
# the line number only on the `---->` marker.
IPYTHON7_FROM_DEFINITION = [
    "-" * 75,
    "ValueError" + " " * 32 + "Traceback (most recent call last)",
    "<ipython-input-2-5b1c0d2e9f3a> in <module>",
    "      1 import math",
    "----> 2 load([1, 2, 3])",
    "",
    "<ipython-input-1-8e7f6a5b4c3d> in load(shards)",
    "      1 def load(shards):",
    "      2     total = sum(shards)",
    "----> 3     raise ValueError(f'{total} shards, expected 8')",
    "",
    "ValueError: 6 shards, expected 8",
]


def notebook_linked(lines: list[str], url: str = "https://localhost:8080/#") -> list[str]:
    """An IPython traceback as a notebook's copy gives it (Colab, VS Code): the place each frame names
    is a markdown link (`[path](url) in f(args)`, `File [path:3](url), in f(args)`), and Colab names a
    module-level cell's frame `<cell line: N>()`."""
    out = []
    for line in lines:
        if m := re.match(r"^(<ipython-input-[^>]+>|\S+\.py) in (<module>|\w+)(\(.*\))?$", line):
            function = "<cell line: 0>()" if m[2] == "<module>" else m[2] + (m[3] or "()")
            line = f"[{m[1]}]({url}) in {function}"
        elif m := re.match(r"^File (\S+:\d+)(, in .*)$", line):
            line = f"File [{m[1]}]({url}){m[2]}"
        out.append(line)
    return out


def vscode_linked_tail(exc: BaseException, url: str = "file://", current_linked: bool = False) -> list[str]:
    """The end of an IPython traceback as VS Code's notebook view shows it, copied from inside the innermost frame's
    lines (its `File ...` line left out): each numbered line a link to its place in the file (`[225](file:///x/y.py:225)`,
    under a remote `https://vscode-remote+.../x/y.py:185`), the current one's too in some releases, then the exception."""
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    assert frame.lineno is not None
    numbers = range(max(1, frame.lineno - 2), frame.lineno + 1)
    lines = []
    for number in numbers:
        link = f"[{number}]({url}{frame.filename}:{number})"
        code = linecache.getline(frame.filename, number).rstrip("\n")
        current = number == frame.lineno
        shown = link if not current or current_linked else str(number)
        lines.append(f"{'--> ' if current else '    '}{shown} {code}")
    return [*lines, "", *traceback.format_exception_only(exc)[-1].rstrip("\n").split("\n")]


def vscode_exception(exc: BaseException, trailing_line: bool = False) -> list[str]:
    """What VS Code's Python debugger shows where an exception stopped it, as copied from the editor: the
    type, the message, the exception it was raised from (its exception line, then the chain's separator), the frames
    newest first (each with its source line), the outermost marked as the one it is paused in; some copies end with
    the exception line."""
    frames = traceback.extract_tb(exc.__traceback__)
    name = type(exc).__qualname__
    lines = [f"Exception has occurred: {name}       (note: full exception trace is shown but execution is "
             f"paused at: {frames[0].name})", *str(exc).split("\n")]
    if (cause := exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)) is not None:
        separator = "The above exception was the direct cause of the following exception:" if exc.__cause__ else \
            "During handling of the above exception, another exception occurred:"
        lines += [*traceback.format_exception_only(cause)[-1].rstrip("\n").split("\n"), "", separator, ""]
    for index, frame in enumerate(reversed(frames)):
        current = " (Current frame)" if index == len(frames) - 1 else ""
        lines += [f'  File "{frame.filename}", line {frame.lineno}, in {frame.name}{current}', f"    {frame.line}"]
    return [*lines, *([f"{name}: {exc}"] if trailing_line else [])]


def editor_linked(lines: list[str]) -> list[str]:
    """A CPython traceback as an editor's notebook output copies it: each frame's path and line number
    a markdown link to the file (`File "[x.py", line 3](file:///x.py#line=2), in f`)."""
    def link(m: re.Match) -> str:
        return f"{m[1]}[{m[2]}\", line {m[3]}](file:///{m[2].lstrip('/')}#line={int(m[3]) - 1}){m[4]}"

    return [re.sub(r'^(\s*File ")(.+?)", line (\d+)(, in .*)$', link, line) for line in lines]


def line_number_linked(lines: list[str]) -> list[str]:
    """An editor's copy that made each frame's line number a markdown link to the source
    (`File "x.py", [line 3](https://host/x.py?l=3), in f`)."""
    return [re.sub(r'^(\s*File "(.+?)", )line (\d+)', r"\1[line \3](https://source.example/\2?l=\3)", line)
            for line in lines]


def on_one_line(lines: list[str]) -> str:
    """A paste that lost its line breaks and indentation (a forum rendering it as one paragraph): one line."""
    return " ".join(line.strip() for line in lines if line.strip())


def curly_quoted(lines: list[str], strip: bool) -> list[str]:
    """A word processor's copy: typographic quotes around each frame's path, the indentation stripped or not."""
    quoted = [re.sub(r'File "([^"]*)"', "File \u201c\\1\u201d", line) for line in lines]
    return [line.strip() for line in quoted] if strip else quoted


# ----------------------------------------------------------------------------- Rich

RICH_MODULE = """\
def load_shard(name):
    return {}[name]


def load_weights():
    try:
        load_shard("lm_head.weight")
    except KeyError as err:
        raise RuntimeError("weights incomplete") from err
"""


class _LegacyConsoleFile(io.StringIO):
    encoding = "cp1252"  # (a legacy Windows console's: no box characters)


def rich_traceback(width: int = 100, deep: bool = False, ascii_box: bool = False) -> list[str]:
    """Rich's own rendering (rich.traceback.Traceback, as `rich.traceback.install()` prints it) of a
    KeyError that a RuntimeError wraps, raised in a module under a long path (`deep`: longer than the
    box is wide, so that the frames' places wrap); `ascii_box`: on a legacy Windows console, which draws it in ASCII."""
    return _rich_rendering(lambda path: width, deep, ascii_box)


def rich_traceback_wrapped_before_function() -> list[str]:
    """`rich_traceback` as wide as the raising frame's place up to its line number (the box's sides and margins
    added): that fills its row, and the box wraps the place at the blank before `in load_shard`."""
    lines = _rich_rendering(lambda path: len(f"{path}:2") + 4)
    assert any(line.endswith(".py:2 \u2502") and below.startswith("\u2502 in load_shard") for line, below in zip(lines, lines[1:]))
    return lines


def _rich_rendering(width: Callable[[Path], int], deep: bool = False, ascii_box: bool = False) -> list[str]:
    """The error `rich_traceback` draws, `width(path of the module that raised it)` wide."""
    from rich.console import Console
    from rich.traceback import Traceback

    with tempfile.TemporaryDirectory() as folder:
        nested = ("lib", "python3.11", "site-packages", "inference_server", "model_executor") if deep else ()
        path = Path(folder, *nested, "site-packages", "weights_loader_package", "sharded_checkpoint_loading.py")
        path.parent.mkdir(parents=True)
        path.write_text(RICH_MODULE)
        scope: dict = {}
        exec(compile(RICH_MODULE, str(path), "exec"), scope)
        try:
            scope["load_weights"]()
        except RuntimeError as err:
            raised = err
        else:
            raise AssertionError("load_weights did not raise")
        wide = width(path)
        console = Console(file=_LegacyConsoleFile() if ascii_box else io.StringIO(), width=wide, color_system=None,
                          legacy_windows=ascii_box)
        console.print(Traceback.from_exception(type(raised), raised, raised.__traceback__, width=wide))
        return console.file.getvalue().splitlines()


def rich_logged_traceback(width: int = 120) -> list[str]:
    """Rich's logging handler (`RichHandler(rich_tracebacks=True)`) logging the same error with `logger.exception`: the
    record's time, level and message, its traceback box under the message's column, each line padded to the width."""
    from rich.console import Console
    from rich.logging import RichHandler

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "site-packages", "weights_loader_package", "sharded_checkpoint_loading.py")
        path.parent.mkdir(parents=True)
        path.write_text(RICH_MODULE)
        scope: dict = {}
        exec(compile(RICH_MODULE, str(path), "exec"), scope)
        console = Console(file=io.StringIO(), width=width, color_system=None)
        logger = logging.getLogger("rich_logged_traceback")
        logger.addHandler(handler := RichHandler(console=console, rich_tracebacks=True))
        logger.propagate = False
        try:
            scope["load_weights"]()
        except RuntimeError:
            logger.exception("Error calling tool 'read'")
            return console.file.getvalue().splitlines()
        finally:
            logger.removeHandler(handler)
    raise AssertionError("load_weights did not raise")


# ----------------------------------------------------------------------------- pasted and exported

def newest_first(lines: list[str], strip: bool = True) -> list[str]:
    """A log viewer's export, newest line first, indentation stripped."""
    return [line.strip() if strip else line for line in reversed(lines)]


def broken_after_path(lines: list[str]) -> list[str]:
    """A paste that broke each frame line after its path (`File "/x/y.py",` then `line 3, in f`) and
    lost the indentation."""
    out = []
    for line in lines:
        if m := re.match(r'^\s*(File "[^"]*",) (line .*)$', line):
            out += [m[1], m[2]]
        else:
            out.append(line.strip())
    return out


def frames_on_one_line(lines: list[str]) -> list[str]:
    """A copy that dropped the line breaks between a traceback's frames: every frame, source and caret
    line on one line, then a blank line and the exception line (the header cut away)."""
    stack = [line.strip() for line in lines if line.startswith(" ")]
    return [" ".join(stack), "", *[line for line in lines[1:] if line and not line.startswith(" ")]]


def collapsed(lines: list[str]) -> list[str]:
    """A paste whose indentation was collapsed to one space, as a web page renders runs of blanks."""
    return [f" {line.lstrip()}" if line[:1] == " " else line for line in lines]


def stripped(lines: list[str], gap: bool = False) -> list[str]:
    """A paste that lost its indentation, optionally with a blank line before the exception line."""
    out = [line.strip() for line in lines]
    return [*out[:-1], "", out[-1]] if gap else out


def unquoted_paths(lines: list[str]) -> list[str]:
    """Frame lines whose paths lost their quotes (`File /x/y.py, line 3, in f`), as a chat or a notebook
    renderer that took them for markup shows them."""
    return [re.sub(r'File "([^"]+)", line', r"File \1, line", line) for line in lines]


def misaligned(lines: list[str], indent: int = 4) -> list[str]:
    """A whole traceback indented as a markdown code block, its first frame line one blank short."""
    out = [" " * indent + line for line in lines]
    first = next(i for i, line in enumerate(lines) if line.startswith("  File "))
    out[first] = out[first][1:]
    return out


def reindented(lines: list[str], source: int = 6) -> list[str]:
    """A traceback re-indented by hand in a description, copied from its first frame on (no header):
    the first frame line flush left, the other frame lines and the exception line two blanks in, the
    source and caret lines `source` blanks in."""
    out = []
    for line in lines[1:]:
        text = line.strip()
        if line.startswith("  File "):
            out.append(text if not out else "  " + text)
        elif line.startswith("    "):
            out.append(" " * source + line[4:])
        else:
            out.append("  " + text)
    return out


def html_rendered(lines: list[str]) -> list[str]:
    """A traceback pasted into an issue outside a code block, copied from the rendered page: the renderer
    took `<module>`, `<lambda>` and the like for HTML tags and dropped them, and the copy lost the blanks
    they left at the lines' ends."""
    return [re.sub(r"<[A-Za-z][^<>]*>", "", line).rstrip() for line in lines]


def double_spaced(lines: list[str]) -> list[str]:
    """A paste that doubled every line break (a blank line after each line)."""
    return [piece for line in lines for piece in (line, "")][:-1]


def markdown_bold(lines: list[str]) -> list[str]:
    """A paste where the user put the exception line(s) in bold."""
    return [f"**{line}**" if line and not line[0].isspace() and ": " in line and "Traceback" not in line
            and not line.startswith(("The above", "During handling")) else line for line in lines]


def build_backend_output(lines: list[str]) -> list[str]:
    """pip running a build backend: every line of its output indented two spaces, then pip's own."""
    return [*("  " + line if line else "" for line in lines), "  error: subprocess-exited-with-error", "  ",
            "  × Building wheel for vllm (pyproject.toml) did not run successfully.", "  │ exit code: 1",
            "  ╰─> See above for output.", "ERROR: Failed building wheel for vllm"]


PYTEST_SUITE = """
    def has_unfinished_requests():
        return True


    def load(name):
        raise ValueError(f"no weights named {name}\\nlooked in 3 shards")


    def test_requests_finish():
        assert not has_unfinished_requests()


    def test_weights_load():
        load("lm_head")
"""


def pytest_report(style: str = "long", suite: str = PYTEST_SUITE, columns: int = 80, *options: str) -> list[str]:
    """pytest's own report of two failing tests (a failed assert, an error raised in a helper; or those
    of `suite`), run for real in a child process with the given `--tb` style and `options`, on a terminal `columns`
    wide."""
    with tempfile.TemporaryDirectory() as folder:
        test = Path(folder) / "test_engine.py"
        test.write_text(textwrap.dedent(suite))
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", f"--tb={style}", "-p", "no:cacheprovider", *options,
                               test.name], cwd=folder, capture_output=True, text=True, timeout=120, check=False,
                              env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "COLUMNS": str(columns)})
    return done.stdout.splitlines()


def pytest_collection_error() -> list[str]:
    """pytest's report of a test module that failed to import (a name its helper module lacks), run for
    real in a child process."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "engine_helpers.py").write_text("WEIGHTS = 1\n")
        (Path(folder) / "test_engine_import.py").write_text(
            "from engine_helpers import load_weights  # noqa: F401\n\n\ndef test_load():\n    pass\n")
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_engine_import.py"],
                              cwd=folder, capture_output=True, text=True, timeout=120, check=False,
                              env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    return done.stdout.splitlines()


def pytest_collection_typeerror() -> list[str]:
    """pytest's report of a test module whose import raised something else than an ImportError (a helper
    module's class body failing), run for real: `ERROR collecting`, the short style's frames, the `E` lines."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "engine_models.py").write_text(
            "def check(kind):\n    return issubclass(kind, int)\n\n\nclass Plugin:\n    ok = check(None)\n")
        (Path(folder) / "test_engine_models.py").write_text("import engine_models  # noqa: F401\n\n\ndef test_load():\n    pass\n")
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_engine_models.py"],
                              cwd=folder, capture_output=True, text=True, timeout=120, check=False,
                              env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    return done.stdout.splitlines()


def web_viewer(lines: list[str]) -> list[str]:
    """A CI job's log copied from its web page (Buildkite's): each line a table cell, `\xa0 | `, then the
    runner's time."""
    return [f"\xa0 | [2024-06-25T12:58:33Z] {line}".rstrip() for line in lines]


def tabbed(lines: list[str]) -> list[str]:
    """A CI log viewer's copy: a tab in front of every line."""
    return [f"\t{line}" for line in lines]


def blockquoted(lines: list[str], depth: int = 1) -> list[str]:
    """A paste quoted in markdown: `> ` per level on each line, `>` alone on a blank one."""
    return [("> " * depth + line) if line else "> " * (depth - 1) + ">" for line in lines]


def hard_wrapped(lines: list[str], width: int) -> list[str]:
    """A terminal's copy with hard line breaks every `width` columns."""
    return [piece for line in lines for piece in ([line[i:i + width] for i in range(0, len(line), width)] or [""])]


def word_wrapped(lines: list[str], width: int) -> list[str]:
    """A console that wraps at blanks (the last one that fits in `width` columns, the blank itself dropped), a
    word longer than the width broken at it: a frame line's word File alone, its quoted path on the next line."""
    return [piece for line in lines
            for piece in textwrap.wrap(line, width, break_on_hyphens=False, drop_whitespace=True) or [""]]


# ----------------------------------------------------------------------------- logged error lines

def uvicorn_bind_error() -> list[str]:
    """uvicorn's `logger.error(exc)` when the port is taken: the OSError asyncio raises, for real."""
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]

    async def serve():
        await asyncio.start_server(lambda reader, writer: None, "127.0.0.1", port)

    try:
        err = capture(lambda: asyncio.run(serve()))
    finally:
        taken.close()
    return [f"ERROR:    {err}"]  # uvicorn's default format: '%(levelprefix)s %(message)s'


def logged_repr_without_exception(err: BaseException) -> list[str]:
    """`logger.exception(repr(err))` where no exception is being handled, through vLLM V0's format:
    `ERROR 11-28 03:12:40 client.py:307] RuntimeError('...')`, then logging's `NoneType: None`."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(levelname)s %(asctime)s %(filename)s:%(lineno)d] %(message)s",
                                           datefmt="%m-%d %H:%M:%S"))
    logger = logging.getLogger("vllm.engine.multiprocessing.client")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.exception(repr(err))
    finally:
        logger.removeHandler(handler)
    return out.getvalue().splitlines()


def logged_class(exc: BaseException, fmt: str, said: str, level: int = logging.ERROR,
                 datefmt: str = "%m/%d %H:%M:%S") -> list[str]:
    """`logger.log(level, said.format(cls=type(exc), exc=exc))` through a logging format `fmt`: the class as
    `type()` prints it (`<class 'RuntimeError'>`)."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter(fmt, datefmt=datefmt))
    logger = logging.getLogger("trainer")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.log(level, said.format(cls=type(exc), exc=exc))
    finally:
        logger.removeHandler(handler)
    return out.getvalue().splitlines()


def logged_oserror() -> list[str]:
    """`logger.error("...: %s: %s", type(err).__name__, err)` through logging's asctime format."""
    err = OSError(28, "No space left on device")
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(asctime)s - %(name)s - %(levelname)s - %(message)s"))
    logger = logging.getLogger("trainer.checkpoint")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.error("saving step 1200 failed: %s: %s", type(err).__name__, err)
    finally:
        logger.removeHandler(handler)
    return out.getvalue().splitlines()


def _execute_model():
    _load_shard("model-00004")


def _worker_step():
    try:
        _execute_model()
    except ValueError as err:
        err.add_note(traceback.format_exc())  # a worker keeping its own stack in the error it re-raises
        raise


def traceback_in_a_note() -> list[str]:
    """An exception carrying a note that is a whole traceback of itself."""
    return text_of(capture(_worker_step)).splitlines()


def printed_in_step(exc: BaseException, copies: int = 2) -> str:
    """The exception line of `exc` as `copies` ranks print it at the same moment: CPython's hook writes
    the class's module and a dot, its name, `: ` and the message one by one (pythonrun.c's
    print_exception_message), so the ranks' writes alternate piece by piece."""
    cls = type(exc)
    pieces = [cls.__module__, "."] if cls.__module__ not in ("builtins", "__main__") else []
    pieces.append(cls.__qualname__)
    if str(exc):
        pieces += [": ", str(exc)]
    return "".join(piece * copies for piece in pieces)


def check_seq_length(args):
    assert args.encoder_seq_length is not None


def check_seq_length_of(args):
    assert args.model.encoder_seq_length is not None and args.ready


def check_seq_length_said(args):
    assert args.encoder_seq_length is not None, "--seq-length is required"
