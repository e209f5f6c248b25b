"""Times printed without a year: vLLM's logger (`05-28 03:53:36`), syslog and journald (`May 28 03:53:36`).

Read as times, they order a log's incidents, date them and tell its runs apart as dated stamps do. The year is
a guess: where the input holds dated stamps too, the year that puts the stamp nearest its first; else, as syslog
readers guess it, the latest that does not put the stamp after the input was written.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import lru_cache

from analyzer.core import lazyregex

__all__ = ["ANCHOR_HEAD", "Calendar", "YEARLESS"]

# (the forms in `prefixes.VLLM` and `prefixes.SYSLOG`: month and day as numbers, or a month's name and a day
# padded with a blank)
YEARLESS = lazyregex.compile(
    r"(?<![\w-])(?:(?P<month>\d\d)-(?P<day>\d\d)|(?P<name>[A-Za-z][a-z]{2}) (?P<day> \d|\d\d)) "
    r"(?P<hour>\d\d):(?P<minute>\d\d):(?P<second>\d\d)(?:\.(?P<fraction>\d+))?")
_MONTHS = {name: number for number, name in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}
# How far after `written` a stamp may be and keep that year: the server's wall clock and this machine's may
# be a time zone or a day apart (a file's time is read in this machine's zone).
_CLOCKS_APART = timedelta(days=2)
_LEAP_YEARS_BACK = 8  # years looked at (a 29 February's: the latest leap year not after `written`)
# A dated stamp, ISO's (`2025-05-28 03:53:36`, `2025-05-28T03:53:36`), in an input's first characters
_DATED = lazyregex.compile(r"(?<!\d)(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)")
ANCHOR_HEAD = 1 << 16  # (bytes, or characters)


@dataclass(frozen=True, slots=True)
class Calendar:
    """The year of stamps printed without one: the latest that puts the stamp no later than (a little after)
    `written`, when the input was last written: a file's modification time, the scan's start for a stream.
    A log is read after it is written and seldom a year later, so its stamps take the year they were written
    in, and one that ran over New Year keeps its order (December's stamps take the year before January's)."""

    written: datetime
    anchor: datetime | None = None  # the input's first dated stamp, where it has one: see anchored

    def anchored(self, head: str) -> Calendar:
        """This calendar for an input that begins with `head`: where it holds a dated stamp, the year of each stamp
        without one is that which puts it nearest the first dated stamp. A log whose lines mostly have no year
        (vLLM's) and some have (Ray's driver, a Python logger's), or a collector's stamps without a year around the
        server's own dated ones (journald's), keeps one clock, whenever it is read: a copy made a year later, an
        issue's paste."""
        m = _DATED.search(head, 0, ANCHOR_HEAD)
        if m is None:
            return self
        try:
            year, month, day, hour, minute, second = map(int, m.groups())
            return replace(self, anchor=datetime(year, month, day, hour, minute, second))
        except ValueError:  # (no day: month 13)
            return self

    def read(self, text: str) -> datetime | None:
        """The stamp at the start of `text`, dated; None where it is no such stamp or no such day."""
        return _read(text, self.written, self.anchor)

    def find(self, text: str) -> datetime | None:
        """The first such stamp in `text`, dated."""
        m = YEARLESS.search(text)
        return _read(m.group(), self.written, self.anchor) if m is not None else None


@lru_cache(maxsize=1024)  # (the lines of one second say it over and over)
def _read(text: str, written: datetime, anchor: datetime | None) -> datetime | None:
    parts = _parts(text)
    if parts is None:
        return None
    if anchor is not None:
        return min(_days(range(anchor.year - 1, anchor.year + 2), parts), key=lambda stamp: abs(stamp - anchor), default=None)
    latest = written + _CLOCKS_APART
    return max((stamp for stamp in _days(range(latest.year - _LEAP_YEARS_BACK + 1, latest.year + 1), parts)
                if stamp <= latest), default=None)


def _days(years: range, parts: tuple[int, int, int, int, int, int]) -> list[datetime]:
    """The stamp in each of `years` that has its day (a 29 February: only the leap years)."""
    found = []
    for year in years:
        try:
            found.append(datetime(year, *parts))
        except ValueError:
            continue
    return found


def _parts(text: str) -> tuple[int, int, int, int, int, int] | None:
    m = YEARLESS.match(text)
    if m is None:
        return None
    month = _MONTHS.get(m["name"].lower()) if m["name"] else int(m["month"])
    if month is None:
        return None  # (a month named in another language)
    fraction = (m["fraction"] or "")[:6]
    return month, int(m["day"]), int(m["hour"]), int(m["minute"]), int(m["second"]), int(fraction.ljust(6, "0"))

