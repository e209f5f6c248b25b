"""A writer that pauses anywhere in a record (`tail -f server.log | analyzer scan -` on a busy
server) must not split it: what a pause lets out early is revised when the record goes on, and the
incidents come out as from the whole file read at once."""

from __future__ import annotations

import os
import threading
import time

import pytest

from analyzer.core.scan import Change
from tests.realtb import capture, text_of
from tests.support import builtin_engine

PAUSE = 0.15  # past the engine's idle tick (0.1 s): every pause lets complete records out


def _chained():
    try:
        {}["weights"]
    except KeyError as err:
        raise RuntimeError("Failed to load weights") from err


def _noted():
    err = ValueError("tensor parallel size 3 does not divide 64 attention heads")
    err.add_note("while building layer 7")
    err.add_note("with --tp-size 3")
    raise err


def _multiline():
    raise RuntimeError("CUDA error: an illegal memory access was encountered\n"
                       "CUDA kernel errors might be asynchronously reported at some other API call.\n"
                       "For debugging consider passing CUDA_LAUNCH_BLOCKING=1")


def _group():
    raise ExceptionGroup("two ranks failed", [ValueError("rank 0"), KeyError("rank 1")])


CASES = [_chained, _noted, _multiline, _group]


def _write_pausing(path, lines: list[str]) -> None:
    with open(path, "w", encoding="utf-8") as pipe:
        for line in lines:
            pipe.write(line + "\n")
            pipe.flush()
            time.sleep(PAUSE)


def _summary(incidents) -> list[tuple]:
    return [(i.info.exception_type, i.info.message, len(i.event.chain), i.count, i.event.span.line_start,
             i.event.span.line_end) for i in incidents]


@pytest.mark.parametrize("func", CASES, ids=lambda f: f.__name__.strip("_"))
def test_a_pause_after_every_line_gives_the_incidents_of_the_whole_file(func, tmp_path):
    lines = ["[2026-12-03 10:00:00 TP0] Scheduler hit an exception: " + text_of(capture(func)).splitlines()[0],
             *text_of(capture(func)).splitlines()[1:], "[2026-12-03 10:00:09 TP0] Decode batch. #running-req: 1"]
    whole = tmp_path / "whole.log"
    whole.write_text("\n".join(lines) + "\n")
    expected = _summary(builtin_engine().analyse([str(whole)]).incidents)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=_write_pausing, args=(fifo, lines))
    writer.start()
    engine = builtin_engine()
    analysis = engine.analysis()
    changes = []
    for event in engine.events(engine.expand([str(fifo)], print), print):
        changes.append(analysis.add(event)[1])
    writer.join(30)
    got = _summary(analysis.incidents())
    assert got == expected
    assert Change.NEW in changes and Change.AGAIN not in changes  # one occurrence, shown then revised
