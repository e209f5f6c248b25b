"""Stamps printed without a year (vLLM's logger, syslog and journald) are times: dated, they order incidents, tell
which came first and date what the outputs show, as dated stamps do."""

from __future__ import annotations

import json
import os
from datetime import datetime

import pytest

from analyzer.cli import main
from analyzer.core.normalize import LineNormalizer
from analyzer.core.scan import FileScanner
from analyzer.core.yearless import Calendar
from analyzer.engine import Engine
from analyzer.sources.chunkscan import ChunkScanner
from analyzer.sources.lines import split_lines, utf8_chunks
from tests import logformats as fmt
from tests.realtb import capture, text_of
from tests.support import CALENDAR, NO_NOTICES


def _layer_missing(layer: int) -> None:
    params_dict: dict[str, object] = {}
    params_dict[f"model.layers.{layer}.mlp.experts.w2_weight_offset"]


def _written(path, when: datetime) -> str:
    """The file's modification time set to `when`: what the engine dates its stamps without a year by."""
    os.utime(path, (when.timestamp(), when.timestamp()))
    return str(path)


def _jsonl(capsys, *paths: str) -> list[dict]:
    main(["scan", "--format", "jsonl", *paths])
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


@pytest.mark.parametrize(("stamp", "expected"), [
    ("05-28 03:53:36", datetime(2026, 5, 28, 3, 53, 36)),
    ("05-28 03:53:36.123456789", datetime(2026, 5, 28, 3, 53, 36, 123456)),
    ("Dec  7 19:55:40", datetime(2026, 12, 7, 19, 55, 40)),
    ("Jan 02 00:00:01", datetime(2026, 1, 2, 0, 0, 1)),
    ("12-08 23:00:00", datetime(2026, 12, 8, 23)),  # (a day after: the server's clock may be ahead of this one's)
    ("12-31 23:59:59", datetime(2025, 12, 31, 23, 59, 59)),  # (later in the year than the file was written: last year)
    ("02-29 12:00:00", datetime(2024, 2, 29, 12)),  # (the latest leap year)
    ("13-01 00:00:00", None), ("02-30 00:00:00", None), ("12-01 25:00:00", None),
    ("fev  1 10:00:00", None),  # (a month named in another language: no time, as before)
])
def test_a_stamp_without_a_year_takes_the_latest_that_is_not_after_the_file_was_written(stamp, expected):
    assert CALENDAR.read(stamp) == expected  # (written 2026-12-07 12:00)


def test_a_log_over_new_year_keeps_its_order():
    january = Calendar(datetime(2027, 1, 3, 8))
    assert january.read("12-31 23:59:58") < january.read("01-01 00:00:02")


def test_the_first_dated_stamp_of_an_input_gives_the_year_of_those_without():
    """A copy read long after (an issue's paste): Ray's driver dates its lines, vLLM's logger does not. A stamp takes
    the first year that does not put it more than a month before the first dated one, nor after the file was written."""
    anchored = CALENDAR.anchored(datetime(2025, 5, 28, 3, 53, 30))  # (written 2026-12-07 12:00)
    assert anchored.read("05-28 03:53:36") == datetime(2025, 5, 28, 3, 53, 36)
    assert anchored.read("05-20 23:00:00") == datetime(2025, 5, 20, 23)  # (a line above the first dated one)
    assert anchored.read("03-01 00:00:00") == datetime(2026, 3, 1)  # (a log that ran for nine months)
    assert anchored.read("02-29 12:00:00") == datetime(2024, 2, 29, 12)  # (no leap year after it: as without one)
    over_new_year = CALENDAR.anchored(datetime(2025, 12, 31, 23, 59, 30))
    assert over_new_year.read("01-01 00:00:02") == datetime(2026, 1, 1, 0, 0, 2)
    assert over_new_year.read("12-31 23:59:58") == datetime(2025, 12, 31, 23, 59, 58)
    assert CALENDAR.anchored(datetime(2026, 11, 1)).read("04-20 10:00:00") == datetime(2026, 4, 20, 10)  # (never later than written)
    assert CALENDAR.anchored(None) is CALENDAR


def test_a_stamp_in_a_prefix_the_normaliser_learned_is_a_time():
    calendar = Calendar(datetime(2026, 12, 7))
    assert calendar.find("svc-7 | 99-99 00:00:00 | 05-28 03:53:36 | ") == datetime(2026, 5, 28, 3, 53, 36)  # (the first that is a day)
    assert calendar.find("no stamp here") is None


def test_the_normaliser_dates_vllm_and_syslog_lines_by_its_calendar():
    vllm, syslog = "INFO 05-28 03:53:36 [loader.py:455] Loading weights", "Dec  7 19:55:40 gpu-7 python3[311]: started"
    dated = LineNormalizer("t.log", calendar=CALENDAR)
    assert dated.normalize(vllm, 1)[0].timestamp == datetime(2026, 5, 28, 3, 53, 36)
    assert dated.normalize(syslog, 2)[0].timestamp == datetime(2026, 12, 7, 19, 55, 40)
    # (a dated stamp outside on the same line says the year: a container runtime's)
    assert dated.normalize(f"2025-05-28T03:53:36.5Z stderr F {vllm}", 3)[0].timestamp == datetime(2025, 5, 28, 3, 53, 36, 500000)
    assert LineNormalizer("t.log").normalize(vllm, 1)[0].timestamp is None  # (no calendar: no time, as a library call had)


def test_a_vllm_logs_incidents_are_dated_by_when_the_file_was_written(capsys, tmp_path):
    lines = ["INFO 05-28 03:53:31 [model_runner.py:943] Starting to load model",
             *fmt.vllm_record("Error executing method 'load_model'.", capture(lambda: _layer_missing(23)),
                              when=datetime(2026, 5, 28, 3, 53, 36), file="worker_base.py", lineno=620)]
    log = tmp_path / "vllm.log"
    log.write_text("\n".join(lines) + "\n")
    [incident] = _jsonl(capsys, _written(log, datetime(2026, 6, 1, 9)))
    assert incident["first_seen"].startswith("2026-05-28T03:53:36")
    [incident] = _jsonl(capsys, _written(log, datetime(2027, 3, 1, 9)))  # (read after the next New Year: still May's)
    assert incident["first_seen"].startswith("2026-05-28T03:53:36")


def _ray_forwarded_late(tmp_path, first_layer: int, late_layer: int, late_error=None):
    """Ray prints a remote worker's lines when they reach the driver: the worker's error of 03:54:00 comes first in
    the log, the driver's own of 03:53:36 after it."""
    worker = fmt.vllm_worker(fmt.vllm_record("Error executing method 'load_model'.", capture(lambda: _layer_missing(first_layer)),
                                             when=datetime(2025, 5, 28, 3, 54), file="worker_base.py", lineno=620),
                             name="RayWorkerWrapper", pid=12580)
    driver = fmt.vllm_record("Error executing method 'load_model'.", late_error or capture(lambda: _layer_missing(late_layer)),
                             when=datetime(2025, 5, 28, 3, 53, 36), file="worker_base.py", lineno=620)
    log = tmp_path / "ray.log"
    log.write_text("\n".join(["INFO 05-28 03:53:31 [model_runner.py:943] Starting to load model", *worker, *driver]) + "\n")
    return _written(log, datetime(2026, 12, 1))


def test_the_error_that_happened_first_is_the_root_cause_though_printed_later(capsys, tmp_path):
    late = capture(lambda: int("not a number"))
    incidents = _jsonl(capsys, _ray_forwarded_late(tmp_path, 40, 0, late_error=late))
    [root] = [i for i in incidents if i["is_run_root"]]
    assert root["exception_type"] == "ValueError" and root["first_seen"].startswith("2026-05-28T03:53:36")


def test_an_incident_shows_its_occurrence_that_happened_first(capsys, tmp_path):
    """The same error on two processes: the incident's message and lines are those of the first to happen."""
    [incident] = _jsonl(capsys, _ray_forwarded_late(tmp_path, 40, 23))
    assert "model.layers.23." in incident["message"] and incident["count"] == 2
    assert incident["first_seen"].startswith("2026-05-28T03:53:36")


def test_journald_stamps_take_the_year_of_the_servers_own(capsys, tmp_path):
    """journald's short output around an SGLang server's lines, copied and read in a later year: the stamps without a
    year are put in the year the server's dated ones show, so the bare traceback above the server's record keeps its
    place before it."""
    missing, stopped = capture(lambda: _layer_missing(3)), capture(lambda: int("stopped"))
    first = fmt.journal(text_of(missing).splitlines(), ident="python3", start=datetime(2025, 3, 3, 6, 49, 27))
    later = fmt.journal(fmt.sglang_record("Scheduler hit an exception: ", text_of(stopped).splitlines(),
                                          when=datetime(2025, 3, 3, 6, 49, 40), tags=" TP5"),
                        ident="python3", start=datetime(2025, 3, 3, 6, 49, 40))
    log = tmp_path / "journal.log"
    log.write_text("\n".join(first + later) + "\n")
    incidents = _jsonl(capsys, _written(log, datetime(2026, 11, 1)))
    by_type = {i["exception_type"]: i for i in incidents}
    assert by_type["KeyError"]["first_seen"].startswith("2025-03-03T06:49:27")
    assert by_type["KeyError"]["is_run_root"]


def test_a_stream_is_dated_by_today_not_by_its_files_time(tmp_path):
    """stdin and followed files are written while they are read: their stamps are dated by today."""
    log = tmp_path / "followed.log"
    log.write_text("\n".join(fmt.vllm_record("Engine failed.", capture(lambda: _layer_missing(7)),
                                             when=datetime(2026, 1, 2, 3, 4, 5))) + "\n")
    data = _written(log, datetime(2019, 6, 1))

    def stamps(live: bool) -> list[datetime | None]:
        scanner = Engine().chunk_scanner(data, live=live)
        return [event.timestamp for event in [*scanner.feed(log.read_bytes()), *scanner.finish()]]

    assert stamps(live=False) == [datetime(2019, 1, 2, 3, 4, 5)]
    assert stamps(live=True) == [Calendar(datetime.now()).read("01-02 03:04:05")]


@pytest.mark.parametrize(("head", "first"), [
    ("2023-12-30 23:59:58,001\tINFO worker.py:1888 -- Started a local Ray instance.", datetime(2023, 12, 30, 23, 59, 58)),
    ("Dec 30 23:59:58 gpu-7 python3[311]: [2023-12-30 23:59:58 TP0] Load weight begin.", datetime(2023, 12, 30, 23, 59, 58)),
    # (a date in a message is no stamp: the configuration a server logs)
    ("INFO 12-30 23:59:58 [config.py:12] built='2024-01-01 10:00:00', revision=3", None),
])
def test_the_fast_path_anchored_reads_as_the_line_path_with_the_anchored_calendar(head, first):
    """`anchored`: its years are those of the first dated stamp its first chunk's lines begin with or their prefixes
    give; otherwise it reads as every line fed one by one does."""
    lines = [head, *[f"INFO 12-31 23:59:{k:02d} [engine.py:12] step {k}" for k in range(50)],
             *fmt.vllm_record("Engine failed.", capture(lambda: _layer_missing(7)), when=datetime(2026, 1, 1, 0, 0, 3))]
    data = ("\n".join(lines) + "\n").encode()
    fast = ChunkScanner("t.log", NO_NOTICES, calendar=CALENDAR, anchored=True)
    fast_events = [e for piece in utf8_chunks([data[:700], data[700:]]) for e in fast.feed(piece)] + list(fast.finish())
    slow = FileScanner("t.log", NO_NOTICES, calendar=CALENDAR.anchored(first))
    events = [e for raw in split_lines([data]) for e in slow.feed(raw)] + list(slow.finish())
    assert fast_events == events
    assert [e.timestamp for e in events] == [datetime(2024 if first else 2026, 1, 1, 0, 0, 3)]  # (written 2026-12-07)


def test_a_stream_read_past_midnight_keeps_its_first_dated_stamps_year(monkeypatch, tmp_path):
    """A followed file is dated by today, re-read as the days pass, and by its first dated stamp throughout."""
    import threading
    import time
    from datetime import date

    from analyzer import engine

    class _Tomorrow(date):  # (each day the reader asks is the next)
        days = 0

        @classmethod
        def today(cls):
            cls.days += 1
            return date(2026, 1, 1) + (cls.days * (date(2026, 1, 2) - date(2026, 1, 1)))

    monkeypatch.setattr(engine, "date", _Tomorrow)
    log = tmp_path / "followed.log"
    log.write_text("[2020-12-30 10:00:00] server started\n")
    record = fmt.vllm_record("Engine failed.", capture(lambda: _layer_missing(7)), when=datetime(2020, 12, 31, 3, 4, 5))

    def later() -> None:  # (a chunk of its own, read on a later day)
        time.sleep(0.4)
        with log.open("a") as out:
            out.write("\n".join(record) + "\n")

    threading.Thread(target=later, daemon=True).start()
    deadline = time.monotonic() + 10  # (a bound: the record's event ends it)
    stamps = []
    for event in Engine().events([str(log)], lambda problem: None, follow=True, stopped=lambda: time.monotonic() > deadline):
        stamps.append(event.timestamp)
        break
    assert stamps == [datetime(2020, 12, 31, 3, 4, 5)]
