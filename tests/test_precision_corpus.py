"""A fast sample of the precision benchmark (benchmarks/precision.py) against the shipped packs:
real errors raised outside SGLang get no SGLang diagnosis, and SGLang's own errors, released,
moved, extended and reworded, are found at their own raise site."""

from __future__ import annotations

from functools import cache

import pytest

from analyzer.core.matcher import Matcher
from analyzer.core.schema import Pattern
from analyzer.sources.packs import load_packs
from benchmarks import drift, foreign
from benchmarks.precision import diagnose, is_sglang


@pytest.fixture(scope="module")
def matcher() -> Matcher:
    return Matcher(load_packs(use_env=False))  # the compiled index, read on demand, as a run reads it


@cache
def every_pattern() -> tuple[Pattern, ...]:
    """The whole pack, to draw cases from (reading it all costs about a second)."""
    return tuple(load_packs(use_env=False).patterns)


def test_foreign_errors_get_no_sglang_diagnosis(matcher):
    cases = foreign.real_cases()
    assert len(cases) >= 250
    wrong = [(case.name, found.pattern.id) for case in cases
             if is_sglang((found := diagnose(matcher, case.text)).pattern)]
    assert wrong == []


def test_sglang_texts_raised_by_another_project_are_not_sglang_errors(matcher):
    cases = foreign.mirrored_cases(list(every_pattern()), sample=40, seed=5)
    # vLLM's own pack may know the text (the projects share code): it must not be SGLang's
    assert [case.name for case in cases if is_sglang(diagnose(matcher, case.text).pattern)] == []


def test_sglang_errors_are_found_as_released_and_as_a_release_changes_them(matcher):
    cases = drift.cases([p for p in every_pattern() if "extracted" in p.tags], sample=40, seed=5)
    assert {case.form for case in cases} == set(drift.FORMS)
    verdicts = []
    for case in cases:
        found = diagnose(matcher, case.text).pattern
        truth = matcher.pattern(case.pattern_id)
        same_text_twin = found is not None and (found.template, found.source.function) == (
            truth.template, truth.source.function)
        verdicts.append("missed" if found is None else "right" if found.id == truth.id or same_text_twin else "wrong")
    assert verdicts.count("wrong") == 0
    assert verdicts.count("right") >= 0.95 * len(verdicts)
