"""Where the pages the user reads (the merge explanation, the tokenizer comparison) are
written: files in the user's cache folder, written atomically, the newest few kept."""

from __future__ import annotations

import os
import re
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["PAGES_KEPT", "cache_folder", "write_page"]


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
    folder = cache_folder() if folder is None else folder
    folder.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^\w.-]+", "_", Path(document).stem)[:60] or "selection"
    handle, temporary = tempfile.mkstemp(prefix=f".{kind}-", suffix=".md", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as page:
            page.write(markdown)
        path = folder / f"{kind}-{stem}-{time.strftime('%Y%m%d-%H%M%S')}-{time.monotonic_ns() % 10**6:06d}.md"
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    pages = sorted(folder.glob(f"{kind}-*.md"), key=lambda page: page.stat().st_mtime_ns)
    for old in pages[:-PAGES_KEPT]:
        old.unlink(missing_ok=True)
    return path
