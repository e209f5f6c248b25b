"""The exception Streamlit's app shows in its error box, as users copy it from the page, rewritten into
the standard format so that `blocks.parse_chain` reads it like any other.

    ModuleNotFoundError: No module named 'ml'
    Traceback:
    File "/app/venv/lib/python3.8/site-packages/streamlit/script_runner.py", line 354, in _run_script
        exec(code, module.__dict__)
    File "/app/src/ml/app.py", line 4, in <module>
        from ml.pages.intro import IntroPage

The exception line comes first, then `Traceback:` and the frames oldest first, each with its source
line, the frame lines flush left. R's reticulate reports a Python error it called into in the same order:
the exception line, a blank, `Detailed traceback:`, then the frames as Python indents them.
"""

from __future__ import annotations

from analyzer.core import grammar as g

__all__ = ["HEADER", "RETICULATE_HEADER", "to_standard"]

HEADER = "Traceback:"  # the line between the exception line and the frames
RETICULATE_HEADER = "Detailed traceback:"  # ... in reticulate's report, after a blank line


def to_standard(texts: list[str]) -> list[str]:
    """The lines in CPython's order and indentation: header, frames, exception line."""
    at = next(k for k, text in enumerate(texts) if text.strip() in (HEADER, RETICULATE_HEADER))  # (as the assembler tells it)
    frames = [text if text[:1] == " " or not text else f"  {text}" if g.FRAME.match(text) else f"    {text}"
              for text in texts[at + 1:]]  # (a copy may have lost the source lines' indentation too)
    return [g.HEADER_TEXT, *frames, *texts[:at]]
