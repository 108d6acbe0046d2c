"""The tokens of files, folders and globs: what ``glassllm tokens`` counts.

A file's count is :func:`count_file`: ``len(tokenizer.encode(text))`` of its text as
stored (UTF-8, line endings as they are), nothing added around it — the count ``encode``
gives, and the one an editor shows for the open file; a JSON Lines dataset of
``{"text": …}`` records counts the records' texts, and a chat file (a ``.json``
conversation, a ``.jsonl`` dataset of them) under a tokenizer with a chat format counts
the prompts the model receives, template included, as the editor does
(:func:`file_count`). A dataset is counted line by line, so a budget applies to each line.

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
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from glassllm.chat import ChatFormat, Conversation, conversation_from, encode_chats, load_chat_format
from glassllm.count_cache import CountCache, content_digest, template_digest, tokenizer_digest
from glassllm.formats.files import read_bounded_bytes
from glassllm.packaged import PACKAGED, load_tokenizer
from glassllm.pipeline.any_tokenizer import AnyTokenizer
from glassllm.pipeline.two_cores import fork_is_safe
from glassllm.shown.problems import Problem, os_problem, problem, with_problem

__all__ = [
    "COUNTED_AS",
    "MAX_FILE_BYTES",
    "Counted",
    "FileCount",
    "Found",
    "LazyTokenizer",
    "SkippedFile",
    "count_contents",
    "count_file",
    "count_files",
    "counting_kind",
    "file_count",
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
    """How a file's name says it may be counted: ``"jsonl"`` for a ``.jsonl`` or
    ``.ndjson`` dataset, ``"json"`` for a ``.json`` file (which may hold a conversation),
    else ``"text"``."""
    lowered = path.lower()
    if lowered.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    return "json" if lowered.endswith(".json") else "text"


# How a file was counted (``FileCount.counted_as``): its whole text; a dataset's
# ``{"text": …}`` records' texts; conversations as the model receives them, through the
# tokenizer's chat format; or a chat file counted as text, the tokenizer having no chat format.
COUNTED_AS = ("text", "records", "chat", "chat-as-text")
_LETTERS: dict[str, str] = dict(zip(COUNTED_AS, "trcx", strict=True))  # each one's letter in the cache


@dataclass(frozen=True)
class FileCount:
    """A file's tokens, how they were counted (one of :data:`COUNTED_AS`) and, for a
    dataset, each counted line's ``(line, tokens)`` (lines from 1): a budget applies to
    each of them, as the editor applies it to each line."""

    tokens: int
    counted_as: str = "text"
    lines: tuple[tuple[int, int], ...] = ()

    def stored(self) -> int | bytes:
        """As the cache keeps it: the count alone for text, else a letter and the numbers."""
        if self.counted_as == "text":
            return self.tokens
        numbers = array("q", [self.tokens, *(n for line in self.lines for n in line)])
        return _LETTERS[self.counted_as].encode() + numbers.tobytes()

    @classmethod
    def from_stored(cls, value: int | bytes) -> FileCount:
        if isinstance(value, int):
            return cls(value)
        numbers = array("q")
        numbers.frombytes(value[1:])
        counted_as = next(name for name, letter in _LETTERS.items() if letter == chr(value[0]))
        pairs = tuple(zip(numbers[1::2], numbers[2::2], strict=True))
        return cls(numbers[0], counted_as, pairs)


def count_contents(path: str, text: str, tokenizer: AnyTokenizer, chat: ChatFormat | None = None) -> int:
    """The tokens of ``text``, the contents of the file at ``path``: the one place a file
    becomes a count (see :func:`file_count`)."""
    return file_count(path, text, tokenizer, chat).tokens


def file_count(path: str, text: str, tokenizer: AnyTokenizer, chat: ChatFormat | None = None) -> FileCount:
    """``text``, the file at ``path``, counted as the model receives it.

    With ``chat`` (``tokenizer``'s chat format), a ``.json`` conversation (a list of
    messages, or an object with ``messages``) counts its prompt as
    :func:`~glassllm.chat.encode_chats` renders it, and a JSON Lines dataset each line's
    conversation so (a ``{"text": …}`` line among them, its text), as ``glassllm chat``
    and the editor count them. A dataset whose every non-blank line is a ``{"text": …}``
    record counts the records' texts. Any other file, or a line that is neither, counts
    the whole text; a chat file so counted for want of a chat format says so
    (``chat-as-text``).
    """
    kind = counting_kind(path)
    if kind == "jsonl":
        lines = _dataset_lines(text, path)
        chats = lines is not None and any(isinstance(value, Conversation) for _, value in lines)
        if lines is not None and (chat is not None or not chats):
            return _dataset_count(lines, tokenizer, chat)
        if chats:
            return FileCount(len(tokenizer.encode(text)), "chat-as-text")
    conversation = _conversation(text, path) if kind == "json" else None
    if conversation is not None and chat is not None:
        return FileCount(next(encode_chats(chat, [conversation], sources=False)).count, "chat")
    return FileCount(len(tokenizer.encode(text)), "text" if conversation is None else "chat-as-text")


# A dataset's non-blank line: its number (from 1) and its record's text, or its conversation.
_Line = tuple[int, "str | Conversation"]


def _dataset_lines(text: str, path: str) -> list[_Line] | None:
    """Each non-blank line's conversation or ``{"text": …}`` record's text, or ``None``
    when a line is neither."""
    found: list[_Line] = []
    # Only "\n" ends a line: a JSON string may hold U+2028 and the like, which
    # str.splitlines would cut at.
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            return None
        try:
            found.append((number, conversation_from(value, f"{path}:{number}")))
        except ValueError:
            if not isinstance(value, dict) or not isinstance(value.get("text"), str):
                return None
            found.append((number, value["text"]))
    return found


def _holds_conversations(path: str, limit: int) -> bool:
    """Whether the file at ``path`` may be counted through a chat format: a ``.json``
    conversation, or a dataset with one (a file that cannot be read is told by its count)."""
    kind = counting_kind(path)
    if kind == "text":
        return False
    try:
        text = read_text(path, limit)[0]
    except (OSError, ValueError):
        return False
    if kind == "json":
        return _conversation(text, path) is not None
    lines = _dataset_lines(text, path)
    return lines is not None and any(isinstance(value, Conversation) for _, value in lines)


def _conversation(text: str, path: str) -> Conversation | None:
    try:
        return conversation_from(json.loads(text), path)
    except (ValueError, RecursionError):
        return None


def _dataset_count(lines: list[_Line], tokenizer: AnyTokenizer, chat: ChatFormat | None) -> FileCount:
    """A dataset's count, line by line (see :func:`file_count`)."""
    conversations = [value for _, value in lines if isinstance(value, Conversation)]
    prompts = iter(encode_chats(chat, conversations, sources=False)) if chat is not None and conversations else None
    counts = []
    for number, value in lines:
        if isinstance(value, str):
            counts.append((number, len(tokenizer.encode(value))))
        else:
            assert prompts is not None  # a conversation is only kept with a chat format
            counts.append((number, next(prompts).count))
    return FileCount(sum(count for _, count in counts), "chat" if conversations else "records", tuple(counts))


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
    whose every count is in the cache loads none), and its chat format likewise."""

    def __init__(self, spec: str, match_specials: bool = False) -> None:
        self.spec, self.match_specials = spec, match_specials
        self._loaded: AnyTokenizer | None = None
        self._chat: ChatFormat | Exception | None = None

    @cached_property
    def digest(self) -> bytes | None:
        return tokenizer_digest(self.spec, self.match_specials)

    @cached_property
    def chat_digest(self) -> bytes | None:
        return None if self.digest is None else template_digest(self.spec, self.digest)

    def digest_for(self, kind: str) -> bytes | None:
        """The cache's key of its counts of a file of ``kind`` (see :func:`counting_kind`)."""
        return self.digest if kind == "text" else self.chat_digest

    def get(self) -> AnyTokenizer:
        if self._loaded is None:
            self._loaded = load_tokenizer(self.spec, match_specials=self.match_specials)
        return self._loaded

    def chat(self) -> ChatFormat | None:
        """Its chat format (:func:`~glassllm.chat.load_chat_format`), loaded once; None
        when it has none, and :attr:`chat_problem` says why."""
        if self._chat is None:
            try:
                if self.spec in PACKAGED:
                    raise problem(ValueError, "tokens.own_no_chat", path=self.spec)
                self._chat = load_chat_format(self.spec)
            except (OSError, ValueError) as error:
                self._chat = error
        return None if isinstance(self._chat, Exception) else self._chat

    @property
    def chat_problem(self) -> Exception | None:
        """Why it has no chat format (once :meth:`chat` was asked)."""
        return self._chat if isinstance(self._chat, Exception) else None

    def close(self) -> None:
        """End its chat template's worker process, if one was started."""
        if self._chat is not None and not isinstance(self._chat, Exception):
            self._chat.close()


@dataclass
class Counted:
    """Each counted file's counts, one per tokenizer in order, and how each was taken
    (``files``: a :class:`FileCount` per tokenizer; ``counts``: their tokens); the files
    skipped, each with its reason; the ones that could not be read."""

    counts: dict[str, list[int]] = field(default_factory=dict)
    skipped: list[SkippedFile] = field(default_factory=list)
    errors: list[Exception] = field(default_factory=list)
    files: dict[str, list[FileCount]] = field(default_factory=dict)


Progress = Callable[[int, int], None]
_NOT_YET = FileCount(-1)


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
    else in ``jobs`` processes (default: one per core); ``progress(done, total)`` in bytes.
    A file that may hold conversations (``.json``, ``.jsonl``) under a tokenizer with a
    chat format is counted in this process, where the template's sandboxed worker runs."""
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
    keys = {path: [tok.digest_for(counting_kind(path)) for tok in tokenizers] for path in digests}
    wanted = (digests[path] + key for path in digests for key in keys[path] if key is not None)
    known = cache.get(wanted) if cache else {}
    tasks: list[tuple[str, tuple[int, ...]]] = []
    for path, digest in digests.items():
        row = [_NOT_YET if key is None else _known(known.get(digest + key)) for key in keys[path]]
        counted.files[path] = row
        missing = tuple(index for index, count in enumerate(row) if count is _NOT_YET)
        if missing:
            tasks.append((path, missing))
    new = _count_tasks(tasks, tokenizers, sizes, limit, jobs, progress, counted)
    if cache is not None:
        found = {digest + key: n.stored() for path, digest, c in new for i, n in c.items() if (key := keys[path][i])}
        cache.put(found)
    counted.counts = {path: [count.tokens for count in row] for path, row in counted.files.items()}
    return counted


def _known(value: int | bytes | None) -> FileCount:
    return _NOT_YET if value is None else FileCount.from_stored(value)


_TOKENIZERS: list[AnyTokenizer | None] = []
_CHATS: list[ChatFormat | None] = []
_LIMIT = MAX_FILE_BYTES
# What a task gives back: its file, the digest of the bytes counted, and the counts (or
# what went wrong).
_Result = tuple[str, bytes | None, dict[int, FileCount] | Exception]
_New = list[tuple[str, bytes, dict[int, FileCount]]]


def _count_tasks(
    tasks: list[tuple[str, tuple[int, ...]]],
    tokenizers: Sequence[LazyTokenizer],
    sizes: dict[str, int],
    limit: int,
    jobs: int | None,
    progress: Progress | None,
    counted: Counted,
) -> _New:
    """Count what the cache lacked into ``counted``; returns (path, digest, counts) to keep."""
    global _TOKENIZERS, _CHATS, _LIMIT
    needed = {index for _, missing in tasks for index in missing}
    chats = [task for task in tasks if _holds_conversations(task[0], limit)]
    chatty = {index for _, missing in chats for index in missing}
    # Loaded before the workers fork, so that each starts with them (and none reads a file);
    # a chat format only when some file holds a conversation (not for every package.json).
    _TOKENIZERS = [tok.get() if index in needed else None for index, tok in enumerate(tokenizers)]
    _CHATS = [tok.chat() if index in chatty else None for index, tok in enumerate(tokenizers)]
    _LIMIT = limit
    # Conversations render in the chat template's worker, which this process talks to.
    here = [task for task in chats if any(_CHATS[index] for index in task[1])]
    tasks = [task for task in tasks if task not in here]
    tasks.sort(key=lambda task: -sizes[task[0]])  # the largest first: no straggler at the end
    total = sum(sizes[path] for path, _ in [*tasks, *here])
    workers = min(jobs or os.cpu_count() or 1, len(tasks))
    serial = workers < 2 or (total < _PARALLEL_FROM and jobs is None)
    done = _Done(sizes, total, progress, counted)
    try:
        if serial or not fork_is_safe():
            done.gather(map(_count_task, tasks))
        else:
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                done.gather(pool.imap_unordered(_count_task, tasks))
        done.gather(map(_count_task, here))
        return done.new
    finally:
        _TOKENIZERS, _CHATS = [], []


class _Done:
    """The counts as they come, into ``counted``, with the progress in bytes."""

    def __init__(self, sizes: dict[str, int], total: int, progress: Progress | None, counted: Counted) -> None:
        self.sizes, self.total, self.progress, self.counted = sizes, total, progress, counted
        self.done = 0
        self.new: _New = []

    def gather(self, results: Iterable[_Result]) -> None:
        counted = self.counted
        for path, digest, found in results:
            self.done += self.sizes[path]
            if self.progress is not None:
                self.progress(self.done, self.total)
            if isinstance(found, Exception):  # the file changed since it was first read, or a template refused it
                del counted.files[path]
                if isinstance(found, SkippedFile):
                    counted.skipped.append(found)
                else:
                    counted.errors.append(found)
                continue
            for index, count in found.items():
                counted.files[path][index] = count
            if digest is not None:
                self.new.append((path, digest, found))


def _count_task(task: tuple[str, tuple[int, ...]]) -> _Result:
    path, missing = task
    try:
        text, data = read_text(path, _LIMIT)
    except (OSError, ValueError) as error:
        return path, None, error
    counts = {}
    for index in missing:
        tokenizer = _TOKENIZERS[index]
        assert tokenizer is not None  # loaded for every index a task misses
        try:
            counts[index] = file_count(path, text, tokenizer, _CHATS[index])
        except ValueError as error:  # a chat template that refuses a conversation, named
            return path, None, error
    # The digest of the bytes counted, in case the file changed since it was first read.
    return path, content_digest(data, counting_kind(path)), counts
