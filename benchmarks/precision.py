"""How often the matcher is wrong on errors that are not SGLang's, and how often it finds SGLang's own.

    python benchmarks/precision.py                  # both corpora, ~1-2 min on an idle core
    python benchmarks/precision.py --extracted 0    # only the real raises on the foreign side
    python benchmarks/precision.py --verbose        # every wrong or missed case

Foreign (benchmarks/foreign.py): real exceptions from the standard library, numpy, pandas, PyYAML
and users' scripts, messages extracted from other installed packages raised at their own sites,
and SGLang's own texts raised from vLLM files (the two projects share code and messages). Any SGLang pattern they get is a wrong diagnosis. The extracted messages are also matched
alone, as `analyzer explain "<message>"` sees them, to show what a message without a traceback gets.

Drift (benchmarks/drift.py): shipped SGLang signatures as released, moved, extended and reworded.
A case is right when its own signature is found, a twin when a signature with the same fixed text in
a function of the same name in the same file is (the traceback cannot tell them apart), wrong when
another is, missed when none is.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analyzer.core.matcher import Diagnosis, Matcher, MatchKind
from analyzer.core.notices import NoticeDetector
from analyzer.core.scan import events_from_lines
from analyzer.core.schema import Pattern
from analyzer.core.template.fields import literal_text
from analyzer.sources.packs import load_packs
from benchmarks import drift, foreign

_NO_NOTICES = NoticeDetector(())  # the corpora hold exceptions: no log line of them is a notice


def diagnose(matcher: Matcher, text: str) -> Diagnosis:
    events = list(events_from_lines(text.splitlines(), "case.log", _NO_NOTICES))
    assert len(events) == 1, text
    return matcher.match_event(events[0])


def is_sglang(pattern: Pattern | None) -> bool:
    return pattern is not None and (pattern.source.project == "sglang" or pattern.id.startswith("sglang."))


def score_foreign(matcher: Matcher, cases: list[foreign.Case], verbose: bool) -> tuple[int, Counter]:
    kinds: Counter = Counter()
    wrong = 0
    for case in cases:
        found = diagnose(matcher, case.text)
        kinds[found.match_kind.value] += 1
        if is_sglang(found.pattern) and found.match_kind is not MatchKind.POSSIBLE:
            wrong += 1
            if verbose:
                print(f"  WRONG {case.name}: {found.pattern.id} ({found.match_kind.value}, {found.evidence.names})")
    return wrong, kinds


def _as_printed(pattern: Pattern) -> tuple:
    """What a traceback can tell of a signature: the fixed text of its message (field names never
    show), the file, and the function's own name (a frame shows `update_and_read`, not its class)."""
    function = (pattern.source.function or "").rsplit(".", 1)[-1]
    return " ".join(literal_text(pattern.template, pattern.style).split()), pattern.source.path, function


def score_drift(matcher: Matcher, cases: list[drift.DriftCase], verbose: bool) -> dict[str, Counter]:
    by_form: dict[str, Counter] = {form: Counter() for form in drift.FORMS}
    for case in cases:
        found = diagnose(matcher, case.text)
        truth = matcher.pattern(case.pattern_id)
        got = found.pattern
        if got is None:
            verdict = "missed"
        elif got.id == truth.id:
            verdict = "right"
        elif _as_printed(got) == _as_printed(truth):
            verdict = "twin"
        else:
            verdict = "wrong"
        by_form[case.form][verdict] += 1
        if verbose and verdict in ("wrong", "missed"):
            print(f"  {verdict.upper()} {case.form} {case.pattern_id}" + (f" -> {got.id} ({found.match_kind.value})"
                                                                           if got else ""))
    return by_form


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--extracted", type=int, default=150, metavar="N",
                        help="messages to extract from each other installed package (default 150)")
    parser.add_argument("--drift", type=int, default=500, metavar="N", help="SGLang signatures to drift")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    patterns = list(load_packs(use_env=False).patterns)
    matcher = Matcher(patterns)

    real = foreign.real_cases()
    wrong, kinds = score_foreign(matcher, real, args.verbose)
    print(f"foreign, raised for real: {len(real)} cases, {wrong} wrong SGLang diagnoses "
          f"({wrong / len(real):.1%}); kinds {dict(kinds)}")
    if args.extracted:
        extracted = foreign.extracted_cases(foreign.installed_packages(), args.extracted)
        wrong_x, kinds_x = score_foreign(matcher, extracted, args.verbose)
        print(f"foreign, extracted from {len(foreign.installed_packages())} packages and raised at their sites: "
              f"{len(extracted)} cases, {wrong_x} wrong ({wrong_x / max(1, len(extracted)):.1%}); "
              f"kinds {dict(kinds_x)}")
        alone = Counter(matcher.match_message(_message(c.text)).match_kind.value for c in extracted
                        if is_sglang(matcher.match_message(_message(c.text)).pattern))
        print(f"  the same messages alone, no traceback: SGLang patterns offered {dict(alone)}")

    mirrored = foreign.mirrored_cases(patterns, args.drift)
    wrong_m, kinds_m = score_foreign(matcher, mirrored, args.verbose)
    print(f"foreign, SGLang's texts raised in vllm/ at the mirrored path: {len(mirrored)} cases, {wrong_m} wrong "
          f"({wrong_m / max(1, len(mirrored)):.1%}); kinds {dict(kinds_m)}")

    cases = drift.cases([p for p in patterns if "extracted" in p.tags], args.drift)
    by_form = score_drift(matcher, cases, args.verbose)
    total = Counter()
    for form in drift.FORMS:
        counts = by_form[form]
        total.update(counts)
        n = sum(counts.values())
        print(f"drift {form:14} {n:4} cases: right {counts['right']}, twin {counts['twin']}, "
              f"wrong {counts['wrong']}, missed {counts['missed']}; recall "
              f"{(counts['right'] + counts['twin']) / max(1, n):.1%}")
    n = sum(total.values())
    print(f"drift all            {n:4} cases: recall {(total['right'] + total['twin']) / max(1, n):.1%}, "
          f"wrong pins {total['wrong']}")
    return 0


def _message(text: str) -> str:
    """`Type: message` of a formatted traceback's last line, as a user would paste it."""
    return text.rstrip("\n").rsplit("\n", 1)[-1]


if __name__ == "__main__":
    sys.exit(main())
