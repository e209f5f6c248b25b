"""Native crashes, as the runtime prints them: each read into one ErrorInfo (two where the runtime names
the exception that made it fail: `parse_chain`).

- faulthandler (Python/faulthandler.c): `Fatal Python error: Segmentation fault`, a blank line,
  `Current thread 0x00007f... (most recent call first):` (or `Thread 0x...`, or `Stack (most recent
  call first):`) over frames `  File "x.py", line 3 in f` (innermost first, no comma before `in`),
  more threads, then `Extension modules: ... (total: N)`. `dump_traceback_later` heads its dump
  `Timeout (0:05:00)!`. The type is the dump's label as printed (`Fatal Python error`, on Windows `Windows
  fatal exception`), the message what it names (`Segmentation fault`, `access violation`: `signal_of` tells the
  signal a shell names the same crash by), the frames are the crashing thread's, innermost last as in a traceback. A fatal error of the interpreter itself (`Fatal Python
  error: init_interp_main: can't initialize time`) prints the exception behind it after `Python runtime
  state: ...` (Python/pylifecycle.c): that exception is the cause, the fatal error its consequence.
- libc++'s (clang, macOS): `libc++abi: terminating due to uncaught exception of type
  tvm::runtime::InternalError: <what()>`, one line (and faulthandler's dump of the abort, if on).
- libstdc++'s terminate handler: `terminate called after throwing an instance of 'c10::Error'`, then
  `  what():  <message>` whose text may run over several lines, and for c10 errors `Exception raised
  from f at file.cpp:43 (most recent call first):` and `frame #0: ...` lines; faulthandler's dump of
  the abort (`Fatal Python error: Aborted`) may follow. The type is the C++ exception's; the raise
  site is the innermost Python frame of the dump, else the place the c10 error names. A Ray worker's
  handler logs its own first line instead: `Unhandled exception: N3c105ErrorE. what(): <message>`, the
  type mangled as `typeid().name()` gives it (read back: `c10::Error`).
  Written straight to stderr, it may follow half a line (a progress bar's; unittest's `test_x ... `), and a
  copy that lost its line breaks holds `what():` and its text on the same line. The handler writes its
  line in pieces (the words, the type, the closing quote): ranks that abort at once interleave them, so
  the type may be written twice in a row (`'c10::Errorc10::Error'`) and the other ranks' closing pieces
  (`c10::Error'`, `'`) come on lines of their own before `what():`.
- A CUDA error printed on its own (`CUDA error: an illegal memory access was encountered`) with the
  hint lines torch's CUDA check adds after it, or by a kernel library's own check before it exits
  (`Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:368 'an illegal memory access was
  encountered'`, the check's file and line its site). No type is printed: the type is `CUDAError`
  (UNTYPED_CUDA), the message the CUDA error as torch words it.
- A Rust program's `main` that returned an error (anyhow's report: text-embeddings-inference, NVIDIA Dynamo, Rust
  routers): `Error: <message>`, a blank line, `Caused by:` and the causes, one per indented line (`    0: ...`
  numbered where there are several), outermost first. The causes are the chain, the innermost its root; the type is
  `Error`, as printed. (`Error: ...` alone is any tool's word: only with `Caused by:` under it is it this report.)
- UCX's signal handler (UCX carries NIXL's and Mooncake's transfers and Open MPI's): `[host:pid:tid:n] Caught signal 11
  (Segmentation fault: invalid permissions for mapped object at address 0x...)`, then `==== backtrace (tid: N) ====`, the
  native frames numbered, and a rule. The type is the signal's name as printed, the message what it says after it.
- A kernel's device-side assertion, printed by each thread that hit it before CUDA reports
  `device-side assert triggered` (`/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1500:
  indexSelectSmallIndex: block: [32,0,0], thread: [63,0,0] Assertion `srcIndex < srcSelectDimSize`
  failed.`; ROCm: `.../IndexKernel.hip:94: operator(): Device-side assertion `...' failed.`): one line
  each, the kernel's file, line and function its site.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import regex

from analyzer.core import grammar as g
from analyzer.core import lazyregex
from analyzer.core.prefixes import DMLC
from analyzer.core.records import ErrorInfo, Frame, Link, short_type

__all__ = ["FATAL_ERROR", "RUST_CAUSES", "UNTYPED_CUDA", "WINDOWS_FATAL", "Marks", "continues", "interrupts", "parse", "parse_chain",
           "source_place", "thread_head",
           "names_its_cause", "rust_error", "signal_of", "starts"]

UNTYPED_CUDA = "CUDAError"  # the type of a CUDA error printed without one
RUST_CAUSES = "Caused by:"  # (under a Rust program's `Error: ...`: see rust_error)
_RUST_ERROR = lazyregex.compile(rf"^Error: (?P<message>{g.TEXT})\s*+$")
_RUST_CAUSE = lazyregex.compile(rf"^\s+(?:\d+: )?(?P<message>{g.TEXT})\s*+$")

# faulthandler writes to the stream's descriptor at once: after whatever was half written there (a
# progress bar's line, which tqdm ends only when it is done).
_FATAL_AT = lazyregex.compile(rf"^.*?(?:Fatal Python error|(?P<windows>Windows fatal exception)): \s*+(?P<message>{g.TEXT})\s*+$")
_TIMEOUT = lazyregex.compile(r"^Timeout \((?P<duration>\d+:\d\d:\d\d(?:\.\d+)?)\)!\s*$")
# (newer interpreters name the thread after its number: `Current thread 0x00007604707c3780 [python] (most recent ...`)
_THREAD = lazyregex.compile(r"^(?:(?P<current>Current thread)|Thread) 0x[0-9a-fA-F]+(?: \[[^\]\n]*\])? \(most recent call first\):\s*$"
                            r"|^Stack \(most recent call first\):\s*$")
_FRAME = lazyregex.compile(rf'^\s+File "(?P<path>[^"]*)", line (?P<lineno>\d+|\?\?\?) in \s*+(?P<function>{g.TEXT})\s*+$')
_DUMP_DETAIL = lazyregex.compile(r"^\s+(?:<no Python frame>|\.\.\.)\s*$|^(?:Extension modules: |Python runtime state: |"
                                 r"Garbage-collecting)|^\s*$")
_STATE = "Python runtime state: "
# (written to stderr at once, as faulthandler's: after whatever was half written there; a copy that lost its line
# breaks holds its what() on the same line, and what came after it)
_TERMINATE = lazyregex.compile(r"^.*?(?<![A-Za-z])terminate called after throwing an instance of '(?P<type>[^']+)'"
                               rf"(?:\s+what\(\):(?:\s++(?P<message>{g.TEXT}))?)?\s*+$")
# Ray's terminate handler (src/ray/util/logging.cc) logs the type as `typeid(e).name()` gives it, mangled
# (`N3c1016DistBackendErrorE`), and what() on its record's line: `... logging.cc:108: Unhandled exception: <type>. what(): ...`.
_RAY_TERMINATE = lazyregex.compile(rf"^.*?\bUnhandled exception: (?P<type>\w+)\. what\(\):(?:\s++(?P<message>{g.TEXT}))?\s*+$")
_LOGGED_LEVEL = lazyregex.compile(r"\b(?:CRITICAL|FATAL|ERROR|WARNING|WARN|INFO|DEBUG)\b")
# libc++'s (clang, macOS): the type and what() on one line.
_LIBCXX_TERMINATE = lazyregex.compile(r"^.*?libc\+\+abi: terminating (?:due to|with) uncaught exception of type "
                                      rf"(?P<type>(?:\w+::)*\w+): \s*+(?P<message>(?:{g.TEXT})?)\s*+$")
# Objective-C's runtime on an NSException nobody caught (a macOS GUI call off the main thread: matplotlib's, Tk's), maybe
# behind what stderr held: `*** Terminating app due to uncaught exception 'NSInternalInconsistencyException', reason:
# '...'`, then `*** First throw call stack:` and the frames in brackets, then libc++'s word of the same abort.
_OBJC_TERMINATE = lazyregex.compile(r"^.*?\*\*\* Terminating app due to uncaught exception '(?P<type>[^']+)', reason: '(?P<message>.*)'\s*$")
_OBJC_STACK = lazyregex.compile(r"^(?:\*\*\* First throw call stack:|[()]|\s*\d+\s+\S+\s+0x[0-9a-fA-F]+ .*"
                                r"|libc\+\+abi: terminating (?:due to|with) uncaught exception of type NSException.*)\s*$")
_WHAT = lazyregex.compile(rf"^(?:.*?\s)?what\(\):\s++(?P<message>(?:{g.TEXT})?)\s*+$")  # (behind what its terminate line had before it)
# Another rank's pieces of its terminate line, between this one's and its what(): its type and closing quote, or the quote.
_PIECE = lazyregex.compile(r"^(?:(?:\w+::)*\w+)?'+\s*$")
# A C++ source file's name and a line (where it ends: a search for the path's start would go back over every run of
# path characters), and what ends the path before it.
_SOURCE_END = lazyregex.compile(r"\.(?:cpp|cc|cxx|cu|cuh|hpp|h):(?P<lineno>\d+)\b")
_PATH_STOPS = (" ", "\t", "\n", "'", '"', "(", "[")
_RAISED_FROM = lazyregex.compile(r"^Exception raised from (?P<function>.+?) at (?P<path>.+?):(?P<lineno>\d+)"
                                 r" \(most recent call first\):\s*$")
_CXX_FRAME = lazyregex.compile(r"^frame #\d+: ")
_CUDA = lazyregex.compile(rf"^CUDA error: \s*+(?P<message>{g.TEXT})\s*+$")
_DEVICE_ASSERT = lazyregex.compile(r"^(?P<path>(?:[A-Za-z]:)?[^\s:]+):(?P<lineno>\d+): (?P<function>\S.*?): (?:block: \[[\d,]+\], "
                                   r"thread: \[[\d,]+\] Assertion `.*`|Device-side assertion `.*') failed\.\s*$")
_CUDA_CHECK = lazyregex.compile(r"^Failed: Cuda error (?P<path>\S+?):(?P<lineno>\d+) '(?P<message>.*)'\s*$")
_UCX_SIGNAL = lazyregex.compile(r"^(?:\[[^\]\s]+:\d+:\d+:\d+\] )?Caught signal \d+ \((?P<name>[^:)]+?)(?:: (?P<message>.*?))?\)\s*$")
_UCX_BACKTRACE = lazyregex.compile(r"^=+(?: backtrace \(tid:\s*\d+\) =+)?\s*$|^\s*\d+\s+\S")  # its head, frames and rule
_CUDA_HINT = lazyregex.compile(r"^(?:CUDA kernel errors might be asynchronously reported|For debugging consider passing "
                               r"CUDA_LAUNCH_BLOCKING|Compile with `TORCH_USE_CUDA_DSA`|Device-side assertion)")
FATAL_ERROR, WINDOWS_FATAL = "Fatal Python error", "Windows fatal exception"  # faulthandler's labels, the types of its dumps
# faulthandler's names for the fatal signals (faulthandler_handlers in Python/faulthandler.c).
_SIGNALS = {"Segmentation fault": "SIGSEGV", "Aborted": "SIGABRT", "Bus error": "SIGBUS",
            "Floating point exception": "SIGFPE", "Illegal instruction": "SIGILL"}
# The shell's word for the process's death by one of them, after what the process printed (`Aborted (core dumped)`)
_SHELL_SIGNAL = lazyregex.compile("^(?:" + "|".join(_SIGNALS) + r")(?: +\(core dumped\))?(?:\s|$)")


def _fatal(text: str) -> regex.Match | None:
    # (`in` first: the pattern looks all along)
    return _FATAL_AT.match(text) if "Fatal Python error: " in text or "Windows fatal exception: " in text else None


def _libcxx(text: str) -> regex.Match | None:
    """libc++'s terminate handler's line, maybe behind what stderr held (a progress bar's last redraw); not a log
    record that relays it (see _terminate)."""
    return _behind_output(text, "libc++abi: terminating", _LIBCXX_TERMINATE)


def _objc(text: str) -> regex.Match | None:
    return _behind_output(text, "*** Terminating app due to uncaught exception", _OBJC_TERMINATE)


def _behind_output(text: str, words: str, pattern: regex.Pattern) -> regex.Match | None:
    """`pattern`'s match of a runtime's report that begins with `words`, maybe behind what the stream held before it;
    None where a level before the words makes the line a log record that relays it."""
    at = text.find(words)
    return pattern.match(text) if at >= 0 and not _LOGGED_LEVEL.search(text, 0, at) else None


def _terminate(text: str) -> regex.Match | None:
    """The terminate handler's line, maybe behind what stderr held; not a log record that relays it (a level before
    it: `ERROR: terminate called ...`), which the line's page in notices.yaml reads. Or Ray's handler's record."""
    if "Unhandled exception: " in text:
        return _RAY_TERMINATE.match(text)
    return _behind_output(text, "terminate called after", _TERMINATE)


def _demangled(name: str) -> str:
    """A type's name as the Itanium C++ ABI mangles it (`N3c105ErrorE`, `St13runtime_error`: each part its length, then
    its name) read back (`c10::Error`); any other name as it is."""
    rest = name[1:-1] if name[:1] == "N" and name[-1:] == "E" else name
    parts = ["std"] if rest.startswith("St") else []
    rest = rest[2:] if parts else rest
    while rest:
        digits = len(rest) - len(rest.lstrip("0123456789"))
        if not 0 < digits <= 4 or len(rest) < digits + int(rest[:digits]) or not int(rest[:digits]):
            return name
        parts.append(rest[digits:digits + int(rest[:digits])])
        rest = rest[digits + int(rest[:digits]):]
    return "::".join(parts) or name


def signal_of(info: ErrorInfo) -> str | None:
    """The signal a faulthandler dump says ended the process (`Fatal Python error: Segmentation fault`: SIGSEGV), or a
    report typed by the signal's name (UCX's), as a shell's report of the same crash names it; None for any other error."""
    return _SIGNALS.get(info.message if info.exception_type == FATAL_ERROR else info.exception_type)


def names_its_cause(info: ErrorInfo) -> bool:
    """Whether this is an interpreter's fatal error of its own (`init_sys_streams: ...`, no signal), which prints the
    exception that made it fail after it."""
    return info.exception_type == FATAL_ERROR and signal_of(info) is None and not info.frames


def starts(text: str) -> bool:
    """The first line of a native crash report."""
    return bool(_fatal(text) or _TIMEOUT.match(text) or _terminate(text) or _CUDA.match(text)
                or _CUDA_CHECK.match(text) or _DEVICE_ASSERT.match(text) or _libcxx(text) or _objc(text)
                or ("Caught signal " in text and _UCX_SIGNAL.match(text)))


def thread_head(text: str) -> bool:
    """Whether `text` heads a thread's stack in faulthandler's dump (`Current thread 0x... (most recent call first):`)."""
    return _THREAD.match(text) is not None


def interrupts(text: str) -> bool:
    """A report the runtime prints over whatever was being printed: it ends an exception message.
    (A `CUDA error:` line may be a line of a message, as torch's own messages start that way.)"""
    return bool(_fatal(text) or _TIMEOUT.match(text) or _terminate(text) or _libcxx(text) or _objc(text))


def rust_error(text: str) -> bool:
    """Whether `text` may be the first line of a Rust program's error report (its `Caused by:` tells)."""
    return _RUST_ERROR.match(text) is not None


@dataclass(slots=True)
class Marks:
    """What a report's lines hold so far, each line read once: `continues` asks it of every line it is given, and
    a report may run to thousands of lines (a thread dump, a long what())."""

    read: int = 0  # lines read
    dumped: bool = False  # faulthandler's line of a fatal error: its dump follows
    ended: bool = False  # a blank line or the place a C++ error was raised from: what()'s text is over
    what: bool = False  # what() on a line after the first (it came after other ranks' pieces)

    def update(self, lines: list[str]) -> Marks:
        if len(lines) < self.read:  # (trimmed: read afresh)
            self.read, self.dumped, self.ended, self.what = 0, False, False, False
        for index in range(self.read, len(lines)):
            line = lines[index]
            self.dumped = self.dumped or _fatal(line) is not None
            self.ended = self.ended or not line.strip() or _RAISED_FROM.match(line) is not None
            self.what = self.what or (index > 0 and _WHAT.match(line) is not None)
        self.read = len(lines)
        return self


def continues(lines: list[str], text: str, marks: Marks | None = None) -> bool:
    """Whether `text` is the next line of the report begun by `lines` (`marks`: what they hold, kept with them)."""
    first = lines[0]
    if _RUST_ERROR.match(first):
        return _RUST_CAUSE.match(text) is not None  # (each cause indented, under `Caused by:`)
    if _fatal(first) or _TIMEOUT.match(first):
        return bool(_THREAD.match(text) or _FRAME.match(text) or _DUMP_DETAIL.match(text)
                    or (lines[-1].startswith(_STATE) and g.BARE_EXCEPTION_LINE.match(text)))
    if _CUDA.match(first):
        return bool(_CUDA_HINT.match(text))
    if _UCX_SIGNAL.match(first):  # (its backtrace ends at the rule under its frames)
        return _UCX_BACKTRACE.match(text) is not None and set(lines[-1].strip()) != {"="}
    if _CUDA_CHECK.match(first) or _DEVICE_ASSERT.match(first):
        return False
    held = (marks or Marks()).update(lines)
    if _objc(first):  # (its throw's stack, then libc++'s word of the abort)
        return _OBJC_STACK.match(text) is not None
    if _libcxx(first):  # what() is on its line; faulthandler's dump of the abort may follow
        if held.dumped:
            return bool(_THREAD.match(text) or _FRAME.match(text) or _DUMP_DETAIL.match(text))
        fatal = _fatal(text)
        return fatal is not None and fatal["message"] == "Aborted"
    # terminate: what() and its text up to a blank line, then the c10 source location and C++ frames,
    # then maybe faulthandler's dump of the abort that followed (the same crash, with Python frames)
    if held.dumped:
        return bool(_THREAD.match(text) or _FRAME.match(text) or _DUMP_DETAIL.match(text))
    if (fatal := _fatal(text)) is not None:
        return fatal["message"] == "Aborted"
    thrown = _terminate(first)
    if thrown is not None and thrown["type"].endswith(_PYTHON_ERROR_IN_CXX) and (  # (pybind11's what(): its stack)
            text.strip() == g.PYBIND_AT and not lines[-1].strip()
            or g.PYBIND_FRAME.match(text) and (lines[-1].strip() == g.PYBIND_AT or g.PYBIND_FRAME.match(lines[-1]))):
        return True
    if _RAISED_FROM.match(text) or _CXX_FRAME.match(text) or not text.strip():
        return True
    if thrown is not None and thrown["message"] is None and not held.what:
        return bool(_WHAT.match(text) or _PIECE.match(text))  # (not what() on its line: it comes after other ranks' pieces)
    return not interrupts(text) and not _SHELL_SIGNAL.match(text) and not held.ended


def parse_chain(lines: list[str]) -> tuple[ErrorInfo, ...]:
    """The report's exceptions, the cause first: the exception a fatal error names, if it names one; a Rust
    program's causes, the innermost first."""
    if (rust := _RUST_ERROR.match(lines[0])) is not None:
        causes = [m["message"] for text in lines[1:] if (m := _RUST_CAUSE.match(text)) is not None]
        messages = [*reversed(causes), rust["message"]]
        return tuple(ErrorInfo("Error", message, link=Link.FIRST if k == 0 else Link.CAUSE, has_traceback=False)
                     for k, message in enumerate(messages))
    crash = parse(lines)
    said = next((m for k, text in enumerate(lines[1:], 1) if lines[k - 1].startswith(_STATE)
                 and (m := g.EXCEPTION_LINE.match(text)) is not None), None) if _fatal(lines[0]) else None
    if said is None and (held := _python_error(crash)) is not None:
        return held, replace(crash, message=crash.message.partition(_PYBIND_STACK)[0], link=Link.CAUSE)
    if said is None:
        return (crash,)
    # (raised in the thread the dump shows, at its innermost frame: a C function that returned NULL, say)
    cause = ErrorInfo(said["type"], (said["message"] or "").strip(), crash.frames, has_traceback=False)
    return cause, ErrorInfo(crash.exception_type, crash.message, crash.frames, Link.CAUSE, crash.has_traceback)


_PYTHON_ERROR_IN_CXX = "::error_already_set"  # pybind11's C++ exception that holds a Python error
_PYBIND_STACK = f"\n\n{g.PYBIND_AT}\n"


def _python_error(crash: ErrorInfo) -> ErrorInfo | None:
    """The Python error pybind11's exception holds, its what() `Type: message`, maybe with its stack under `At:`
    (innermost first, see grammar.PYBIND_FRAME); None for any other C++ exception."""
    if not crash.exception_type.endswith(_PYTHON_ERROR_IN_CXX):
        return None
    said, _, stack = crash.message.partition(_PYBIND_STACK)
    if (typed := g.EXCEPTION_LINE.match(said)) is None:
        return None
    frames = [Frame(m["path"], int(m["lineno"]), m["function"]) for text in stack.splitlines()
              if (m := g.PYBIND_FRAME.match(text)) is not None]
    message = "\n".join([typed["message"] or "", *said.splitlines()[1:]]).strip()
    return ErrorInfo(typed["type"], message, tuple(reversed(frames)), has_traceback=bool(frames))


def parse(lines: list[str]) -> ErrorInfo:
    """The report's exception: type, message and (innermost last) frames."""
    first = lines[0]
    if fatal := _fatal(first):
        return ErrorInfo(WINDOWS_FATAL if fatal["windows"] else FATAL_ERROR, fatal["message"], _thread_frames(lines[1:]))
    if timeout := _TIMEOUT.match(first):
        return ErrorInfo("faulthandler.Timeout", f"no progress for {timeout['duration']}", _thread_frames(lines[1:]))
    if ucx := _UCX_SIGNAL.match(first):
        return ErrorInfo(ucx["name"], ucx["message"] or "", has_traceback=False)
    if _CUDA.match(first):
        return ErrorInfo(UNTYPED_CUDA, "\n".join([first.strip(), *(line.strip() for line in lines[1:])]),
                         has_traceback=False)
    if device := _DEVICE_ASSERT.match(first):
        return ErrorInfo(UNTYPED_CUDA, first.strip(), (Frame(device["path"], int(device["lineno"]), device["function"]),),
                         has_traceback=False)
    if objc := _objc(first):
        return ErrorInfo(objc["type"], objc["message"], has_traceback=False)
    if libcxx := _libcxx(first):
        what, placed = _own_place(libcxx["type"], libcxx["message"])
        return ErrorInfo(libcxx["type"], what, _thread_frames(lines[1:]) or placed, has_traceback=len(lines) > 1)
    if check := _CUDA_CHECK.match(first):
        return ErrorInfo(UNTYPED_CUDA, f"CUDA error: {check['message']}",
                         (Frame(check["path"], int(check["lineno"]), ""),), has_traceback=False)
    thrown = _terminate(first)
    assert thrown is not None  # (what remains of what `starts` takes)
    message = [thrown["message"]] if thrown["message"] is not None else []
    awaiting = thrown["message"] is None  # its what(), maybe after other ranks' pieces
    frames: tuple[Frame, ...] = ()
    dump = next((index for index, text in enumerate(lines) if _fatal(text)), len(lines))
    for text in lines[1:dump]:
        if raised := _RAISED_FROM.match(text):
            frames = (Frame(raised["path"], int(raised["lineno"]), raised["function"]),)
            break
        if awaiting and (what := _WHAT.match(text)):
            message.append(what["message"])
        elif awaiting and _PIECE.match(text):
            continue
        elif not text.strip() and message:
            message.append("")
        elif not _CXX_FRAME.match(text):
            message.append(text.rstrip())
        awaiting = False
    kind = _demangled(_type_once(thrown["type"]))
    what, placed = _own_place(kind, "\n".join(message).strip())
    frames = _thread_frames(lines[dump + 1:]) or frames or placed  # where Python was when it aborted, if it was
    return ErrorInfo(kind, what, frames or source_place(what), has_traceback=bool(frames))


def source_place(what: str) -> tuple[Frame, ...]:
    """The first C++ source file and line a what() names, as its site (TensorRT-LLM's checks: `[TensorRT-LLM][ERROR]
    Assertion failed: ... (/src/cpp/common/mpiUtils.cpp:211)`); none where it names none."""
    if (m := _SOURCE_END.search(what)) is None:
        return ()
    start = max(what.rfind(stop, 0, m.start()) for stop in _PATH_STOPS) + 1
    path = what[start:m.start("lineno") - 1]
    return (Frame(path, int(m["lineno"]), ""),) if "/" in path or "\\" in path else ()


def _own_place(kind: str, message: str) -> tuple[str, tuple[Frame, ...]]:
    """A what() that begins with dmlc's log place and the exception's own class again (TVM's: `[12:42:06]
    /src/model.cc:41: InternalError: Check failed: ...`): the text after them, and the place as its site."""
    m = DMLC.pattern.match(message)
    named = f"{short_type(kind)}: "
    if m is None or not message.startswith(named, m.end()):
        return message, ()
    return message[m.end() + len(named):], (Frame(m["path"], int(m["lineno"]), ""),)


def _type_once(name: str) -> str:
    """The type a terminate line names, once where ranks wrote it in a row (`c10::Errorc10::Error`)."""
    return next((once for copies in range(2, g.MAX_IN_STEP + 1) if (once := g.written_once(name, copies))), name)


def _thread_frames(lines: list[str]) -> tuple[Frame, ...]:
    """The frames of the crashing thread (the current one, else the first dumped), innermost last."""
    blocks: list[tuple[bool, list[Frame]]] = []
    for text in lines:
        if thread := _THREAD.match(text):
            blocks.append((bool(thread["current"]), []))
        elif (frame := _FRAME.match(text)) and blocks:
            lineno = int(frame["lineno"]) if frame["lineno"].isdigit() else None
            blocks[-1][1].append(Frame(frame["path"], lineno, frame["function"]))
    if not blocks:
        return ()
    _, frames = next((block for block in blocks if block[0]), blocks[0])
    return tuple(reversed(frames))
