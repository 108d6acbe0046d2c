"""The map of the workspace's tokens: the page of ``glassllm tokens --html`` for the open
folders, counted in a child process.

The files are those :func:`glassllm.file_tokens.find_files` finds, as ``glassllm tokens``
finds them: in a git work tree what git lists (``git ls-files --cached --others
--exclude-standard``: git's own reading of every ``.gitignore``, ``info/exclude`` and the
global excludes, which no reader of ours would match exactly), elsewhere every file but
``.git`` folders. The counting is the library's :func:`~glassllm.file_tokens.count_files`
with its cache, in a child (``python -m glassllm_server.token_map``) that may use every
core while the server goes on answering: it reads the files and the tokenizers as JSON on
standard input and writes JSON lines, ``{"progress": [bytes done, bytes in all]}`` then
``{"done": …}`` (see :func:`main`). Binaries, text that is not UTF-8 and files over
:data:`~glassllm.file_tokens.MAX_FILE_BYTES` (10 MB) are skipped, each with its reason.
No pygls here.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from glassllm.budgets import Budget
from glassllm.count_cache import CountCache
from glassllm.file_tokens import MAX_FILE_BYTES, LazyTokenizer, count_files
from glassllm.packaged import load_problem
from glassllm.shown.tokens_page import FileRow

__all__ = ["MAX_FILE_BYTES", "counting_job", "file_rows", "main", "shown_path"]


def shown_path(path: str, folders: Sequence[Path]) -> str:
    """A file's path as the page shows it: relative to its workspace folder, under the
    folder's name when there are several; bytes of the name that are not UTF-8 as ``\\xNN``."""
    for folder in folders:
        relative = os.path.relpath(path, folder)
        if not relative.startswith(os.pardir):
            shown = relative if len(folders) == 1 else os.path.join(folder.name, relative)
            break
    else:
        shown = path
    return shown.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


# The child writes its progress at most this often (one line per file would flood the client).
_PROGRESS_SECONDS = 0.1


def counting_job(
    files: Sequence[str], tokenizers: Sequence[tuple[str, bool]], locale: str, limit: int = MAX_FILE_BYTES
) -> bytes:
    """What the child reads on standard input: the files, each tokenizer (its name as
    ``-t`` takes it, and whether it reads special-token text as special tokens), the
    language of its problems, the size bound."""
    job = {"files": list(files), "tokenizers": [list(pair) for pair in tokenizers], "locale": locale, "limit": limit}
    # File names that are not UTF-8 travel as the surrogates Python reads them as.
    return json.dumps(job).encode("utf-8")


def file_rows(
    counts: dict[str, list[int]], budgets: dict[str, tuple[Budget, int] | None], folders: Sequence[Path]
) -> list[FileRow]:
    """The page's rows, the largest first: each file's counts and its budget with the
    index of the tokenizer that budget counts with."""
    rows = []
    for path, row in counts.items():
        applied = budgets.get(path)
        budget, column = (None, 0) if applied is None else applied
        rows.append(FileRow(shown_path(path, folders), row, budget, column))
    rows.sort(key=lambda row: (-row.counts[0], row.path))
    return rows


def _write(line: dict[str, Any]) -> None:
    # ASCII: a file name's lone surrogates (bytes that are not UTF-8) travel escaped.
    sys.stdout.write(json.dumps(line, ensure_ascii=True) + "\n")
    sys.stdout.flush()


class _Progress:
    """``{"progress": [done, total]}`` lines, at most every :data:`_PROGRESS_SECONDS`, and the last one."""

    def __init__(self) -> None:
        self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total or now - self.last >= _PROGRESS_SECONDS:
            self.last = now
            _write({"progress": [done, total]})


def main() -> None:
    """Count the job on standard input (see :func:`counting_job`), writing JSON lines."""
    # SIGTERM (a cancel) ends the child through ``SystemExit``: the pool of workers
    # (count_files' ``with Pool``) is then terminated with it instead of left running.
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    job = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    tokenizers = [LazyTokenizer(name, match_specials) for name, match_specials in job["tokenizers"]]
    cache = CountCache()
    try:
        counted = count_files(
            job["files"],
            tokenizers,
            limit=job["limit"],
            cache=cache,
            progress=_Progress(),
        )
    except (OSError, ValueError) as error:  # a tokenizer that does not load
        _write({"error": load_problem(error, job["locale"])})
        return
    finally:
        cache.close()
    skipped = [[file.path, file.reason_in("en"), file.reason_in("pt")] for file in counted.skipped]
    _write({"done": {"counts": counted.counts, "skipped": skipped, "unreadable": [str(e) for e in counted.errors]}})


if __name__ == "__main__":
    main()
