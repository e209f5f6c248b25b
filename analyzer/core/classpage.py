"""An error page that names the exception by its class as `type()` prints it, alone on its line, with the message
as a paragraph of its own below (NetBox's and Nautobot's server error page, as users copy it):

    The complete exception is provided below:

    <class 'django.db.utils.ProgrammingError'>

    column ipam_service.virtual_machine_id does not exist
    LINE 1: ...vice"."last_updated", "ipam_service"."device_id", ...

    Python version: 3.9.2

Read as the exception line with its message: the class, then the paragraph after the blank line under it.
"""

from __future__ import annotations

from analyzer.core import grammar as g
from analyzer.core import lazyregex

__all__ = ["goes_on", "opens", "to_standard"]

_CLASS = lazyregex.compile(r"^<class '(?P<type>[A-Za-z_][\w.]*)'>\s*$")
_MAX_MESSAGE_LINES = 200


def opens(text: str) -> bool:
    """Whether `text` is a class, alone, whose name reads as an exception's."""
    return text[:1] == "<" and (named := _CLASS.match(text)) is not None and g.BARE_EXCEPTION_LINE.match(named["type"]) is not None


def goes_on(texts: list[str], text: str) -> bool:
    """Whether `text` is the blank line under the class, or a line of the paragraph after it."""
    if len(texts) == 1:
        return not text.strip()
    return bool(text.strip()) and len(texts) < _MAX_MESSAGE_LINES


def to_standard(texts: list[str]) -> list[str]:
    """The exception line (the message's first line after the class) and the message's further lines."""
    named = _CLASS.match(texts[0])
    assert named is not None  # (opens)
    message = texts[2:]
    return [f"{named['type']}: {message[0]}" if message else named["type"], *message[1:]]
