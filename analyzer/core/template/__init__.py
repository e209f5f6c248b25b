"""Compile exception-message templates into anchored matchers.

A *template* is an exception message exactly as the source code spells it,
for example the f-string body
``DeepSeekV4 CP supports moe_a2a_backend in {supported}, got {cfg.backend!r}.``
or the percent-format string ``"expected %d ranks, got %r"``.
:func:`compile_template` turns such a template into an anchored ``regex``
pattern with one named capture per field and records what each field was
(:class:`Field`).  :meth:`CompiledTemplate.match` applies the pattern to a
message from a log and returns the typed field values.

The package is pure: no I/O, no printing, no global state besides caches.
Its concerns live apart: ``fields`` scans a template into literal text and
fields (also what the matcher indexes), ``build`` gives each field kind its
capture regex, ``names`` turns field expressions into group names and
``values`` parses captured text into typed values.

Rules the implementation follows (beyond the obvious ones):

* **Styles.**  ``"fstring"`` and ``"format"`` parse ``{...}`` fields (with
  ``{{``/``}}`` escapes) and differ only in the ``style`` recorded on each
  field and in f-string-only ``{expr=}`` self-documenting fields.
  ``"percent"`` parses ``%``-directives; ``"plain"`` is literal text
  throughout (a constant string raised as is).  ``"auto"`` tries, in order: brace
  fields (used when the template parses and has at least one field), then
  percent directives (lenient: an invalid ``%`` or a ``%`` with the space flag
  such as ``"50% done"`` stays literal), then plain literal text, which is
  taken verbatim (``{{`` and ``%%`` are *not* unescaped then).  The label of
  an auto-detected brace field is ``"format"`` when the template uses a
  positional field (``{}``/``{0}``), else ``"fstring"``.
* **Repeated names.**  Every field occurrence gets its own capture group, and
  a later name that is already taken gets ``_2``, ``_3``, ... -- also when it
  is the *same* expression used twice (``{x} ... {x}`` gives ``x`` and
  ``x_2``).  No backreference is used, so the two occurrences are not forced
  to be textually equal (they may legitimately differ, e.g. ``{x}`` and
  ``{x!r}``).
* **Empty values.**  Every capture is non-empty: an empty generic value would
  make adjacent fields and whitespace hopelessly ambiguous.  A message whose
  field rendered as an empty string therefore does not match.
* **Whitespace.**  Each whitespace run inside the template's literal text
  matches ``\\s+``; whitespace at the template's ends is dropped and the
  message may carry any leading/trailing whitespace.
* **Adjacent lazy fields** (``{a}{b}``) compile, but matching a hostile
  message may backtrack heavily; :meth:`CompiledTemplate.match` relies on the
  ``regex`` timeout and returns ``None`` when it fires.
* **Values.**  ``!r``/``!a``/``%r``/``%a`` fields go through
  :func:`parse_value` (``inf``/``nan`` become floats); numeric specs give
  ``int``/``float`` (``%`` type: the fraction, ``"12.5%"`` -> ``0.125``;
  ``x``/``o``/``b`` types: ``int`` in that base); generic fields give
  ``parse_value`` of a bracketed display or a plain decimal number and the
  captured ``str`` otherwise (quotes kept).
* **Tokens.**  ``literal_tokens`` are lowercased ``[a-z0-9_-]{3,}`` runs of the
  literal text that contain a letter or digit; a run glued to a field
  (``rank{r}``) is left out because in a message it is only part of a word.
  ``prefix`` is left-stripped but keeps one trailing space before a field.
* The compiled pattern also contains helper groups in a ``(?(DEFINE)...)``
  block (names start with ``_``) when a ``!r``-style field is present; use
  :meth:`CompiledTemplate.match` or the field names, not ``groupdict()``.
* **Cost.**  Parsing a template takes ~10 us; ``regex.compile`` (pure Python
  in the ``regex`` package) takes ~0.3 ms for a plain template and ~1-2 ms
  with a repr field, so compiling 10,000 templates costs seconds.
  :func:`compile_template` is memoised.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import regex

from analyzer.core.template.build import FLAGS, REPR, REPR_DEFINE, collapse, literal_regex, plan
from analyzer.core.template.fields import STYLES, Field, TemplateError, literal_tokens, segments
from analyzer.core.template.names import expr_name
from analyzer.core.template.values import convert, parse_value

__all__ = [
    "CompiledTemplate",
    "Field",
    "RETRY_FACTOR",
    "TIMEOUT",
    "TemplateError",
    "compile_template",
    "parse_value",
]


TIMEOUT = 0.05  # seconds a template may take on a message (wall-clock time)
RETRY_FACTOR = 10  # a template that timed out is tried once more with this many times its limit
_REQUOTED_TRIES = 8  # openings of a template's statement looked for in a message that quotes it (see match)


@dataclass(frozen=True, slots=True)
class CompiledTemplate:
    """A compiled template; see :func:`compile_template`."""

    template: str
    pattern: regex.Pattern[str]
    fields: tuple[Field, ...]
    literal: str
    literal_tokens: tuple[str, ...]
    prefix: str

    def match(self, message: str, timeout: float = TIMEOUT, raise_timeout: bool = False) -> dict[str, object] | None:
        """Match a whole message; return ``{field name: typed value}``.

        ``None`` when the message does not match or the regex times out after
        ``timeout`` seconds, and again with ten times that (the limit is wall-clock
        time: a busy machine may have stalled a sound template; a notice line was
        missed so under load); ``TimeoutError`` at once with ``raise_timeout``, for a
        caller that retries itself and stops using such a template.  A template
        without fields gives ``{}``.

        A message that quotes the template's own statement after words of its own, which begin as the template
        does (`[Rank 6] NCCL watchdog thread terminated with exception: [Rank 6] Watchdog caught ...`), would
        give the first field all the text up to the quote: the statement quoted last is read instead. (An opening
        of punctuation alone, `[`, is any bracketed text's.)
        """
        m = self._match(message, timeout, raise_timeout)
        if m is None:
            return None
        if self.fields and any(c.isalnum() for c in self.prefix) and self.prefix in (m.group(self.fields[0].name) or ""):
            at = message.rfind(self.prefix)
            for _ in range(_REQUOTED_TRIES):  # (the last few openings: a crafted message may hold thousands)
                if at <= 0:
                    break
                if (inner := self._match(message[at:], timeout, raise_timeout)) is not None:
                    m = inner
                    break
                at = message.rfind(self.prefix, 0, at)
        return {f.name: convert(f, m.group(f.name)) for f in self.fields if m.group(f.name) is not None}

    def begins(self, message: str, timeout: float = TIMEOUT) -> bool:
        """Whether `message` is the beginning of one of this template's messages, cut short: the template could go on
        from where it ends (a paste or a terminal cut it, or a wrapped line was not read with it)."""
        try:
            m = self.pattern.match(message, partial=True, timeout=timeout)
        except TimeoutError:
            return False
        return m is not None and m.partial

    def _match(self, message: str, timeout: float, raise_timeout: bool) -> regex.Match[str] | None:
        try:
            return self.pattern.match(message, timeout=timeout)
        except TimeoutError:
            if raise_timeout:
                raise
            try:
                return self.pattern.match(message, timeout=timeout * RETRY_FACTOR)
            except TimeoutError:
                return None


@lru_cache(maxsize=32768)
def compile_template(template: str, style: str = "auto") -> CompiledTemplate:
    """Compile ``template`` (an exception message as the source formats it).

    ``style`` is ``"auto"``, ``"fstring"``, ``"format"``, ``"percent"`` or ``"plain"``
    (literal text throughout).
    Raises :class:`TemplateError` when a forced style cannot parse the
    template.  Results are cached (the returned object is immutable).
    """
    if not isinstance(template, str):
        raise TypeError(f"template must be str, not {type(template).__name__}")
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, not {style!r}")
    pieces, label = segments(template, style)

    # drop template-edge whitespace (the pattern tolerates any at the ends)
    if pieces and isinstance(pieces[0], str):
        pieces[0] = pieces[0].lstrip()
    if pieces and isinstance(pieces[-1], str):
        pieces[-1] = pieces[-1].rstrip()

    fields: list[Field] = []
    used: set[str] = set()
    auto_index = 0
    parts: list[str] = [r"\A\s*"]
    has_repr = False
    # A message may stop at any of the template's line breaks when its first line holds text of its
    # own (a bare exception line, a record cut after its first line): the lines after each break are
    # an optional group, closed at the end.
    optional_tail = bool(pieces) and isinstance(pieces[0], str) and bool(pieces[0].split("\n", 1)[0].strip())
    opened = 0
    for seg in pieces:
        if isinstance(seg, str):
            if optional_tail and "\n" in seg:
                first, *rest = seg.split("\n")
                parts.append(literal_regex(first.rstrip()))
                for line in rest:
                    parts.append(r"(?:[^\S\n]*\n\s*" + literal_regex(line.lstrip()))
                    opened += 1
                continue
            if seg:
                parts.append(literal_regex(seg))
            continue
        if seg.expr == "":
            base = f"arg{auto_index}"
            auto_index += 1
        elif seg.expr.isdigit():
            base = f"arg{int(seg.expr)}"
        else:
            base = expr_name(seg.expr)
        name = base
        k = 2
        while name in used:
            name = f"{base}_{k}"
            k += 1
        used.add(name)
        field = Field(name, seg.expr, seg.conversion, seg.format_spec, label)
        fields.append(field)
        kind, core, before, after, suffix = plan(field)
        has_repr = has_repr or kind == REPR
        parts.append(f"{before}(?P<{name}>{core}){suffix}{after}")
    parts.append(")?" * opened + r"\s*\Z")
    if has_repr:
        parts.append(REPR_DEFINE)
    try:
        pattern = regex.compile("".join(parts), FLAGS)
    except regex.error as exc:  # pragma: no cover - defensive
        raise TemplateError(f"internal pattern error: {exc}", template) from None

    literal = collapse("".join(s for s in pieces if isinstance(s, str))).strip()
    if fields and pieces and isinstance(pieces[0], str):
        prefix = collapse(pieces[0]).lstrip()
    elif fields:
        prefix = ""
    else:
        prefix = literal
    return CompiledTemplate(
        template=template,
        pattern=pattern,
        fields=tuple(fields),
        literal=literal,
        literal_tokens=literal_tokens(pieces),
        prefix=prefix,
    )
