"""What CPython prints when `sys.excepthook` itself fails on an uncaught exception (a GUI's or a crash reporter's
hook): the hook's own error first, then the exception it was given,

    Error in sys.excepthook:
    Traceback (most recent call last):
      File "/x/peppy/exception_handler.py", line 78, in ExceptionHook
    wx._core.PyAssertionError: C++ assertion "uiIndex < m_nCount" failed at ...

    Original exception was:
    Traceback (most recent call last):
      File "/x/peppy/exception_handler.py", line 248, in OnClose
    RuntimeError: wrapped C/C++ object has been deleted

The assembler reads both as one block, the second line as a chain's separator; rewritten as the chain it is (the
hook failed while it handled the original), the original comes first: the root cause.
"""

from __future__ import annotations

from analyzer.core import grammar as g

__all__ = ["HOOK", "ORIGINAL", "hooked", "to_standard"]

HOOK = "Error in sys.excepthook:"
ORIGINAL = "Original exception was:"


def hooked(texts: list[str]) -> bool:
    """Whether the block's lines begin with the hook's failure."""
    return texts[0].rstrip() == HOOK


def to_standard(texts: list[str]) -> list[str]:
    """The original exception's traceback, then the hook's as the error raised while handling it."""
    at = next((k for k, text in enumerate(texts) if text.strip() == ORIGINAL), len(texts))
    hook = texts[1:at]
    while hook and not hook[-1].strip():
        hook.pop()
    return [*texts[at + 1:], "", g.CONTEXT_SEPARATOR, "", *hook] if at < len(texts) else hook
