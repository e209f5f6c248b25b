"""doctest's report of a failed example: what the example was expected to print comes before what it printed,

    File "/x/scrapy/selector/unified.py", line 7, in default
    Failed example:
        sel[10]
    Expected:
        Traceback (most recent call last):
        ...
        IndexError: list index out of range
    Got:
        Traceback (most recent call last):
          File "/x/parsel/selector.py", line 70, in __getitem__
            o = super(SelectorList, self).__getitem__(pos)
        IndexError: list index out of range

each indented by four blanks under its word. What was expected did not happen: the assembler takes those lines
and reports nothing of them. (What the example printed, under `Got:` or `Exception raised:`, is read as usual.)
"""

from __future__ import annotations

__all__ = ["EXPECTED", "FAILED", "goes_on"]

FAILED = "Failed example:"  # (under the example's place, which reads as a frame line: `File "x.py", line 4, in ex`)
EXPECTED = "Expected:"


def goes_on(text: str) -> bool:
    """Whether `text` is a line of the expected output (doctest writes a blank line in it as `<BLANKLINE>`)."""
    return text[:4] == "    " and bool(text.strip())
