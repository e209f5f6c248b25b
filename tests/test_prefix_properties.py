"""Property: tracebacks behind prefixes nobody listed come out exactly as they went in.

Each process gets a random prefix, of random shape (fields of words, numbers, ticking clocks,
brackets and `key=value` joined by random separators, ending in a delimiter as real prefixes do), and
writes it on every line: real tracebacks, log records. (Not two plain words in a row: in front of a
traceback header, `a b] Scheduler hit an exception: ` reads as a message; the frames teach such a
prefix, but the first header keeps it in its context.) The processes interleave line by line, maybe
behind a container runtime's prefix or with a known logger prefix inside. The parser has never seen
these prefixes: it must learn them, tell the processes apart by them, and lose or invent nothing. The
fast path must agree with the line path.
"""

from __future__ import annotations

import os
import random
import string
from dataclasses import dataclass
from itertools import pairwise

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from analyzer.core.infer_prefix import channel_key
from analyzer.core.records import EventKind
from analyzer.core.scan import events_from_lines
from analyzer.sources.chunkscan import ChunkScanner
from analyzer.sources.lines import split_lines, utf8_chunks
from tests.realtb import actual_chain, expected_chain, text_of
from tests.support import CALENDAR, NO_NOTICES
from tests.test_properties import EXCEPTIONS, STANDALONE_RECORDS

_SOAK = os.environ.get("ANALYZER_PROPERTY_EXAMPLES")
PROPERTY = settings(max_examples=int(_SOAK or 60), derandomize=not _SOAK, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

CLOCK = "\0clock\0"  # stands for a time of day that ticks from line to line
WORD = st.text(string.ascii_letters + "_", min_size=1, max_size=7)
FIELD = st.one_of(
    WORD, st.integers(0, 99999).map(str), st.just(CLOCK),
    WORD.map(lambda w: f"[{w}]"), st.tuples(WORD, st.integers(0, 9999)).map(lambda t: f"({t[0]} pid={t[1]})"),
    st.tuples(WORD, st.integers(0, 99)).map(lambda t: f"{t[0]}={t[1]}"),
    st.tuples(WORD, st.integers(0, 999)).map(lambda t: f"{t[0]}.py:{t[1]}"),
)
SEPARATOR = st.sampled_from((" ", "  ", " | ", " - ", ":", "/", "|", " :: "))
END = st.sampled_from(("] ", " | ", " - ", "> ", ") ", "]:", "} "))


@st.composite
def prefixes(draw) -> str:
    fields = draw(st.lists(FIELD, min_size=1, max_size=4))
    text = fields[0]
    for before, field in pairwise(fields):
        separator = draw(SEPARATOR)
        if separator.isspace() and before.isalpha() and field.isalpha():
            separator = " | "
        text += separator + field
    return text + draw(END)


def _ticked(prefix: str, line: int) -> str:
    seconds = 36000 + line * 7
    return prefix.replace(CLOCK, f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}")


@dataclass(frozen=True)
class Written:
    line_start: int
    line_end: int
    context: str
    chain: tuple


@st.composite
def logs(draw):
    count = draw(st.integers(1, 3))
    own = draw(st.lists(prefixes(), min_size=count, max_size=count))
    # Processes that differ, and not only after the end of another's prefix (`[a] - ` and `[a] - b] ` is
    # one process printing `b] ...` as far as anyone can tell).
    assume(len({channel_key(p.replace(CLOCK, "10:00:00")) for p in own}) == count)
    assume(not any(a != b and b.startswith(a) for a in own for b in own))
    inner = draw(st.sampled_from((None, "vllm")))
    queues: dict[int, list[tuple[str, object]]] = {}
    items = []
    for process in range(count):
        for _ in range(draw(st.integers(1, 3))):
            if draw(st.booleans()):
                exc = draw(EXCEPTIONS)
                context = draw(st.sampled_from(("", "Scheduler hit an exception:")))
                body = text_of(exc).rstrip("\n").split("\n")
                if context:
                    body[0] = f"{context} {body[0]}"
                if inner == "vllm":
                    body = [f"ERROR 11-28 03:12:40 [core.py:{process}] {line}" for line in body]
                tag = len(items)
                items.append((expected_chain(exc), context))
            else:
                body, tag = [draw(st.sampled_from(STANDALONE_RECORDS))], None
            queues.setdefault(process, []).extend((text, tag) for text in body)
    order = [p for p, queue in queues.items() for _ in queue]
    random.Random(draw(st.integers(0, 2**32))).shuffle(order)
    container = draw(st.booleans())
    lines, spans = [], {}
    for process in order:
        text, tag = queues[process].pop(0)
        line = _ticked(own[process], len(lines)) + text
        if container:
            line = f"2026-12-01T10:00:{len(lines) % 60:02d}.{len(lines):09d}Z stderr F {line}"
        lines.append(line)
        if tag is not None:
            spans.setdefault(tag, []).append(len(lines))
    written = {numbers[0]: Written(numbers[0], numbers[-1], items[tag][1], items[tag][0])
               for tag, numbers in spans.items()}
    return lines, written


@PROPERTY
@given(logs(), st.lists(st.integers(0, 2**31), max_size=12))
def test_tracebacks_behind_random_prefixes_come_out_exactly(log, cuts):
    lines, written = log
    data = "\n".join(lines).encode()
    points = sorted({cut % (len(data) + 1) for cut in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)])]
    events = list(events_from_lines(split_lines(chunks), "prefixed.log", NO_NOTICES, CALENDAR))
    fast = ChunkScanner("prefixed.log", NO_NOTICES, calendar=CALENDAR)
    assert [e for chunk in utf8_chunks(chunks) for e in fast.feed(chunk)] + list(fast.finish()) == events
    found = {}
    for event in events:
        assert event.kind is EventKind.TRACEBACK and not event.truncated, event
        found[event.span.line_start] = Written(event.span.line_start, event.span.line_end, event.context,
                                               actual_chain(event.chain))
    assert found == written
