"""Coverage-guided fuzzing of the parser, matcher, pattern packs and CLI (atheris / libFuzzer).

Not part of CI: a bounded run by hand, whose results are kept in benchmarks/FUZZ.md. Each target
runs in its own process for a fixed time; an exception that escapes, a single input that takes
longer than `--unit-timeout` seconds, or memory above `--rss-mb` is a crash, saved with its input.

    .venv/bin/pip install atheris                    # not a test dependency: only this script needs it
    .venv/bin/python benchmarks/fuzz.py              # every target, 120 s each, summary as a table
    .venv/bin/python benchmarks/fuzz.py --target pipeline --seconds 600
    .venv/bin/python benchmarks/fuzz.py --replay pipeline crash-1a2b...   # rerun one saved input

Targets:
  pipeline  bytes in random chunks -> split_lines -> normalise -> assemble (with idle ticks) ->
            match against the built-in packs -> group into incidents -> JSON and text output;
            every line out of the splitter must respect the line cap
  cli       `analyzer scan` (main) on a file holding the bytes, plain or as a gzip cut anywhere,
            in each output format; the exit code must be a documented one
  packs     a pattern-pack file holding the bytes -> load -> matcher -> match its own examples
  template  a template and a message from the bytes -> compile in each style -> match
  fastpath  bytes in random chunks -> the fast path (ChunkScanner, Hyperscan) and every line fed to a
            FileScanner: the events, line count, first time, host and run configuration must be equal (the fast
            path keeps the lines the earlier inputs peeled, as an engine's next files do; the line path does not)
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ("pipeline", "cli", "packs", "template", "fastpath")
MAX_LEN = {"pipeline": 8192, "cli": 8192, "packs": 4096, "template": 2048, "fastpath": 8192}

# Tokens of the formats the parser reads: libFuzzer splices them into inputs, which gets it past
# the grammar's literal text much sooner than bit flips would.
DICTIONARY = [
    "Traceback (most recent call last):\n", '  File "/usr/lib/python3/site-packages/sglang/srt/x.py", line ',
    ", in ", "\n    ", "    ^^^^^^^^\n", "  [Previous line repeated 996 more times]\n",
    "The above exception was the direct cause of the following exception:\n",
    "During handling of the above exception, another exception occurred:\n",
    "  + Exception Group Traceback (most recent call last):\n", "  | ", "  +-+---------------- 1 ----------------\n",
    "    +---------------- ... ----------------\n", "    +------------------------------------\n",
    "ValueError: ", "RuntimeError: ", "torch.OutOfMemoryError: ", "KeyboardInterrupt\n", "AssertionError\n",
    "usage: launch_server.py [-h]\n", "launch_server.py: error: ", "[rank3]: ", "(VllmWorker rank=1 pid=4321) ",
    "(pid=1234, ip=10.0.0.1) ", "2026-12-01T10:00:00.123456789Z stderr F ", "Dec  1 10:00:00 gpu-7 python3[55]: ",
    "[2026-08-28 10:00:01 DP1 TP3] ", "ERROR:root:", "2026-12-01 10:00:00,123 - sglang - ERROR - ",
    "INFO 12-01 10:00:00 [engine.py:12] ", "\x1b[31m", "\x1b[0m", "\r\n", "\r", "\x00", "\xef\xbb\xbf", "\xff\xfe",
    '{"message": "', '", "rank": 2, "host": "gpu-3"}', "\\n", "Scheduler hit an exception: ",
    "DeepSeekV4 CP supports moe_a2a_backend in ('none', 'deepep'), got 'x'.",
    "{name!r}", "{}", "{0}", "{x:d}", "%s", "%(key)r", "%d", "{{", "}}",
    "patterns:\n  - id: ", "    exception: ", "    template: ", "    fixes: [{title: ", "    examples: [",
    "&a ", "*a", "!!python/object", "[[[[[[[[", "]]]]]]]]",
]


# ------------------------------------------------------------------ the targets (run under atheris)

def _targets():
    """Import the analyzer under atheris' coverage instrumentation and build the target functions."""
    import atheris

    with atheris.instrument_imports(include=["analyzer"]):
        from rich.console import Console

        from analyzer.cli import main
        from analyzer.commands.exit_codes import Exit
        from analyzer.core.matcher import Matcher
        from analyzer.core.normalize import PeelMemo
        from analyzer.core.scan import FileScanner, events_from_lines
        from analyzer.core.template import TemplateError, compile_template, parse_value
        from analyzer.core.yearless import Calendar
        from analyzer.engine import Engine, Options
        from analyzer.sinks.serialize import incident_dict
        from analyzer.sinks.text import render_report
        from analyzer.sources.chunkscan import ChunkScanner
        from analyzer.sources.lines import split_lines, utf8_chunks
        from analyzer.sources.packs import load_packs

    work = Path(tempfile.mkdtemp(prefix="analyzer-fuzz-"))
    os.environ["XDG_CACHE_HOME"] = str(work / "cache")
    engine = Engine(Options())
    peels = PeelMemo()  # (the fast path's, across inputs)
    calendar = Calendar(datetime(2026, 12, 7))  # (stamps without a year are times, as in a scan)
    marker_room = 64  # " [analyzer: line cut, N more bytes dropped]"

    def pipeline(data: bytes) -> None:
        fdp = atheris.FuzzedDataProvider(data)
        chunk = fdp.ConsumeIntInRange(1, 97)
        max_line = fdp.ConsumeIntInRange(8, 4096)
        tick_every = fdp.ConsumeIntInRange(0, 7)  # an idle tick (follow/stdin mode) every N lines
        render = fdp.ConsumeIntInRange(0, 7) == 0  # Rich is slow: text output for one input in eight
        blob = fdp.ConsumeBytes(fdp.remaining_bytes())
        chunks = [blob[i:i + chunk] for i in range(0, len(blob), chunk)]

        def lines():
            for count, line in enumerate(split_lines(chunks, max_line), 1):
                if len(line) > max_line + marker_room:  # each byte kept gives at most one character
                    raise AssertionError(f"line of {len(line)} characters passed a cap of {max_line} bytes")
                yield line
                if tick_every and count % tick_every == 0:
                    yield None

        analysis = engine.analysis()
        for event in events_from_lines(lines(), "fuzz.log", engine.notices, calendar):
            analysis.add(event)
        incidents = analysis.incidents()
        json.dumps([incident_dict(i) for i in incidents], ensure_ascii=False)
        if render:
            render_report(incidents, Console(file=io.StringIO(), width=100), show_all=True, summary="fuzz")

    log = work / "scan.log"
    small_pack = work / "pack"
    small_pack.mkdir()
    for name in ("common/distributed.yaml", "sglang/curated/deepseek_v4_cp.yaml"):
        (small_pack / name.replace("/", "_")).write_bytes((ROOT / "patterns" / name).read_bytes())

    def cli(data: bytes) -> None:
        fdp = atheris.FuzzedDataProvider(data)
        fmt = fdp.PickValueInList(["text", "jsonl", "json"])
        cut_gzip = fdp.ConsumeBool()
        blob = fdp.ConsumeBytes(fdp.remaining_bytes())
        if cut_gzip:
            packed = gzip.compress(blob)
            blob = packed[:len(packed) * (1 + len(blob) % 7) // 8]  # cut anywhere, sometimes in the header
        log.write_bytes(blob)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["scan", "--all", "--no-builtin", "--patterns", str(small_pack), "--format", fmt, str(log)])
        if code not in (Exit.OK, Exit.FOUND, Exit.USAGE):
            raise AssertionError(f"undocumented exit code {code}")
        if fmt != "text":
            for line in out.getvalue().splitlines() if fmt == "jsonl" else [out.getvalue()]:
                json.loads(line)

    pack_dir = work / "user_pack"
    pack_dir.mkdir()

    def packs(data: bytes) -> None:
        (pack_dir / "fuzz.yaml").write_bytes(data)
        loaded = load_packs([str(pack_dir)], builtin=False, use_env=False)
        for problem in loaded.problems:
            str(problem)
        user = Matcher(loaded.patterns)
        for pattern in loaded.patterns:
            for example in pattern.examples[:3]:
                user.match_message(example, pattern.short_exception)
            user.match_message(pattern.template)

    def template(data: bytes) -> None:
        fdp = atheris.FuzzedDataProvider(data)
        style = fdp.PickValueInList(["auto", "fstring", "format", "percent"])
        text = fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 300))
        message = fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes())
        parse_value(message)
        try:
            compiled = compile_template(text, style)
        except TemplateError:
            return
        compiled.match(message)

    def fastpath(data: bytes) -> None:
        fdp = atheris.FuzzedDataProvider(data)
        chunk = fdp.ConsumeIntInRange(1, 4096)
        max_line = fdp.PickValueInList([16, 64, 300, 1 << 20])
        blob = fdp.ConsumeBytes(fdp.remaining_bytes())
        slow = FileScanner("fuzz.log", engine.notices, calendar=calendar)
        events = [e for line in split_lines([blob], max_line) for e in slow.feed(line)] + list(slow.finish())
        fast = ChunkScanner("fuzz.log", engine.notices, max_line, peels=peels, calendar=calendar)
        fast_events = [e for piece in utf8_chunks(blob[i:i + chunk] for i in range(0, len(blob), chunk))
                       for e in fast.feed(piece)] + list(fast.finish())
        expected = (events, slow.lines, slow.first_timestamp, slow.host, slow.run_config)
        got = (fast_events, fast.lines, fast.scanner.first_timestamp, fast.scanner.host, fast.scanner.run_config)
        if got != expected:
            differ = next((index for index, (a, b) in enumerate(zip(expected, got)) if a != b), None)
            raise AssertionError(f"the fast path differs from the line path (field {differ}, chunks of {chunk} bytes, "
                                 f"lines cut at {max_line})")

    return {"pipeline": pipeline, "cli": cli, "packs": packs, "template": template, "fastpath": fastpath}


def _seeds(target: str, into: Path) -> None:
    """Starting inputs: the fixture logs, real pack files, and real templates."""
    into.mkdir(parents=True, exist_ok=True)
    limit = MAX_LEN[target]
    if target in ("pipeline", "cli", "fastpath"):
        for log in sorted((ROOT / "fixtures" / "logs").glob("*.log")):
            body = log.read_bytes()
            for index, start in enumerate(range(0, len(body), limit // 2)):
                (into / f"{log.stem}-{index}").write_bytes(b"\x05\x40\x00" + body[start:start + limit - 3])
    elif target == "packs":
        for pack in sorted((ROOT / "patterns").rglob("*.yaml")):
            (into / pack.name).write_bytes(pack.read_bytes()[:limit])
    else:
        for index, (text, message) in enumerate([
            ("DeepSeekV4 CP supports moe_a2a_backend in {supported}, got {cfg.backend!r}.",
             "DeepSeekV4 CP supports moe_a2a_backend in ('none', 'deepep'), got 'x'."),
            ("expected %d ranks, got %r", "expected 8 ranks, got [1, 2]"),
            ("{a}{b}{c}{d}!", "x" * 400),
        ]):
            raw = text.encode()
            (into / f"template-{index}").write_bytes(b"\x00" + bytes([min(len(raw), 255)]) + raw + message.encode())


def _run_target(target: str, seconds: int, corpus: Path, unit_timeout: int, rss_mb: int) -> None:
    import atheris

    functions = _targets()
    seeds = corpus.parent / f"{target}-seeds"
    _seeds(target, seeds)
    dictionary = corpus.parent / "tokens.dict"
    dictionary.write_text("".join(f'"{_dict_escape(token)}"\n' for token in DICTIONARY))
    corpus.mkdir(parents=True, exist_ok=True)
    atheris.Setup([sys.argv[0], str(corpus), str(seeds), f"-max_total_time={seconds}", "-print_final_stats=1",
                   f"-max_len={MAX_LEN[target]}", f"-timeout={unit_timeout}", f"-rss_limit_mb={rss_mb}",
                   f"-dict={dictionary}", f"-artifact_prefix={corpus.parent}/{target}-"],
                  functions[target])
    atheris.Fuzz()


def _dict_escape(token: str) -> str:
    """libFuzzer's dictionary syntax: printable ASCII as is, anything else as \\xNN."""
    return "".join(chr(b) if 32 <= b < 127 and b not in b'"\\' else f"\\x{b:02x}" for b in token.encode())


def _replay(target: str, path: str) -> None:
    """Run one saved input without the fuzzer, so an escaping exception shows its traceback."""
    functions = _targets()
    functions[target](Path(path).read_bytes())
    print("no crash")


# ------------------------------------------------------------------ the driver

def _drive(targets: list[str], seconds: int, workdir: Path, unit_timeout: int, rss_mb: int) -> int:
    rows, failed = [], 0
    for target in targets:
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, __file__, "--run", target, "--seconds", str(seconds), "--workdir", str(workdir),
             "--unit-timeout", str(unit_timeout), "--rss-mb", str(rss_mb)],
            capture_output=True, text=True, errors="replace", cwd=ROOT)
        wall = time.monotonic() - started
        log = proc.stdout + proc.stderr
        (workdir / f"{target}.log").write_text(log)
        runs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", log)
        crashes = re.findall(r"(?:Test unit written to|artifact_prefix.*?; Test unit written to) (\S+)", log)
        executions = int(runs[-1]) if runs else 0
        failed += bool(crashes) or proc.returncode != 0
        rows.append((target, round(wall), executions, crashes[0] if crashes else "none"))
        print(f"{target}: {executions} executions in {wall:.0f} s, crash: {crashes[0] if crashes else 'none'}",
              file=sys.stderr, flush=True)
        if crashes:
            tail = log[log.find("Uncaught Python exception"):][:3000] if "Uncaught" in log else log[-3000:]
            print(tail, file=sys.stderr)
    print("| target | seconds | executions | crash |\n| --- | --- | --- | --- |")
    for target, wall, executions, crash in rows:
        print(f"| {target} | {wall} | {executions} | {crash} |")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description="Fuzz the analyzer with atheris for a bounded time.")
    parser.add_argument("--target", choices=TARGETS, action="append", help="default: all of them")
    parser.add_argument("--seconds", type=int, default=120, help="fuzzing time per target")
    parser.add_argument("--workdir", type=Path, help="corpus and crash files (default: a new temp dir)")
    parser.add_argument("--unit-timeout", type=int, default=10, help="seconds one input may take")
    parser.add_argument("--rss-mb", type=int, default=2048, help="memory limit of the fuzzing process")
    parser.add_argument("--run", choices=TARGETS, help=argparse.SUPPRESS)
    parser.add_argument("--replay", nargs=2, metavar=("TARGET", "FILE"), help="rerun one saved input")
    args = parser.parse_args()
    if args.replay:
        _replay(*args.replay)
        return 0
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="analyzer-fuzz-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if args.run:
        _run_target(args.run, args.seconds, workdir / f"{args.run}-corpus", args.unit_timeout, args.rss_mb)
        return 0
    print(f"work dir: {workdir}", file=sys.stderr)
    try:
        import atheris  # noqa: F401 - only told here: each target's process imports it
    except ImportError:
        print("fuzz.py needs atheris: .venv/bin/pip install atheris", file=sys.stderr)
        return 2
    return _drive(args.target or list(TARGETS), args.seconds, workdir, args.unit_timeout, args.rss_mb)


if __name__ == "__main__":
    sys.exit(main())
