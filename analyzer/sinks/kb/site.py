"""`analyzer kb build`: the pattern knowledge as a static site that works offline, from `file://`.

Layout (paths in paths.py): `index.html` (search by message, projects, exception types),
`pages/<project>/<id>.html` (one per signature), `projects/`, `files/`, `types/` (the indexes),
`search/<project>.js` (the search data, one file per project, loaded only when a query needs it)
and the two assets, `kb.css` and `search.js`. Data files are scripts, not JSON, because a browser
refuses `fetch` from `file://` but runs a `<script src>`.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from analyzer.core import lazyregex
from analyzer.core.schema import Pattern
from analyzer.core.template.fields import literal_parts
from analyzer.sinks.kb.page import heading, layout, render_signature
from analyzer.sinks.kb.paths import file_page, page_path, project_page, relative, type_page

__all__ = ["build_site", "BuildStats", "Signature", "ASSETS", "SEARCH_WORD"]

ASSETS = Path(__file__).resolve().parent / "assets"
# The words a message is searched by: the matcher's own notion of a literal word (core/matcher.py);
# search.js splits a query with the same expression.
SEARCH_WORD = lazyregex.compile(r"[a-z0-9_][a-z0-9_-]{2,}")
_SHOWN_TEMPLATE = 300  # characters of a template the search results show
_TOP_TYPES = 40  # exception types listed on the front page; types/index.html has them all
_NO_FILE = "(no source file)"


@dataclass(frozen=True, slots=True)
class Signature:
    """What the indexes and the search keep of one page."""

    id: str
    project: str  # the first part of the id: the page's folder and its search file
    exception: str
    template: str
    title: str  # the template, or for a bare assert its `assert <condition>`
    path: str | None
    line: int | None
    curated: bool
    words: tuple[str, ...]  # the template's literal words, lower-cased

    @classmethod
    def of(cls, pattern: Pattern) -> Signature:
        title = heading(pattern.template, pattern.assert_expr, pattern.exception, pattern.source.function)
        if pattern.template.strip():
            _, words = literal_parts(pattern.template, SEARCH_WORD, pattern.style)
        else:  # a bare assert's traceback shows its condition as the raise site's line (search.js keeps it)
            words = frozenset(SEARCH_WORD.findall(title.lower())) if pattern.assert_expr else frozenset()
        return cls(pattern.id, pattern.id.split(".", 1)[0], pattern.exception, pattern.template, title,
                   pattern.source.path, pattern.source.line, pattern.curated, tuple(sorted(words)))


@dataclass(slots=True)
class BuildStats:
    pages: int = 0  # signature pages
    files: int = 0  # every file written
    bytes: int = 0


class _Writer:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.stats = BuildStats()
        self._folders: set[Path] = set()

    def write(self, path: str, text: str) -> None:
        target = self.root / path
        if target.parent not in self._folders:
            target.parent.mkdir(parents=True, exist_ok=True)
            self._folders.add(target.parent)
        data = text.encode("utf-8")
        target.write_bytes(data)
        self.stats.files += 1
        self.stats.bytes += len(data)


def build_site(patterns: Sequence[Pattern], page_data: Callable[[Pattern], Mapping[str, Any]], out: Path,
               on_page: Callable[[int], None] | None = None) -> BuildStats:
    """Write the site for `patterns` into `out`; `page_data` gives a pattern's page data (the
    shape `analyzer explain --format json` prints); `on_page` hears the count of pages written."""
    writer = _Writer(out)
    for asset in sorted(ASSETS.iterdir()):
        out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(asset, out / asset.name)
    by_id = {pattern.id: pattern for pattern in patterns}

    def lookup(pattern_id: str) -> tuple[str, str] | None:
        found = by_id.get(pattern_id)
        return (found.exception, found.template) if found else None

    signatures = []
    for count, pattern in enumerate(by_id.values(), 1):
        writer.write(page_path(pattern.id), render_signature(page_data(pattern), lookup))
        signatures.append(Signature.of(pattern))
        if on_page and count % 1000 == 0:
            on_page(count)
    writer.stats.pages = len(signatures)
    _write_indexes(writer, signatures)
    _write_search_data(writer, signatures)
    return writer.stats


def _write_search_data(writer: _Writer, signatures: list[Signature]) -> None:
    groups: dict[str, list[Signature]] = defaultdict(list)
    for sig in signatures:
        groups[sig.project].append(sig)
    manifest = []
    for project, sigs in sorted(groups.items()):
        rows = [[sig.id, sig.exception, sig.title[:_SHOWN_TEMPLATE], " ".join(sig.words), int(sig.curated)]
                for sig in sigs]
        name = f"search/{project}.js"
        writer.write(name, f"KB.data({json.dumps(project)}, {json.dumps(rows, ensure_ascii=False, separators=(',', ':'))});\n")
        manifest.append({"name": project, "count": len(sigs), "file": name})
    writer.write("search/index.js", f"KB.projects({json.dumps(manifest, separators=(',', ':'))});\n")


def _write_indexes(writer: _Writer, signatures: list[Signature]) -> None:
    projects: dict[str, list[Signature]] = defaultdict(list)
    types: dict[str, list[Signature]] = defaultdict(list)
    for sig in signatures:
        projects[sig.project].append(sig)
        types[sig.exception].append(sig)
    writer.write("index.html", _front_page(signatures, projects, types))
    for project, sigs in projects.items():
        _write_project(writer, project, sigs)
    type_counts = sorted(types.items(), key=lambda item: (-len(item[1]), item[0]))
    page = "types/index.html"
    writer.write(page, layout("Exception types", page, "<h1>Exception types</h1>" + _type_table(type_counts, page)))
    for exception, sigs in types.items():
        _write_type(writer, exception, sigs)


def _front_page(signatures: list[Signature], projects: Mapping[str, list[Signature]],
                types: Mapping[str, list[Signature]]) -> str:
    page = "index.html"
    curated = sum(sig.curated for sig in signatures)
    rows = "".join(f'<tr><td><a href="{project_page(p)}">{escape(p)}</a></td><td class="num">{len(sigs)}</td>'
                   f'<td class="num">{sum(s.curated for s in sigs)}</td></tr>'
                   for p, sigs in sorted(projects.items(), key=lambda item: (-len(item[1]), item[0])))
    top = sorted(types.items(), key=lambda item: (-len(item[1]), item[0]))[:_TOP_TYPES]
    body = (
        f"<h1>Known errors</h1><p class=\"lead\">{len(signatures)} signatures ({curated} curated) from "
        f"{len(projects)} projects. Paste an error message or a whole traceback: the best matching pages "
        "come first.</p>"
        '<div id="search"><textarea id="q" rows="4" placeholder="ValueError: DeepSeekV4 CP supports moe_a2a_backend '
        'in (...), got \'mooncake\'." autofocus></textarea>'
        '<p class="controls"><label>Project <select id="project"><option value="">auto</option></select></label> '
        '<span id="status"></span></p><ol id="results"></ol></div>'
        "<h2>By project</h2><table><thead><tr><th>project</th><th>signatures</th><th>curated</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
        f'<h2>By exception type</h2>{_type_table(top, page)}<p><a href="types/index.html">all '
        f"{len(types)} exception types</a></p>"
        '<script src="search.js"></script><script src="search/index.js"></script>')
    return layout("analyzer knowledge base", page, body, search_box=False)


def _type_table(type_counts: Iterable[tuple[str, list[Signature]]], page: str) -> str:
    rows = "".join(f'<tr><td><a href="{relative(type_page(t), page)}">{escape(t)}</a></td>'
                   f'<td class="num">{len(sigs)}</td></tr>' for t, sigs in type_counts)
    return f"<table><thead><tr><th>exception</th><th>signatures</th></tr></thead><tbody>{rows}</tbody></table>"


def _write_project(writer: _Writer, project: str, sigs: list[Signature]) -> None:
    page = project_page(project)
    files: dict[str, list[Signature]] = defaultdict(list)
    for sig in sigs:
        files[sig.path or _NO_FILE].append(sig)
    types = Counter(sig.exception for sig in sigs)
    type_links = ", ".join(f'<a href="{relative(type_page(t, project), page)}">{escape(t)}</a> ({n})'
                           for t, n in types.most_common())
    file_rows = "".join(
        f'<tr><td><a href="{relative(file_page(project, path), page)}"><code>{escape(path)}</code></a></td>'
        f'<td class="num">{len(found)}</td></tr>' for path, found in sorted(files.items()))
    search = f'{relative("index.html", page)}?project={project}'
    body = (f"<h1>{escape(project)}</h1><p class=\"lead\">{len(sigs)} signatures in {len(files)} files · "
            f'<a href="{escape(search)}">search in {escape(project)} only</a></p>'
            f"<h2>Exception types</h2><p>{type_links}</p>"
            "<h2>Source files</h2><table><thead><tr><th>file</th><th>signatures</th></tr></thead>"
            f"<tbody>{file_rows}</tbody></table>")
    writer.write(page, layout(project, page, body))
    for path, found in files.items():
        target = file_page(project, path)
        title = f"{project}: {path}"
        rows = _signature_table(sorted(found, key=lambda s: (s.line or 0, s.id)), target, where="line")
        writer.write(target, layout(title, target, f"<h1><code>{escape(path)}</code></h1><p class=\"lead\">"
                                    f'<a href="{relative(page, target)}">{escape(project)}</a> · {len(found)} '
                                    f"signatures</p>{rows}"))


def _write_type(writer: _Writer, exception: str, sigs: list[Signature]) -> None:
    page = type_page(exception)
    by_project: dict[str, list[Signature]] = defaultdict(list)
    for sig in sigs:
        by_project[sig.project].append(sig)
    rows = "".join(f'<tr><td><a href="{relative(type_page(exception, p), page)}">{escape(p)}</a></td>'
                   f'<td class="num">{len(found)}</td></tr>' for p, found in sorted(by_project.items()))
    writer.write(page, layout(exception, page, f"<h1>{escape(exception)}</h1><p class=\"lead\">{len(sigs)} "
                              "signatures</p><table><thead><tr><th>project</th><th>signatures</th></tr></thead>"
                              f"<tbody>{rows}</tbody></table>"))
    for project, found in by_project.items():
        target = type_page(exception, project)
        table = _signature_table(sorted(found, key=lambda s: (s.path or "", s.line or 0, s.id)), target, where="file")
        writer.write(target, layout(f"{exception} in {project}", target,
                                    f"<h1>{escape(exception)} in {escape(project)}</h1><p class=\"lead\">"
                                    f'<a href="{relative(page, target)}">all projects</a> · {len(found)} '
                                    f"signatures</p>{table}"))


def _signature_table(sigs: Iterable[Signature], page: str, where: str) -> str:
    rows = []
    for sig in sigs:
        place = (str(sig.line or "") if where == "line"
                 else f"{sig.path}:{sig.line}" if sig.path and sig.line else sig.path or "")
        badge = ' <span class="curated">curated</span>' if sig.curated else ""
        rows.append(f'<tr><td class="nowrap"><code>{escape(place)}</code></td><td><a href="'
                    f'{relative(page_path(sig.id), page)}">{escape(sig.exception)}: {escape(sig.title[:200])}</a>'
                    f"{badge}</td></tr>")
    head = "line" if where == "line" else "raised at"
    return f"<table><thead><tr><th>{head}</th><th>signature</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
