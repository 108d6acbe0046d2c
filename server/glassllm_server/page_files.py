"""Where the pages the user reads (the merge explanation, the tokenizer comparison) are
written: files in the user's cache folder, written atomically, the newest few kept.

Markdown pages (shown in the editor) get a fresh name each time; the HTML pages opened in
a browser (:func:`write_html_page`) get a name fixed by the document and the range, so
opening the same selection again replaces its page and a browser tab on it reloads.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlparse

__all__ = ["PAGES_KEPT", "cache_folder", "html_page_name", "tokens_page_name", "write_html_page", "write_page"]


# Pages are written fresh each time (an editor may hold an older one open and would not
# reload it); only the newest few are kept.
PAGES_KEPT = 20


def cache_folder() -> Path:
    """The user's cache folder for glassllm: ``$XDG_CACHE_HOME/glassllm`` or the
    platform's usual place (``~/.cache/glassllm`` on Linux)."""
    if xdg := os.environ.get("XDG_CACHE_HOME"):
        base = Path(xdg)
    elif sys.platform == "win32" and (local := os.environ.get("LOCALAPPDATA")):
        base = Path(local)
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path.home() / ".cache"
    return base / "glassllm"


def write_page(markdown: str, document: str, folder: Path | None = None, kind: str = "explain") -> Path:
    """Write a ``kind`` page ("explain", "compare") for ``document`` (a file name) to the
    cache folder and return its path. The write is atomic; older pages of that kind
    beyond :data:`PAGES_KEPT` go."""
    name = f"{kind}-{_stem(document)}-{time.strftime('%Y%m%d-%H%M%S')}-{time.monotonic_ns() % 10**6:06d}.md"
    return _write_atomically(markdown, kind, name, cache_folder() if folder is None else folder)


def html_page_name(kind: str, uri: str, first: tuple[int, int], last: tuple[int, int]) -> str:
    """The HTML page's file name for the ``kind`` page of document ``uri`` over
    ``first``–``last`` (0-based line and code-point column, the last one excluded):
    ``explain-story-1f0c9e2a-3.1-5.12.html``, positions counted from 1 as editors show
    them. A short digest of the URI keeps apart documents of the same name."""
    digest = hashlib.sha256(uri.encode("utf-8")).hexdigest()[:8]
    stem = _stem(PurePosixPath(unquote(urlparse(uri).path)).name)
    where = f"{first[0] + 1}.{first[1] + 1}-{last[0] + 1}.{last[1]}"
    return f"{kind}-{stem}-{digest}-{where}.html"


def tokens_page_name(folders: Sequence[Path]) -> str:
    """The token map's file name for the workspace ``folders``: ``tokens-glassllm-1f0c9e2a.html``,
    the first folder's name and a short digest of them all, so that mapping the same
    workspace again replaces its page."""
    digest = hashlib.sha256("\0".join(map(str, folders)).encode("utf-8", "surrogateescape")).hexdigest()[:8]
    stem = _stem(folders[0].name) if folders else "workspace"
    return f"tokens-{stem}-{digest}.html"


def write_html_page(html: str, kind: str, name: str, folder: Path | None = None) -> Path:
    """Write (or replace) the HTML page ``name`` (see :func:`html_page_name`) in the cache
    folder and return its path. The write is atomic; older HTML pages of that ``kind``
    beyond :data:`PAGES_KEPT` go."""
    return _write_atomically(html, kind, name, cache_folder() if folder is None else folder)


def _write_atomically(text: str, kind: str, name: str, folder: Path) -> Path:
    """Write ``text`` to ``folder / name`` through a temporary file (a reader never sees
    half a page), then let the oldest pages of that ``kind`` and extension beyond
    :data:`PAGES_KEPT` go."""
    folder.mkdir(parents=True, exist_ok=True)
    suffix = Path(name).suffix
    handle, temporary = tempfile.mkstemp(prefix=f".{kind}-", suffix=suffix, dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as page:
            page.write(text)
        path = folder / name
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _keep_newest(folder, f"{kind}-*{suffix}")
    return path


def _stem(document: str) -> str:
    """A document's name without its extension, safe in a file name."""
    return re.sub(r"[^\w.-]+", "_", Path(document).stem)[:60] or "selection"


def _keep_newest(folder: Path, pattern: str) -> None:
    pages = sorted(folder.glob(pattern), key=lambda page: page.stat().st_mtime_ns)
    for old in pages[:-PAGES_KEPT]:
        old.unlink(missing_ok=True)
