"""Real SGLang argument validation, matched by the extracted pack to its exact raise site.

Skipped where SGLang is not installed (CI). To run it: a venv with the SGLang wheel and the few
packages its argument code imports, plus this project (see patterns/sglang/EXTRACTED.md).
"""

from __future__ import annotations

import contextlib
import io
import traceback

import pytest

from analyzer.core.matcher import Matcher, MatchKind
from analyzer.core.scan import events_from_lines
from analyzer.sources.packs import builtin_pack_dir, load_pack_files, pack_files
from tests.support import NO_NOTICES

server_args = pytest.importorskip("sglang.srt.server_args", reason="SGLang is not installed")
deepseek_v4_hook = pytest.importorskip("sglang.srt.arg_groups.deepseek_v4_hook")


@pytest.fixture(scope="module")
def extracted_matcher() -> Matcher:
    patterns, problems = load_pack_files(pack_files(builtin_pack_dir() / "sglang" / "extracted"))
    assert not problems
    return Matcher(patterns)


def _logged(exc: BaseException) -> list[str]:
    """The traceback as SGLang's launcher logs it: first line prefixed, the rest unprefixed."""
    lines = "".join(traceback.format_exception(exc)).splitlines()
    return ["[2026-12-02 10:00:00] Launch failed: " + lines[0], *lines[1:]]


@pytest.mark.parametrize("argv, template_start", [
    (["--enable-prefill-cp", "--cp-strategy", "interleave", "--moe-a2a-backend", "mooncake"],
     "DeepSeekV4 CP supports moe_a2a_backend in"),
    (["--enable-prefill-cp", "--cp-strategy", "interleave", "--tp-size", "16"],
     "Context parallel only supports single machine"),
])
def test_real_validation_error_matches_its_raise_site(extracted_matcher, argv, template_start):
    args = server_args.prepare_server_args(["--model-path", "/models/DeepSeek-V4", *argv])
    with pytest.raises((ValueError, AssertionError)) as raised:
        deepseek_v4_hook.validate_deepseek_v4_cp(args)
    (event,) = events_from_lines(_logged(raised.value), "server.log", NO_NOTICES)
    diagnosis = extracted_matcher.match_event(event)
    site = event.root.raise_site
    assert diagnosis.match_kind is MatchKind.EXACT
    assert diagnosis.pattern.template.startswith(template_start)
    assert diagnosis.pattern.source.path == site.relpath == "sglang/srt/arg_groups/deepseek_v4_hook.py"
    assert diagnosis.pattern.source.line == site.lineno
    assert diagnosis.pattern.source.function == site.function == "validate_deepseek_v4_cp"


def test_real_argparse_rejection_is_an_event():
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), pytest.raises(SystemExit):
        server_args.prepare_server_args(["--model-path", "x", "--moe-a2a-backend", "deepep3"])
    (event,) = events_from_lines(stderr.getvalue().splitlines(), "launch.log", NO_NOTICES)
    assert event.root.exception_type == "ArgumentError"
    assert event.root.message.startswith("argument --moe-a2a-backend: invalid choice: 'deepep3'")
