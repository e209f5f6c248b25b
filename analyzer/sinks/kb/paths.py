"""Where each page of the knowledge base lives, relative to the site's root.

The fleet report links its signatures here (`page_path`), so the layout is fixed by the pattern id
alone: a page's folder is the first part of its id (`sglang`, `vllm`, `torch`, ...).
"""

from __future__ import annotations

import posixpath

from analyzer.core import lazyregex

__all__ = ["page_path", "kb_href", "relative", "file_page", "type_page", "project_page", "slug"]

_UNSAFE = lazyregex.compile(r"[^A-Za-z0-9._-]+")


def slug(text: str) -> str:
    """A file-name-safe form of an id, a project, an exception type or a path part."""
    return _UNSAFE.sub("_", text).strip("_") or "_"


def page_path(pattern_id: str) -> str:
    """`pages/sglang/sglang.deepseek-v4-cp-a2a-backend.html`: a signature's page in the site."""
    return f"pages/{slug(pattern_id.split('.', 1)[0])}/{slug(pattern_id)}.html"


def kb_href(pattern_id: str, base: str = "kb") -> str:
    """The link to a signature's page from a document that sees the site at `base` (a relative
    folder or a URL)."""
    return f"{base.rstrip('/')}/{page_path(pattern_id)}"


def project_page(project: str) -> str:
    return f"projects/{slug(project)}.html"


def type_page(exception: str, project: str | None = None) -> str:
    """The signatures of one exception type; with `project`, that project's alone."""
    return f"types/{slug(exception)}.html" if project is None else f"types/{slug(exception)}/{slug(project)}.html"


def file_page(project: str, path: str) -> str:
    """A source file's signatures: the file's own path under the project's folder."""
    parts = [slug(part) for part in path.split("/") if part]
    return "files/" + "/".join([slug(project), *parts]) + ".html"


def relative(target: str, page: str) -> str:
    """`target`'s link from `page` (both site paths)."""
    return posixpath.relpath(target, posixpath.dirname(page) or ".")
