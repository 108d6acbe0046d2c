"""A cache on disk of files' token counts, so a second ``glassllm tokens`` over unchanged
files reads no tokenizer and tokenizes nothing.

An entry is keyed by the file's content and the tokenizer: a BLAKE2b digest of the bytes
(and of how their name says they may be counted: as text, as a JSON Lines dataset, as a
JSON file that may hold a conversation) and one of the tokenizer file's bytes, its
``match_specials`` and glassllm's version (a new version may count differently), with,
for a file that may hold conversations, the files its chat template is read from. So a
renamed or copied file hits, an edited one, another tokenizer or another chat template
misses, and nothing in the cache can go stale. It lives in
``$XDG_CACHE_HOME/glassllm/token-counts.sqlite3`` (``~/.cache/…`` when the variable is not
set) and keeps at most :data:`MAX_ENTRIES` entries (about 100 bytes each on disk, and 16
more per line for a dataset counted line by line), the
least recently used dropped first.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from glassllm import __version__
from glassllm.packaged import PACKAGED, packaged_path

__all__ = [
    "MAX_ENTRIES",
    "TEMPLATE_FILES",
    "CountCache",
    "cache_path",
    "content_digest",
    "template_digest",
    "tokenizer_digest",
]

MAX_ENTRIES = 500_000
# Where glassllm.chat.template finds a tokenizer's chat template, beside its file.
TEMPLATE_FILES = ("chat_template.jinja", "tokenizer_config.json")


def cache_path() -> Path:
    """Where the cache lives: ``$XDG_CACHE_HOME/glassllm/token-counts.sqlite3``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "glassllm" / "token-counts.sqlite3"


def content_digest(data: bytes, kind: str = "text") -> bytes:
    """The digest of a file's bytes and of how they are counted (``kind``: the same bytes
    count differently as JSON Lines records and as plain text)."""
    digest = hashlib.blake2b(kind.encode() + b"\0", digest_size=20)
    digest.update(data)
    return digest.digest()


def _tokenizer_path(spec: str) -> Path:
    if spec in PACKAGED:
        return packaged_path(spec)
    if spec.startswith("hf:"):
        from glassllm.formats.hub import resolve

        return resolve(spec)
    return Path(spec)


def _file_digest(digest: Any, path: Path) -> bool:
    """Add the bytes of ``path`` to ``digest``; False when it cannot be read."""
    # Not through the bounded reader: only a regular file gets here, and its loader reads
    # it whole (within the bound) anyway.
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return False
    return True


def tokenizer_digest(spec: str, match_specials: bool) -> bytes | None:
    """What identifies a tokenizer's counts: its file's bytes, how specials are read, and
    this glassllm's version; ``None`` for what is not a regular file (a pipe is read once,
    by the loader, which also says what is wrong with a missing file)."""
    path = _tokenizer_path(spec)
    if not path.is_file():
        return None
    digest = hashlib.blake2b(digest_size=20)
    if not _file_digest(digest, path):
        return None
    digest.update(f"\0{match_specials}\0{__version__}".encode())
    return digest.digest()


def template_digest(spec: str, tokenizer: bytes) -> bytes | None:
    """What identifies a tokenizer's counts of files that may hold conversations (counted
    through its chat format): its digest ``tokenizer`` and the files beside it where a
    chat template is found (``chat_template.jinja``, ``tokenizer_config.json``), so a
    changed template never serves an old count; ``None`` when one cannot be read."""
    folder = _tokenizer_path(spec).parent
    digest = hashlib.blake2b(tokenizer, digest_size=20)
    for name in TEMPLATE_FILES:
        path = folder / name
        digest.update(b"\0" + name.encode() + b"\0")
        if path.is_file() and not _file_digest(digest, path):
            return None
    return digest.digest()


class CountCache:
    """Token counts by (content, tokenizer) digest, in an SQLite file; at most ``limit``
    entries. Every method gives up quietly on a database error (a read-only home, a
    damaged file): the cache only saves time, and counting never depends on it."""

    def __init__(self, path: Path | None = None, limit: int = MAX_ENTRIES) -> None:
        self.path = cache_path() if path is None else path
        self.limit = limit
        self._db: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=10)
            self._db.execute("CREATE TABLE IF NOT EXISTS counts (key BLOB PRIMARY KEY, tokens INTEGER, used REAL)")
        except (OSError, sqlite3.Error):
            self._db = None

    def get(self, keys: Iterable[bytes]) -> dict[bytes, int | bytes]:
        """The counts kept for ``keys`` (those not kept are absent); they become the most
        recently used. A count is a number, or bytes its writer encoded (a dataset's
        count line by line: see :class:`glassllm.file_tokens.FileCount`)."""
        if self._db is None:
            return {}
        wanted = list(keys)
        found: dict[bytes, int | bytes] = {}
        try:
            with self._db:
                for start in range(0, len(wanted), 500):
                    batch = wanted[start : start + 500]
                    marks = ",".join("?" * len(batch))
                    rows = self._db.execute(f"SELECT key, tokens FROM counts WHERE key IN ({marks})", batch)
                    found.update(rows)
                    self._db.execute(f"UPDATE counts SET used = ? WHERE key IN ({marks})", [time.time(), *batch])
        except sqlite3.Error:
            return {}
        return found

    def put(self, counts: dict[bytes, int | bytes]) -> None:
        """Keep ``counts``; past the limit, drop the least recently used entries."""
        if self._db is None or not counts:
            return
        now = time.time()
        try:
            with self._db:
                self._db.executemany(
                    "INSERT OR REPLACE INTO counts VALUES (?, ?, ?)", [(k, v, now) for k, v in counts.items()]
                )
                (size,) = self._db.execute("SELECT COUNT(*) FROM counts").fetchone()
                if size > self.limit:
                    self._db.execute(
                        "DELETE FROM counts WHERE key IN (SELECT key FROM counts ORDER BY used LIMIT ?)",
                        (size - self.limit,),
                    )
        except sqlite3.Error:
            return

    def __len__(self) -> int:
        if self._db is None:
            return 0
        try:
            return self._db.execute("SELECT COUNT(*) FROM counts").fetchone()[0]
        except sqlite3.Error:
            return 0

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
