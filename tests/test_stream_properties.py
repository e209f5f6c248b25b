"""Property: a log that arrives through a pipe in random chunks, with pauses long enough for the
engine to let out what looks complete (`tail -f server.log | analyzer scan -`), gives the incidents
the same bytes give read from a file. The logs are those of tests/test_properties.py (real
tracebacks behind every prefix format, processes interleaved), alone or in the JSON envelopes of
Docker's json-file driver or `journalctl -o json`.

CI runs a few derandomised examples (each pauses for real, about a second in all);
ANALYZER_PROPERTY_EXAMPLES=200 explores more.
"""

from __future__ import annotations

import itertools
import os
import threading
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.core.records import EventKind
from tests import logformats as fmt
from tests.realtb import actual_chain
from tests.support import builtin_engine
from tests.test_properties import encoded, logs

_SOAK = os.environ.get("ANALYZER_PROPERTY_EXAMPLES")
STREAMED = settings(max_examples=int(_SOAK or 8), derandomize=not _SOAK, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])
PAUSE = 0.15  # past the engine's idle tick (0.1 s): what looks complete is let out
_FIFOS = itertools.count()


def _summary(incidents) -> list[tuple]:
    """What an incident says but the input's name and which of its occurrences it shows: of
    occurrences on several streams that end together, a pause may let one out before the others."""
    return [(i.role, i.count, i.ranks, i.first_seen, i.last_seen, i.fingerprint, i.is_run_root,
             [(o.line_start, o.line_end) for o in i.occurrences], i.event.kind, actual_chain(i.event.chain),
             i.event.truncated) for i in incidents]


def _write(path: str, chunks: list[bytes], pauses: list[float]) -> None:
    with open(path, "wb", buffering=0) as pipe:
        for chunk, pause in zip(chunks, pauses):
            pipe.write(chunk)
            time.sleep(pause)


@STREAMED
@given(st.data())
def test_random_pauses_on_a_pipe_give_the_incidents_of_the_file(tmp_path, data):
    lines, _ = data.draw(logs())
    envelope = data.draw(st.sampled_from(("none", "docker", "journal")))
    if envelope == "docker":
        lines = fmt.docker_json_file([("stderr", line) for line in lines])
    elif envelope == "journal":
        lines = fmt.journal_json([(4321, line) for line in lines])
    chunks = data.draw(encoded(lines))
    # Most cuts go on at once or after a moment; a few (the cost of the test) pause past the idle tick.
    long = set(data.draw(st.lists(st.integers(0, len(chunks) - 1), max_size=3)))
    pauses = [PAUSE if i in long else data.draw(st.sampled_from((0.0, 0.0, 0.002))) for i in range(len(chunks))]
    whole = tmp_path / f"whole{next(_FIFOS)}.log"
    whole.write_bytes(b"".join(chunks))
    engine = builtin_engine()
    expected = _summary(engine.analyse([str(whole)]).incidents)

    fifo = str(tmp_path / f"pipe{next(_FIFOS)}")
    os.mkfifo(fifo)
    writer = threading.Thread(target=_write, args=(fifo, chunks, pauses))
    writer.start()
    analysis = engine.analysis()
    for event in engine.events(engine.expand([fifo], print), print):
        analysis.add(event)
    writer.join(30)
    assert _summary(analysis.incidents()) == expected
    assert all(i.event.kind is EventKind.TRACEBACK for i in analysis.incidents())
