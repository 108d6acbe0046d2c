"""Tokenizer files: the JSON format, its validation, and atomic writes.

Format (UTF-8 JSON)::

    {"version": 1,
     "alphabet": ["\\n", " ", "a", ...],          # single characters, no repeats
     "merges": [["a", "n"], ["an", "a"], ...],    # in rank order
     "merge_counts": [4, 2, ...]}                 # optional: training evidence

Errors keep the documented types (a missing key is a ``KeyError``, bad JSON the JSON
reader's ``JSONDecodeError``, a filesystem failure an ``OSError``) and every message names
the file. A file that parses but is structurally wrong raises ``ValueError`` saying what
is wrong, instead of failing later inside ``encode``.

Reading is bounded, so that no file can hang a reader or exhaust its memory (the
language server loads whatever path a setting names): at most :data:`MAX_FILE_BYTES`
are read and at most :data:`MAX_ENTRIES` vocabulary entries built; JSON nested past the
reader's recursion limit is invalid JSON. Only regular files and pipes are read (so
``--tokenizer <(cat tok.json)`` works), a pipe without blocking: one no one writes to is
refused at once, one that goes silent for :data:`PIPE_IDLE_SECONDS` is given up. Other
kinds (``/dev/zero``, a terminal, a socket) are refused with ``ValueError`` unread.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import select
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from glassllm.shown.problems import Problem, number_pt, os_problem, problem, what_pt, with_problem

__all__ = [
    "FORMAT_VERSION",
    "MAX_ENTRIES",
    "MAX_FILE_BYTES",
    "MAX_MODEL_BYTES",
    "MAX_MODEL_VALUES",
    "PIPE_IDLE_SECONDS",
    "TokenizerFile",
    "atomic_write_text",
    "is_hf_tokenizer_file",
    "is_tokenizer_file",
    "may_replace",
    "read_tokenizer_file",
    "too_large",
    "write_tokenizer_file",
]

FORMAT_VERSION = 1

# A tokenizer of a million entries written by ``save`` is about 38 MB; loading one takes
# about 600 MB. The two bounds keep the worst file, dense or wide, under 1 GB.
MAX_FILE_BYTES = 32 << 20
MAX_ENTRIES = 1 << 20
# Real models' files (tokenizer.json, Tekken, SentencePiece .model) are read up to a larger
# bound: the largest vocabularies, 2,000,000 entries and more, make tokenizer.json files of
# 128 MB and up (HF writes each entry twice, in the vocabulary and as a merge, indented;
# a Gemma-like file spends ~125 bytes an entry). In JSON, memory is bounded by the values
# too: an array, an object, a string or a number costs Python 30 to 200 bytes for as few
# as 2 of text, so at most MAX_MODEL_VALUES of them (a 2,000,000-entry BPE file with its
# merges as pairs has 10 million) keep a file at both bounds under about 3 GB
# (docs/limits.md, measured).
MAX_MODEL_BYTES = 256 << 20
MAX_MODEL_VALUES = 1 << 24
# A pipe that sends nothing for this long (and stays open) is given up.
PIPE_IDLE_SECONDS = 5.0


@dataclass(frozen=True)
class TokenizerFile:
    """The validated contents of a tokenizer file."""

    alphabet: list[str]
    merges: list[tuple[str, str]]
    merge_counts: list[int] | None


def read_tokenizer_file(path: str | Path) -> TokenizerFile:
    """Read and validate a tokenizer file (within the bounds the module describes)."""
    return parse_tokenizer_file(read_bounded_bytes(path, "tokenizer file"), path)


def parse_tokenizer_file(raw: bytes, path: str | Path) -> TokenizerFile:
    """Validate the bytes of a tokenizer file already read (``path`` names it in errors)."""
    return _validate(_parse(_utf8(raw, path), path), path)


def read_bounded(path: str | Path, what: str, limit: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of ``path``, read as :func:`read_bounded_bytes` reads it."""
    return _utf8(read_bounded_bytes(path, what, limit), path)


def _utf8(raw: bytes, path: str | Path) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise problem(ValueError, "file.not_utf8", path=path, reason=error.reason, byte=error.start) from error


def read_bounded_bytes(path: str | Path, what: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of ``path``, a regular file or a pipe of at most ``limit`` bytes.

    Never blocks for good: a pipe is read without blocking, a FIFO no one writes to is
    refused at once, and one that sends nothing for :data:`PIPE_IDLE_SECONDS` is given up.
    ``what`` names the file in an ``OSError`` (``cannot read {what}``).
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise os_problem(error, "file.unreadable", what, str(path)) from error
    try:
        status = os.fstat(descriptor)
        if stat.S_ISDIR(status.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        if stat.S_ISREG(status.st_mode):
            if status.st_size > limit:
                raise too_large(path, limit, what)
            os.set_blocking(descriptor, True)
            raw = _read_file(descriptor, limit)
        elif stat.S_ISFIFO(status.st_mode):
            raw = _read_pipe(descriptor, limit, path, what)
        else:
            raise problem(ValueError, "file.not_regular", path=path)
    except OSError as error:
        raise os_problem(error, "file.unreadable", what, str(path)) from error
    finally:
        os.close(descriptor)
    if len(raw) > limit:  # a file that grew while it was read
        raise too_large(path, limit, what)
    return raw


def too_large(path: str | Path, limit: int, what: str) -> ValueError:
    """The error for ``path``, a ``what`` over ``limit`` bytes."""
    return problem(ValueError, "file.too_large", path=path, megabytes=limit >> 20, what=what, what_pt=what_pt(what))


def _read_file(descriptor: int, limit: int) -> bytes:
    """Up to ``limit + 1`` bytes: one more than allowed tells a file that is too large."""
    blocks = []
    left = limit + 1
    while left > 0:
        block = os.read(descriptor, min(left, 1 << 20))
        if not block:
            break
        blocks.append(block)
        left -= len(block)
    return b"".join(blocks)


def _read_pipe(descriptor: int, limit: int, path: str | Path, what: str) -> bytes:
    """A pipe's bytes until its writers close it. With no writer at all, a read of a
    FIFO ends at once with nothing, which is refused: the file is not a regular one."""
    blocks = []
    size = 0
    waiting = select.poll()
    waiting.register(descriptor, select.POLLIN)
    while True:
        try:
            block = os.read(descriptor, 1 << 16)
        except BlockingIOError:
            if not waiting.poll(PIPE_IDLE_SECONDS * 1000):
                raise problem(ValueError, "file.silent_pipe", path=path, seconds=PIPE_IDLE_SECONDS) from None
            continue
        if not block:
            break
        blocks.append(block)
        size += len(block)
        if size > limit:
            raise too_large(path, limit, what)
    if not blocks:
        raise problem(ValueError, "file.empty_pipe", path=path)
    return b"".join(blocks)


def _parse(text: str, path: str | Path) -> object:
    """The JSON value of ``text``; every failure a ``JSONDecodeError`` naming the file."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        found = Problem(
            "file.not_json", {"path": path, "reason": error.msg, "line": error.lineno, "column": error.colno}
        )
        raise with_problem(json.JSONDecodeError(found.text(), error.doc, error.pos), found) from error
    except RecursionError:
        raise _json_error(Problem("file.nested", {"path": path}), text) from None
    except ValueError:
        # Python refuses to convert an integer of more digits than this.
        digits = sys.get_int_max_str_digits()
        raise _json_error(
            Problem("file.long_number", {"path": path, "digits": digits, "digits_pt": number_pt(digits)}), text
        ) from None


def _json_error(found: Problem, text: str) -> json.JSONDecodeError:
    """A ``JSONDecodeError`` whose message has no line and column: the reader does not
    say where it stopped, and a made-up place would mislead."""
    error = json.JSONDecodeError(found.text(), text, 0)
    error.args = (found.text(),)
    return with_problem(error, found)


def _validate(data: object, path: str | Path) -> TokenizerFile:
    if not isinstance(data, dict):
        raise problem(ValueError, "file.not_object", path=path, found=type(data).__name__)
    for key in ("version", "alphabet", "merges"):
        if key not in data:
            raise problem(KeyError, "file.missing_key", path=path, key=key)
    version = data["version"]
    if version != FORMAT_VERSION or isinstance(version, bool):
        raise problem(ValueError, "file.version", path=path, version=version, expected=FORMAT_VERSION)

    alphabet = data["alphabet"]
    if not isinstance(alphabet, list):
        raise problem(ValueError, "file.not_list", path=path, key="alphabet", found=type(alphabet).__name__)
    merges = data["merges"]
    if not isinstance(merges, list):
        raise problem(ValueError, "file.not_list", path=path, key="merges", found=type(merges).__name__)
    entries = 4 + len(alphabet) + len(merges)  # the specials, the alphabet, one per merge
    if entries > MAX_ENTRIES:
        raise problem(
            ValueError,
            "file.entries",
            path=path,
            entries=entries,
            limit=MAX_ENTRIES,
            entries_pt=number_pt(entries),
            limit_pt=number_pt(MAX_ENTRIES),
        )
    seen: set[str] = set()
    for position, symbol in enumerate(alphabet):
        if not isinstance(symbol, str) or len(symbol) != 1:
            raise problem(ValueError, "file.symbol", path=path, position=position, found=symbol)
        if "\ud800" <= symbol <= "\udfff":
            raise problem(ValueError, "file.surrogate", path=path, position=position, code=ord(symbol))
        if symbol in seen:
            raise problem(ValueError, "file.duplicate", path=path, position=position, symbol=symbol)
        seen.add(symbol)

    pairs: list[tuple[str, str]] = []
    for rank, pair in enumerate(merges):
        if not isinstance(pair, list) or len(pair) != 2 or not all(isinstance(part, str) and part for part in pair):
            raise problem(ValueError, "file.pair", path=path, rank=rank, found=pair)
        for part in pair:
            if part not in seen:
                raise problem(ValueError, "file.pair_unknown", path=path, rank=rank, pair=pair, part=part)
        seen.add(pair[0] + pair[1])
        pairs.append((pair[0], pair[1]))

    merge_counts = data.get("merge_counts")
    if merge_counts is not None:
        if not isinstance(merge_counts, list) or len(merge_counts) != len(pairs):
            raise problem(ValueError, "file.counts", path=path, merges=len(pairs))
        for rank, count in enumerate(merge_counts):
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                raise problem(ValueError, "file.count", path=path, rank=rank, found=count)
    return TokenizerFile(list(alphabet), pairs, merge_counts)


def write_tokenizer_file(path: str | Path, contents: TokenizerFile) -> None:
    """Write a tokenizer file atomically: a temporary file in the same folder, then a rename.

    The destination is overwritten; missing parent folders are not created.
    """
    data: dict[str, object] = {
        "version": FORMAT_VERSION,
        "alphabet": contents.alphabet,
        "merges": [list(pair) for pair in contents.merges],
    }
    if contents.merge_counts is not None:
        data["merge_counts"] = contents.merge_counts
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=1) + "\n", "tokenizer file")


def atomic_write_text(path: str | Path, text: str, what: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically: a temporary file in the same folder,
    then a rename, so a reader sees the old file or the new one, never a partial one.

    ``what`` names the file in the error raised on failure (``cannot write {what}``).
    """
    destination = Path(path)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as error:
        code = ord(text[error.start])
        found = Problem("file.unencodable", {"path": path, "what": what, "what_pt": what_pt(what), "code": code})
        raise with_problem(ValueError(found.text()), found) from None
    temporary: str | None = None
    try:
        descriptor, temporary = tempfile.mkstemp(dir=destination.parent, prefix=f".{destination.name}.", suffix=".tmp")
        # mkstemp creates the file private (0600); a tokenizer file is ordinary data.
        os.fchmod(descriptor, 0o644)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(temporary, destination)
        temporary = None
    except OSError as error:
        raise os_problem(error, "file.unwritable", what, str(path)) from error
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def is_tokenizer_file(path: str | Path) -> bool:
    """Whether ``path`` holds a valid glassllm tokenizer file (so replacing it loses no
    one's text)."""
    try:
        read_tokenizer_file(path)
    except (OSError, KeyError, ValueError):
        return False
    return True


def is_hf_tokenizer_file(path: str | Path) -> bool:
    """Whether ``path`` holds a Hugging Face ``tokenizers`` file (a JSON object with a
    ``version`` and a ``model`` object)."""
    try:
        # Through the bounded reader too: the file is whatever sits at ``-o``, within the
        # bound of real models' files.
        data = _parse(read_bounded(path, "Hugging Face tokenizer file", MAX_MODEL_BYTES), path)
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "version" in data and isinstance(data.get("model"), dict)


def may_replace(path: str | Path, *, hugging_face: bool = False) -> bool:
    """Whether writing a tokenizer to ``path`` can lose nothing: nothing is there, or a
    tokenizer file of the kind being written (glassllm's, or Hugging Face's for an export).

    Anything else (someone's notes, a broken file, a folder) must only be replaced when
    the user says so.
    """
    target = Path(path)
    if not target.exists() and not target.is_symlink():
        return True
    if not target.is_file():
        return False
    return is_hf_tokenizer_file(target) if hugging_face else is_tokenizer_file(target)
