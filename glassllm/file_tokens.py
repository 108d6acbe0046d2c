"""The tokens of files, folders and globs: what ``glassllm tokens`` counts.

A file's count is :func:`count_file`: ``len(tokenizer.encode(text))`` of its text as
stored (UTF-8, line endings as they are), nothing added around it — the count ``encode``
gives, and the one an editor shows for the open file; a JSON Lines dataset of
``{"text": …}`` records counts the records' texts (:func:`count_contents`).

:func:`find_files` turns what a user names into files: a file as it is, a folder walked
whole, a glob (``**`` for any folders) expanded. A folder inside a git work tree is
listed by git itself (tracked and untracked files, without what ``.gitignore``, the
repository's ``info/exclude`` and the global excludes skip), so the skipped are exactly
git's; elsewhere every file under it but ``.git`` folders. Symbolic links to folders are
not followed (no loops). :func:`count_files` then skips binaries (a NUL byte in the first
8,000 bytes, git's rule), text that is not UTF-8, files over a size bound and what is not
a regular file (a FIFO is never opened), each with its reason; a file that cannot be read
is an error of its own. It counts in one process per core and keeps counts in a
:class:`~glassllm.count_cache.CountCache`, loading a tokenizer only when some file
misses the cache.
"""

from __future__ import annotations

import glob
import json
import multiprocessing
import os
import stat
import subprocess
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from glassllm.count_cache import CountCache, content_digest, tokenizer_digest
from glassllm.formats.files import read_bounded_bytes
from glassllm.packaged import load_tokenizer
from glassllm.pipeline.any_tokenizer import AnyTokenizer
from glassllm.shown.problems import Problem, os_problem, problem, with_problem

__all__ = [
    "MAX_FILE_BYTES",
    "Counted",
    "Found",
    "LazyTokenizer",
    "SkippedFile",
    "count_contents",
    "count_file",
    "count_files",
    "counting_kind",
    "find_files",
    "read_text",
]

# Larger files are skipped: generated data, logs, datasets, rarely a prompt or a document.
MAX_FILE_BYTES = 10 << 20
_SNIFF = 8000  # git's bound: a NUL byte this early makes a file binary
_GLOB = frozenset("*?[")
# Below this many bytes to count, starting processes costs more than it saves.
_PARALLEL_FROM = 1 << 20

_REASONS = {
    "binary": ("binary (a NUL byte in its first 8,000 bytes)", "binário (um byte NUL nos primeiros 8.000 bytes)"),
    "not-utf8": (
        "not UTF-8 text (byte {byte} at offset {offset})",
        "não é texto UTF-8 (byte {byte} na posição {offset})",
    ),
    "too-large": ("larger than {megabytes} MB", "maior que {megabytes} MB"),
    "not-regular": ("not a regular file", "não é um arquivo comum"),
}


class SkippedFile(ValueError):
    """A file not counted, and why: ``reason`` is ``binary``, ``not-utf8``, ``too-large``
    or ``not-regular``."""

    def __init__(self, path: str, reason: str, **fields: object) -> None:
        english, portuguese = (text.format(**fields) for text in _REASONS[reason])
        found = Problem("tokens.skipped", {"path": path, "reason": english, "reason_pt": portuguese})
        super().__init__(found.text())
        self.path, self.reason = path, reason
        with_problem(self, found)

    def reason_in(self, language: str) -> str:
        """Why it was not counted, in ``language`` (``"en"`` or ``"pt"``)."""
        fields = self.problem.fields  # type: ignore[attr-defined]
        return fields["reason_pt" if language == "pt" else "reason"]

    def __reduce__(self) -> tuple[object, ...]:
        # Rebuilt from the same arguments when a worker process sends it back.
        return (_skipped, (self.path, self.reason, self.args[0], self.problem))  # type: ignore[attr-defined]


def _skipped(path: str, reason: str, message: str, found: Problem) -> SkippedFile:
    error = SkippedFile.__new__(SkippedFile)
    ValueError.__init__(error, message)
    error.path, error.reason = path, reason
    return with_problem(error, found)


def read_text(path: str, limit: int = MAX_FILE_BYTES) -> tuple[str, bytes]:
    """The text of ``path`` and its bytes; raises :class:`SkippedFile` for a file that is
    not counted and ``OSError`` (naming the file) for one that cannot be read."""
    try:
        status = os.stat(path)
    except OSError as error:
        raise os_problem(error, "file.unreadable", "text file", path) from None
    if not stat.S_ISREG(status.st_mode):
        raise SkippedFile(path, "not-regular")
    if status.st_size > limit:
        raise SkippedFile(path, "too-large", megabytes=_megabytes(limit))
    try:
        data = read_bounded_bytes(path, "text file", limit)
    except ValueError:  # it grew past the bound while being read
        raise SkippedFile(path, "too-large", megabytes=_megabytes(limit)) from None
    if b"\0" in data[:_SNIFF]:
        raise SkippedFile(path, "binary")
    try:
        return data.decode("utf-8"), data
    except UnicodeDecodeError as error:
        raise SkippedFile(path, "not-utf8", byte=f"0x{data[error.start]:02x}", offset=error.start) from None


def _megabytes(limit: int) -> str:
    return f"{limit / (1 << 20):g}"


def counting_kind(path: str) -> str:
    """How a file is counted: ``"jsonl"`` for a ``.jsonl`` file, else ``"text"``."""
    return "jsonl" if path.lower().endswith(".jsonl") else "text"


def count_contents(path: str, text: str, tokenizer: AnyTokenizer) -> int:
    """The tokens of ``text``, the contents of the file at ``path``: the one place a file
    becomes a count. A JSON Lines file whose every non-blank line is an object with a
    string ``"text"`` counts the sum of those texts (a dataset's documents, without the
    JSON around them); any other file, its whole text."""
    if counting_kind(path) == "jsonl":
        texts = _jsonl_texts(text)
        if texts is not None:
            return sum(len(tokenizer.encode(record)) for record in texts)
    return len(tokenizer.encode(text))


def _jsonl_texts(text: str) -> list[str] | None:
    """Each record's ``"text"``, or ``None`` when a line is not such a record."""
    texts = []
    # Only "\n" ends a record: a JSON string may hold U+2028 and the like, which
    # str.splitlines would cut at.
    for line in text.split("\n"):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            return None
        if not isinstance(record, dict) or not isinstance(record.get("text"), str):
            return None
        texts.append(record["text"])
    return texts


def count_file(path: str, tokenizer: AnyTokenizer, limit: int = MAX_FILE_BYTES) -> int:
    """The tokens of the file at ``path`` (see :func:`count_contents`)."""
    return count_contents(path, read_text(path, limit)[0], tokenizer)


@dataclass
class Found:
    """The files a user's paths name, in order, once each; ``problems``: globs that match
    nothing and folders that cannot be read; ``ignored``: how many entries git's excludes
    skipped in the folders walked."""

    files: list[str] = field(default_factory=list)
    problems: list[Exception] = field(default_factory=list)
    ignored: int = 0


def find_files(paths: Iterable[str]) -> Found:
    """The files that ``paths`` (files, folders, globs) name: see the module."""
    found = Found()
    seen: set[str] = set()

    def add(path: str) -> None:
        if path not in seen:
            seen.add(path)
            found.files.append(path)

    for given in paths:
        if not os.path.lexists(given) and _GLOB & set(given):
            matches = sorted(glob.glob(given, recursive=True))
            if not matches:
                found.problems.append(problem(FileNotFoundError, "tokens.no_match", path=given))
            for match in matches:
                _add_path(match, add, found)
        else:
            _add_path(given, add, found)
    return found


def _add_path(path: str, add: Callable[[str], None], found: Found) -> None:
    if not os.path.isdir(path):
        add(path)
        return
    listed = _git_files(path)
    if listed is None:

        def unreadable(error: OSError) -> None:
            found.problems.append(os_problem(error, "file.unreadable", "folder", error.filename or path))

        for folder, folders, names in os.walk(path, onerror=unreadable):
            folders[:] = sorted(name for name in folders if name != ".git")
            for name in sorted(names):
                add(os.path.normpath(os.path.join(folder, name)))
        return
    files, ignored, warnings = listed
    found.ignored += ignored
    # What git could not list (a folder it may not read) is said, not silently left out.
    found.problems.extend(problem(ValueError, "tokens.git_warning", path=path, line=line) for line in warnings)
    for name in files:
        add(os.path.normpath(os.path.join(path, name)))


def _git_files(folder: str) -> tuple[list[str], int, list[str]] | None:
    """The files git lists under ``folder`` (relative to it), how many entries its
    excludes skip, and what git warned of; ``None`` outside a work tree or without git."""
    listing = _git(folder, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ".")
    if listing is None:
        return None
    names, warnings = listing
    ignored = _git(folder, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", "--", ".")
    # A file deleted but not yet staged is still in the index: it is not there to count.
    files = [name for name in dict.fromkeys(names) if os.path.lexists(os.path.join(folder, name))]
    return files, len(ignored[0]) if ignored else 0, warnings


def _git(folder: str, *args: str) -> tuple[list[str], list[str]] | None:
    """The NUL-separated names ``git -C folder ARGS`` prints and the lines of its
    warnings; ``None`` when git is missing or fails (outside a work tree)."""
    try:
        done = subprocess.run(["git", "-C", folder, *args], capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    names = [os.fsdecode(name) for name in done.stdout.split(b"\0") if name]
    return names, os.fsdecode(done.stderr).splitlines()


class LazyTokenizer:
    """A tokenizer named as ``--tokenizer`` names it, loaded only when first needed (a run
    whose every count is in the cache loads none)."""

    def __init__(self, spec: str, match_specials: bool = False) -> None:
        self.spec, self.match_specials = spec, match_specials
        self._loaded: AnyTokenizer | None = None

    @cached_property
    def digest(self) -> bytes | None:
        return tokenizer_digest(self.spec, self.match_specials)

    def get(self) -> AnyTokenizer:
        if self._loaded is None:
            self._loaded = load_tokenizer(self.spec, match_specials=self.match_specials)
        return self._loaded


@dataclass
class Counted:
    """Each counted file's counts, one per tokenizer in order; the files skipped, each with
    its reason; the ones that could not be read."""

    counts: dict[str, list[int]] = field(default_factory=dict)
    skipped: list[SkippedFile] = field(default_factory=list)
    errors: list[Exception] = field(default_factory=list)


Progress = Callable[[int, int], None]


def count_files(
    files: Sequence[str],
    tokenizers: Sequence[LazyTokenizer],
    *,
    limit: int = MAX_FILE_BYTES,
    jobs: int | None = None,
    cache: CountCache | None = None,
    progress: Progress | None = None,
) -> Counted:
    """Count ``files`` under each of ``tokenizers``: from ``cache`` where it has them,
    else in ``jobs`` processes (default: one per core); ``progress(done, total)`` in bytes."""
    counted = Counted()
    digests: dict[str, bytes] = {}
    sizes: dict[str, int] = {}
    for path in files:
        try:
            data = read_text(path, limit)[1]
        except SkippedFile as skipped:
            counted.skipped.append(skipped)
            continue
        except (OSError, ValueError) as error:
            counted.errors.append(error)
            continue
        digests[path], sizes[path] = content_digest(data, counting_kind(path)), len(data)
    keys = [tok.digest for tok in tokenizers]
    known = cache.get(d + k for d in digests.values() for k in keys if k is not None) if cache else {}
    tasks: list[tuple[str, tuple[int, ...]]] = []
    for path, digest in digests.items():
        row = [known.get(digest + key, -1) if key is not None else -1 for key in keys]
        counted.counts[path] = row
        missing = tuple(index for index, count in enumerate(row) if count < 0)
        if missing:
            tasks.append((path, missing))
    new = _count_tasks(tasks, tokenizers, sizes, limit, jobs, progress, counted)
    if cache is not None:
        cache.put({digest + key: n for digest, found in new for i, n in found.items() if (key := keys[i]) is not None})
    return counted


_TOKENIZERS: list[AnyTokenizer | None] = []
_LIMIT = MAX_FILE_BYTES


def _count_tasks(
    tasks: list[tuple[str, tuple[int, ...]]],
    tokenizers: Sequence[LazyTokenizer],
    sizes: dict[str, int],
    limit: int,
    jobs: int | None,
    progress: Progress | None,
    counted: Counted,
) -> list[tuple[bytes, dict[int, int]]]:
    """Count what the cache lacked into ``counted``; returns (digest, counts) to keep."""
    global _TOKENIZERS, _LIMIT
    needed = {index for _, missing in tasks for index in missing}
    # Loaded before the workers fork, so that each starts with them (and none reads a file).
    _TOKENIZERS = [tok.get() if index in needed else None for index, tok in enumerate(tokenizers)]
    _LIMIT = limit
    tasks.sort(key=lambda task: -sizes[task[0]])  # the largest first: no straggler at the end
    total = sum(sizes[path] for path, _ in tasks)
    workers = min(jobs or os.cpu_count() or 1, len(tasks))
    serial = workers < 2 or (total < _PARALLEL_FROM and jobs is None)
    try:
        if serial or threading.active_count() > 1 or "fork" not in multiprocessing.get_all_start_methods():
            return _gather(map(_count_task, tasks), sizes, total, progress, counted)
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            return _gather(pool.imap_unordered(_count_task, tasks), sizes, total, progress, counted)
    finally:
        _TOKENIZERS = []


def _gather(
    results: Iterable[tuple[str, bytes | None, dict[int, int] | Exception]],
    sizes: dict[str, int],
    total: int,
    progress: Progress | None,
    counted: Counted,
) -> list[tuple[bytes, dict[int, int]]]:
    done = 0
    new = []
    for path, digest, found in results:
        done += sizes[path]
        if progress is not None:
            progress(done, total)
        if isinstance(found, Exception):  # the file changed since it was first read
            del counted.counts[path]
            if isinstance(found, SkippedFile):
                counted.skipped.append(found)
            else:
                counted.errors.append(found)
            continue
        for index, count in found.items():
            counted.counts[path][index] = count
        if digest is not None:
            new.append((digest, found))
    return new


def _count_task(task: tuple[str, tuple[int, ...]]) -> tuple[str, bytes | None, dict[int, int] | Exception]:
    path, missing = task
    try:
        text, data = read_text(path, _LIMIT)
    except (OSError, ValueError) as error:
        return path, None, error
    counts = {}
    for index in missing:
        tokenizer = _TOKENIZERS[index]
        assert tokenizer is not None  # loaded for every index a task misses
        counts[index] = count_contents(path, text, tokenizer)
    # The digest of the bytes counted, in case the file changed since it was first read.
    return path, content_digest(data, counting_kind(path)), counts
