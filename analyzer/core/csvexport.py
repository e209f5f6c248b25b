"""A log exported as a table: one CSV row an event, its message in a quoted column whose quotes are doubled.

CloudWatch Logs' export of a stream's events (SageMaker's endpoints, Lambda) writes the event's time in epoch
milliseconds, the message, then (in some exports) the log stream: `1614272207241,"2021-02-25 ... - File ""/x/y.py"", line 1",AllTraffic/i-0a`.
The message is a log line like any other, with prefixes of its own; the row is an envelope that names its stream.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from analyzer.core import lazyregex
from analyzer.core.jsonlog import Envelope
from analyzer.core.prefixes import parse_timestamp

__all__ = ["row"]

# (a message is quoted where it holds a comma or a quote; one that is not is taken only after an epoch's time, with a
# stream or alone: `2021-02-25 16:56:47,076 [INFO ] ...`, logging's own time and text, is no row)
_ROW = lazyregex.compile(r'(?P<time>\d{13}|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?Z?),"(?P<message>(?:[^"]|"")*+)"'
                         r'(?:,(?P<stream>[^",\s]+))?|(?P<time>\d{13}),(?P<bare>[^",]*)(?:,(?P<stream>[^",\s]+))?')
_EPOCH = datetime(1970, 1, 1)


def row(text: str) -> Envelope | None:
    """The event a CSV row of an export holds; None for any other line."""
    m = _ROW.fullmatch(text)
    if m is None:
        return None
    when = m["time"]
    timestamp = _EPOCH + timedelta(milliseconds=int(when)) if when.isdigit() else parse_timestamp(when)
    message = m["bare"] if m["message"] is None else m["message"].replace('""', '"')
    return Envelope(message, m["stream"] or "csv", None, None, timestamp)
