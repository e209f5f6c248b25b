"""A constant (`plain`) message is matched as written: a `%d` or `{x}` in it is text, not a field."""

from __future__ import annotations

import pytest

from analyzer.core.matcher import Matcher, MatchKind
from analyzer.core.schema import Pattern
from tests.realtb import capture


def _raise_literal(text: str):
    def raise_it():
        raise AssertionError(text)  # the source forgot its `f` prefix or `%` operator
    return raise_it


@pytest.mark.parametrize("text", ["Recv twice for {stage_idx=} {mb_index=} before forward",
                                  "Index out of range in Input %d %d", "K must be in {128, 192}"])
def test_a_constant_message_matches_only_itself(text):
    message = str(capture(_raise_literal(text)))
    matcher = Matcher([Pattern("p", "AssertionError", text, style="plain")])
    assert matcher.match_message(message, "AssertionError").match_kind is MatchKind.EXACT
    other = message.replace("{", "").replace("%d", "7").replace("}", "")
    assert matcher.match_message(other, "AssertionError").match_kind is not MatchKind.EXACT
