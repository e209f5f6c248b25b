"""Package data that lives outside `analyzer/` in a checkout goes inside it in a built wheel, and the
built-in pattern packs are compiled into the index every run queries.

The pattern packs (`patterns/`) and the bundled sample log (`fixtures/logs/`) are edited where
they are; a non-editable build copies them to `analyzer/_patterns/` and `analyzer/_data/sample.log`,
where `analyzer.sources.packs` and `analyzer.commands.common` look when no checkout is around.
An editable install reads them from the checkout, so nothing is copied then.

The compiled index (`analyzer/_data/patterns.sqlite`) is a build product, kept out of git: a wheel
gets one compiled from the packs it carries, an editable install one in the checkout (which a later
run compiles again when the packs or the code that builds it change).

A wheel also carries the modules in COMPILED compiled to C by mypyc (which build_backend.py asks for),
where a C compiler and Python's headers are found; where they are not, it carries them as Python, the same
code, with a warning. ANALYZER_COMPILE=1 requires the compiled modules (a build that cannot make them fails),
ANALYZER_COMPILE=0 builds without them.
"""

import os
import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py
from setuptools.errors import CCompilerError, ExecError, PlatformError

_ROOT = Path(__file__).resolve().parent
_SAMPLE = _ROOT / "fixtures" / "logs" / "sglang_deepseek_v4_cp_a2a.log"


def _packs():
    sys.path.insert(0, str(_ROOT))  # the analyzer being built, not any installed one
    try:
        from analyzer.sources import packs
    finally:
        sys.path.remove(str(_ROOT))
    return packs


def _compile_index(target: Path) -> None:
    count, problems = _packs().compile_builtin(target)
    for problem in problems:  # `analyzer patterns check` (run by the tests) fails on these
        print(f"warning: built-in pattern skipped: {problem}", file=sys.stderr)
    print(f"compiled {count} built-in patterns into {target}")


class BuildWithData(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            _packs().ensure_builtin_index()  # compiles only when the checkout's index is missing or stale
            return
        target = Path(self.build_lib) / "analyzer"
        shutil.copytree(_ROOT / "patterns", target / "_patterns", dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("*.md"))
        (target / "_data").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(_SAMPLE, target / "_data" / "sample.log")
        _compile_index(target / "_data" / "patterns.sqlite")


# The modules every line read goes through, compiled to C by mypyc where a wheel is built (from the same source,
# type-checked as CI checks it): 1.1-1.5x the speed of a scan, the most on logs dense in errors (README). Each is
# tested compiled as well (.ci/run).
COMPILED = ("analyzer/core/normalize.py", "analyzer/core/assemble.py", "analyzer/core/open_block.py",
            "analyzer/core/scan.py", "analyzer/core/shredded.py", "analyzer/core/infer_prefix.py",
            "analyzer/core/prefixes.py", "analyzer/core/notices.py", "analyzer/sources/chunkscan.py")
_CHOICE = os.environ.get("ANALYZER_COMPILE")  # "1": compiled or fail; "0": never; else compiled where it can be


def _pure(reason: str) -> None:
    """Go on without the compiled modules (the wheel carries their source, which runs the same), unless they are
    required."""
    if _CHOICE == "1":
        sys.exit(f"error: ANALYZER_COMPILE=1, but the core cannot be compiled: {reason}")
    print(f"warning: the core is left uncompiled (a scan runs 1.1-1.5x slower): {reason}", file=sys.stderr)


def _compiled_modules() -> list:
    if _CHOICE == "0" or "bdist_wheel" not in sys.argv:
        return []  # (an editable install never: a module compiled would shadow its source as it is edited)
    try:
        from mypyc.build import mypycify
    except ImportError:  # (a build without isolation, where mypy is not installed)
        _pure("mypyc is not installed (pip install mypy)")
        return []
    try:
        return mypycify(list(COMPILED), opt_level="3", group_name="analyzer")  # (its runtime: analyzer__mypyc)
    except SystemExit as stop:  # (mypyc stops where its type check fails, after printing why)
        _pure(f"mypyc's type check failed ({stop.code})")
        return []


class BuildCompiledOrNone(build_ext):
    """All the compiled modules or none: one that failed to build would leave its shared runtime or its
    neighbours in the wheel without it."""

    def run(self):
        try:
            super().run()
        except (CCompilerError, ExecError, PlatformError) as error:
            _pure(f"{type(error).__name__}: {error}")
            for extension in self.extensions:
                Path(self.get_ext_fullpath(extension.name)).unlink(missing_ok=True)


setup(cmdclass={"build_py": BuildWithData, "build_ext": BuildCompiledOrNone}, ext_modules=_compiled_modules())
