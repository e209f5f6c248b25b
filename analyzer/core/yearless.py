"""Times printed without a year: vLLM's logger (`05-28 03:53:36`), syslog and journald (`May 28 03:53:36`).

Read as times, they order a log's incidents, date them and tell its runs apart as dated stamps do. The year is
a guess: where the input begins with dated stamps too, the first year that does not put the stamp much before
the first of them; else, as syslog readers guess it, the latest that does not put it after the input was written.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import lru_cache

from analyzer.core import lazyregex

__all__ = ["Calendar", "YEARLESS"]

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
_YEARS_BACK = 8  # years looked at before `written`'s (a 29 February's: the latest leap years)
_BEFORE_ANCHOR = timedelta(days=31)  # how far before an input's first dated stamp its stamps without a year may be


@dataclass(frozen=True, slots=True)
class Calendar:
    """The year of stamps printed without one: where the input's first dated stamp is known, see `anchored`; else
    the latest that puts the stamp no later than (a little after) `written`, when the input was last written: a
    file's modification time, today for a stream. A log is read after it is written and seldom a year later, so
    its stamps take the year they were written in, and one that ran over New Year keeps its order (December's
    stamps take the year before January's)."""

    written: datetime
    anchor: datetime | None = None  # the input's first dated stamp, where it has one: see anchored

    def anchored(self, first: datetime | None) -> Calendar:
        """This calendar for an input whose first dated stamp is `first` (None: it has none): a stamp without a year
        takes the first year that does not put it more than a month before that one (nor after `written`). A log
        whose lines mostly have no year (vLLM's) and some have (Ray's driver, a Python logger's), or a collector's
        stamps without a year around the server's own dated ones (journald's), keeps one clock whenever it is read:
        a copy made a year later, an issue's paste, a file followed for months."""
        return self if first is None else replace(self, anchor=first)

    def read(self, text: str) -> datetime | None:
        """The stamp at the start of `text`, dated; None where it is no such stamp or no such day."""
        return _read(text, self.written, self.anchor)

    def find(self, text: str) -> datetime | None:
        """The first such stamp in `text` that is a day, dated."""
        return next((stamp for m in YEARLESS.finditer(text) if (stamp := _read(m.group(), self.written, self.anchor))), None)


@lru_cache(maxsize=1024)  # (the lines of one second say it over and over)
def _read(text: str, written: datetime, anchor: datetime | None) -> datetime | None:
    parts = _parts(text)
    if parts is None:
        return None
    latest = written + _CLOCKS_APART
    stamps = [stamp for stamp in _days(range(latest.year - _YEARS_BACK, latest.year + 1), parts) if stamp <= latest]
    if anchor is not None and (after := [stamp for stamp in stamps if stamp >= anchor - _BEFORE_ANCHOR]):
        return after[0]
    return stamps[-1] if stamps else None


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

