"""One signature's page of the knowledge base, as HTML, from the page data `analyzer explain
--format json` prints (sinks/page.py): this module lays the data out and decides nothing about it.

Keys it does not know (a later release of the page data may add some) are shown as data at the
end rather than dropped or fatal.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from html import escape
from typing import Any

from analyzer.sinks.kb.paths import page_path, relative

__all__ = ["render_signature", "layout", "heading", "PAGE_KEYS"]

# The keys laid out in their own sections; any other key lands in "More data".
PAGE_KEYS = frozenset({"id", "exception", "template", "source", "meaning", "trigger", "situations", "fixes",
                       "related", "role", "severity", "tags", "examples", "match_kind", "confidence", "params",
                       "derived", "releases", "assert_expr"})
_DERIVED_KEYS = frozenset({"snippet", "link", "condition", "related", "flags", "allowed_values", "before_after",
                           "env_vars", "hint"})
_DERIVED = ' <span class="derived" title="worked out from the source code, not written by hand">derived</span>'

Lookup = Callable[[str], tuple[str, str] | None]  # a pattern id -> (exception, template) when it is loaded


def layout(title: str, page: str, body: str, search_box: bool = True) -> str:
    """The frame every page shares: the stylesheet, a bar back to the index, a search box (which
    sends its text to the front page's search)."""
    root = relative("index.html", page)
    css = relative("kb.css", page)
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title>", f'<link rel="stylesheet" href="{css}"></head><body>',
        f'<nav><a class="home" href="{root}">analyzer knowledge base</a>'
        + (f'<form action="{root}" method="get"><input name="q" placeholder="paste an error message">'
           "<button>Search</button></form>" if search_box else "") + "</nav>",
        f"<main>{body}</main>", "</body></html>"])


def heading(template: str, assert_expr: str, exception: str, function: str | None) -> str:
    """What names a signature in a heading or a list: its message template; a bare assert, which
    has none, by its condition; else by where it is raised."""
    if template.strip():
        return template
    if assert_expr:
        return f"assert {assert_expr}"
    return f"{exception} in {function}" if function else exception


def render_signature(data: Mapping[str, Any], lookup: Lookup) -> str:
    """The page of one signature; `lookup` names the related errors that are loaded."""
    here = page_path(str(data["id"]))
    derived, source = _mapping(data.get("derived")), _mapping(data.get("source"))
    parts = [_header(data, source), _section("Error message", _message(data))]
    if data.get("meaning"):
        parts.append(_section("What it means", _para(data["meaning"])))
    if derived.get("hint"):
        parts.append(_section("Hint from the source" + _DERIVED, _para(derived["hint"])))
    parts.append(_source(source, derived))
    parts.append(_when(data, derived))
    if derived.get("flags"):
        parts.append(_section("Flags involved" + _DERIVED, _flags(derived["flags"])))
    if derived.get("allowed_values"):
        parts.append(_section("Allowed values" + _DERIVED, _code_list(derived["allowed_values"])))
    parts.append(_fixes(data.get("fixes") or [], derived))
    if data.get("examples"):
        parts.append(_section("Examples", "".join(_pre(f"{data.get('exception')}: {e}") for e in data["examples"])))
    parts.append(_related(data.get("related") or [], derived.get("related") or [], here, lookup))
    if data.get("releases"):
        parts.append(_section("Releases", _para(data["releases"])))
    if data.get("tags"):
        parts.append(_section("Tags", " ".join(f'<span class="tag">{escape(str(t))}</span>' for t in data["tags"])))
    parts.append(_more(data, derived))
    title = f"{data.get('exception')}: {_heading(data, source)[:80]}"
    return layout(title, here, "".join(p for p in parts if p))


def _header(data: Mapping[str, Any], source: Mapping[str, Any]) -> str:
    curated = bool(data.get("meaning") or data.get("fixes"))
    badge = '<span class="curated">curated</span>' if curated else '<span class="extracted">extracted</span>'
    meta = " · ".join(escape(str(x)) for x in (source.get("project"), data.get("severity"), data.get("exception"),
                                               data.get("role")) if x)
    return (f'<p class="meta">{meta} {badge}</p><h1>{escape(_heading(data, source))}</h1>'
            f'<p class="id">{escape(str(data["id"]))}</p>')


def _message(data: Mapping[str, Any]) -> str:
    if data.get("template") or not data.get("assert_expr"):
        return _pre(f"{data.get('exception')}: {data.get('template')}")
    return (_pre(str(data.get("exception"))) + f"<p>A bare <code>assert {escape(str(data['assert_expr']))}</code> "
            "with no message: the traceback shows that line as where the error was raised.</p>")


def _heading(data: Mapping[str, Any], source: Mapping[str, Any]) -> str:
    return heading(str(data.get("template") or ""), str(data.get("assert_expr") or ""), str(data.get("exception")),
                   source.get("function"))


def _source(source: Mapping[str, Any], derived: Mapping[str, Any]) -> str:
    if not source.get("path") and not derived.get("snippet"):
        return ""
    where = escape(str(source.get("path") or ""))
    if source.get("line"):
        where += f":{source['line']}"
    text = f"Raised at <code>{where}</code>"
    if source.get("function"):
        text += f" in <code>{escape(str(source['function']))}</code>"
    pinned = " ".join(escape(str(x)) for x in (source.get("project"), source.get("version"),
                                               source.get("commit") and f"commit {str(source['commit'])[:12]}") if x)
    body = f"<p>{text}" + (f" ({pinned})" if pinned else "") + "</p>"
    snippet = derived.get("snippet")
    if isinstance(snippet, Mapping) and snippet.get("lines"):
        body += _snippet(snippet)
    if derived.get("link"):
        release = f" (pinned to {pinned})" if pinned else ""
        body += f'<p><a class="pinned" href="{escape(str(derived["link"]))}">View the source{release}</a>{_DERIVED}</p>'
    return _section("Source", body)


def _snippet(snippet: Mapping[str, Any]) -> str:
    start = snippet["start"] if isinstance(snippet.get("start"), int) else 1
    marked = snippet.get("raise_line")
    rows = []
    for number, line in enumerate(snippet["lines"], start):
        mark = ' class="raise"' if number == marked else ""
        rows.append(f'<span{mark}><span class="ln">{number}</span>{escape(str(line))}</span>')
    return '<pre class="snippet">' + "\n".join(rows) + "</pre>"


def _when(data: Mapping[str, Any], derived: Mapping[str, Any]) -> str:
    items = []
    if derived.get("condition"):
        items.append(f"<p><b>Condition:</b> {escape(str(derived['condition']))}{_DERIVED}</p>")
    if data.get("trigger"):
        items.append(f"<p><b>Trigger:</b> {escape(str(data['trigger']))}</p>")
    if data.get("situations"):
        items.append(f"<p><b>Common situations:</b> {escape(str(data['situations']))}</p>")
    return _section("When it happens", "".join(items)) if items else ""


def _flags(flags: list[Any]) -> str:
    rows = ["<table><thead><tr><th>flag</th><th>setting</th><th>help</th><th>choices</th><th>default</th></tr>"
            "</thead><tbody>"]
    for flag in flags:
        if not isinstance(flag, Mapping):
            continue
        choices = flag.get("choices") or []
        rows.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in (
            f"<code>{escape(str(flag.get('flag') or ''))}</code>", escape(str(flag.get("attribute") or "")),
            escape(str(flag.get("help") or "")), ", ".join(f"<code>{escape(str(c))}</code>" for c in choices),
            "" if flag.get("default") is None else f"<code>{escape(repr(flag['default']))}</code>")) + "</tr>")
    return "".join(rows) + "</tbody></table>"


def _fixes(fixes: list[Any], derived: Mapping[str, Any]) -> str:
    items = []
    for number, fix in enumerate(fixes, 1):
        if not isinstance(fix, Mapping):
            continue
        text = f"<li><b>{escape(str(fix.get('title') or f'Fix {number}'))}</b>"
        if fix.get("text"):
            text += f"<p>{escape(str(fix['text']))}</p>"
        text += _before_after(fix.get("before"), fix.get("after"))
        if fix.get("command"):
            text += "<p>Your command, fixed:</p>" + _pre(str(fix["command"]))
        items.append(text + "</li>")
    parts = [f"<ol>{''.join(items)}</ol>"] if items else []
    examples = [pair for pair in derived.get("before_after") or [] if isinstance(pair, Mapping)]
    if examples:
        parts.append(f"<h3>Example fix{_DERIVED}</h3>"
                     + "".join(_before_after(pair.get("before"), pair.get("after")) for pair in examples))
    if derived.get("env_vars"):
        parts.append(f"<h3>Environment variables{_DERIVED}</h3>" + _code_list(derived["env_vars"]))
    return _section("Solutions", "".join(parts)) if parts else ""


def _before_after(before: Any, after: Any) -> str:
    if before is None and after is None:
        return ""
    return ('<pre class="fix"><span class="before"># before\n' + escape(str(before or "")) + "</span>\n"
            '<span class="after"># after\n' + escape(str(after or "")) + "</span></pre>")


def _related(ids: list[Any], derived: list[Any], here: str, lookup: Lookup) -> str:
    items = [_related_item(str(i), None, here, lookup) for i in ids]
    shown = {str(i) for i in ids}
    for other in derived:
        if isinstance(other, Mapping) and other.get("id") and str(other["id"]) not in shown:
            shown.add(str(other["id"]))
            why = " — ".join(escape(str(x)) for x in (other.get("line") and f"line {other['line']}",
                                                     other.get("why")) if x)
            items.append(_related_item(str(other["id"]), other.get("message"), here, lookup, why))
    return _section("Related errors", f"<ul>{''.join(items)}</ul>") if items else ""


def _related_item(pattern_id: str, message: Any, here: str, lookup: Lookup, why: str = "") -> str:
    known = lookup(pattern_id)
    text = escape(f"{known[0]}: {known[1]}"[:160]) if known else escape(str(message or pattern_id))
    link = f'<a href="{relative(page_path(pattern_id), here)}">{text}</a>' if known else f"{text} (not loaded)"
    note = f' <span class="why">{why}{_DERIVED}</span>' if why else ""
    return f'<li>{link} <code class="rid">{escape(pattern_id)}</code>{note}</li>'


def _more(data: Mapping[str, Any], derived: Mapping[str, Any]) -> str:
    extra = {key: value for key, value in data.items() if key not in PAGE_KEYS and value not in (None, "", [], {})}
    extra.update({f"derived.{key}": value for key, value in derived.items()
                  if key not in _DERIVED_KEYS and value not in (None, "", [], {})})
    if not extra:
        return ""
    dumped = json.dumps(extra, ensure_ascii=False, indent=2, default=str)
    return _section("More data", f"<details><summary>{len(extra)} more field(s)</summary>{_pre(dumped)}</details>")


def _mapping(value: Any) -> Mapping[str, Any]:
    """A part of the page data that should be a mapping; anything else reads as empty."""
    return value if isinstance(value, Mapping) else {}


def _section(title: str, body: str) -> str:
    return f"<section><h2>{title}</h2>{body}</section>" if body else ""


def _para(text: Any) -> str:
    return "".join(f"<p>{escape(line)}</p>" for line in str(text).split("\n\n"))


def _pre(text: str) -> str:
    return f"<pre>{escape(text)}</pre>"


def _code_list(values: Any) -> str:
    items = values if isinstance(values, list) else [values]
    return "<ul class=\"values\">" + "".join(f"<li><code>{escape(str(v))}</code></li>" for v in items) + "</ul>"
