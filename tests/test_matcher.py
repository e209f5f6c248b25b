"""The matcher's four steps, each on real raised exceptions: exact, raise site, fuzzy, unknown."""

from __future__ import annotations

import pytest

from analyzer.core.matcher import Matcher, MatchKind
from analyzer.core.records import ErrorInfo, Frame
from analyzer.core.scan import events_from_lines
from tests.support import NO_NOTICES
from analyzer.core.schema import Pattern, PatternSource
from tests.realtb import capture, text_of

SITE = PatternSource(project="demo", path="demo/launch.py", line=40, function="Launcher.check_ports")
PATTERNS = [
    Pattern(id="demo.port-in-use", exception="ValueError",
            template="port {port:d} is already in use by {owner!r}; pick another with --port", source=SITE),
    Pattern(id="demo.bare-assert", exception="AssertionError", template="",
            source=PatternSource(project="demo", path="demo/launch.py", line=52, function="Launcher.check_tp")),
    Pattern(id="demo.generic", exception="ValueError", template="{message}"),
    Pattern(id="demo.tp-divides", exception="ValueError",
            template="tensor parallel size {tp} must divide the number of attention heads {heads}"),
]


def _info(exception_type: str, message: str, frame: Frame | None = None) -> ErrorInfo:
    return ErrorInfo(exception_type, message, (frame,) if frame else ())


@pytest.fixture(scope="module")
def matcher() -> Matcher:
    return Matcher(PATTERNS)


def test_exact_match_captures_typed_params(matcher):
    found = matcher.match(_info("ValueError", "port 30000 is already in use by 'nginx'; pick another with --port"))
    assert (found.pattern.id, found.match_kind, found.confidence) == ("demo.port-in-use", MatchKind.EXACT, 1.0)
    assert found.params == {"port": 30000, "owner": "nginx"}


def test_exact_requires_the_exception_type(matcher):
    found = matcher.match(_info("TypeError", "port 30000 is already in use by 'nginx'; pick another with --port"))
    assert found.match_kind is not MatchKind.EXACT


def test_template_of_only_a_field_never_matches_exactly(matcher):
    assert matcher.match(_info("ValueError", "anything at all")).match_kind is MatchKind.UNKNOWN


def test_raise_site_matches_a_reworded_message_and_a_bare_assert(matcher):
    moved = Frame("/opt/venv/lib/python3.11/site-packages/demo/launch.py", 44, "check_ports", "raise ValueError(")
    found = matcher.match(_info("ValueError", "the port you chose is busy", moved))
    assert (found.pattern.id, found.match_kind) == ("demo.port-in-use", MatchKind.RAISE_SITE)
    assert 0.6 <= found.confidence < 1.0
    bare = Frame("/srv/demo/launch.py", 52, "check_tp", "assert tp <= 8")
    assert matcher.match(_info("AssertionError", "", bare)).pattern.id == "demo.bare-assert"


def test_raise_site_outside_the_line_window_is_not_a_match(matcher):
    far = Frame("/srv/demo/launch.py", 400, "check_ports", "raise ValueError(")
    assert matcher.match(_info("ValueError", "the port you chose is busy", far)).match_kind is MatchKind.UNKNOWN


def test_fuzzy_finds_a_message_reworded_between_versions(matcher):
    found = matcher.match(_info("ValueError", "tensor parallel size 3 must evenly divide the number of attention heads 32"))
    assert (found.pattern.id, found.match_kind) == ("demo.tp-divides", MatchKind.FUZZY)
    assert 0.82 <= found.confidence < 1.0


def test_unrelated_message_is_unknown(matcher):
    found = matcher.match(_info("ValueError", "completely different words in this message here"))
    assert found.match_kind is MatchKind.UNKNOWN and found.pattern is None


def _raise_port_error():
    port, owner = 30000, "nginx"
    raise ValueError(f"port {port} is already in use by {owner!r}; pick another with --port")


def _chained():
    try:
        _raise_port_error()
    except ValueError as err:
        raise RuntimeError("server failed to start") from err


def test_chain_diagnosis_points_at_the_link_that_matched(matcher):
    (event,) = events_from_lines(text_of(capture(_chained)).splitlines(), "x.log", NO_NOTICES)
    found = matcher.match_event(event)
    assert (found.pattern.id, found.link) == ("demo.port-in-use", 0)


def test_match_message_understands_a_type_prefix(matcher):
    found = matcher.match_message("ValueError: port 1 is already in use by 'x'; pick another with --port")
    assert found.pattern.id == "demo.port-in-use"
    assert matcher.match_message("TypeError: port 1 is already in use by 'x'; pick another with --port").pattern is None
