"""A cache on disk of files' token counts, so a second ``glassllm tokens`` over unchanged
files reads no tokenizer and tokenizes nothing.

An entry is keyed by the file's content and the tokenizer: a BLAKE2b digest of the bytes
(and of how they are counted: as text, or as JSON Lines records) and one of the tokenizer
file's bytes, its ``match_specials`` and glassllm's version (a
new version may count differently). So a renamed or copied file hits, an edited one or
another tokenizer misses, and nothing in the cache can go stale. It lives in
``$XDG_CACHE_HOME/glassllm/token-counts.sqlite3`` (``~/.cache/…`` when the variable is not
set) and keeps at most :data:`MAX_ENTRIES` entries (about 100 bytes each on disk), the
least recently used dropped first.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path

from glassllm import __version__
from glassllm.packaged import PACKAGED, packaged_path

__all__ = ["MAX_ENTRIES", "CountCache", "cache_path", "content_digest", "tokenizer_digest"]

MAX_ENTRIES = 500_000


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


def tokenizer_digest(spec: str, match_specials: bool) -> bytes | None:
    """What identifies a tokenizer's counts: its file's bytes, how specials are read, and
    this glassllm's version; ``None`` for what is not a regular file (a pipe is read once,
    by the loader, which also says what is wrong with a missing file)."""
    if spec in PACKAGED:
        path = packaged_path(spec)
    elif spec.startswith("hf:"):
        from glassllm.formats.hub import resolve

        path = resolve(spec)
    else:
        path = Path(spec)
    if not path.is_file():
        return None
    digest = hashlib.blake2b(digest_size=20)
    # Not through the bounded reader: only a regular file gets here, and its loader reads
    # it whole (within the bound) anyway.
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    digest.update(f"\0{match_specials}\0{__version__}".encode())
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

    def get(self, keys: Iterable[bytes]) -> dict[bytes, int]:
        """The counts kept for ``keys`` (those not kept are absent); they become the most
        recently used."""
        if self._db is None:
            return {}
        wanted = list(keys)
        found: dict[bytes, int] = {}
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

    def put(self, counts: dict[bytes, int]) -> None:
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
