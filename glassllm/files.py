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

__all__ = [
    "FORMAT_VERSION",
    "MAX_ENTRIES",
    "MAX_FILE_BYTES",
    "PIPE_IDLE_SECONDS",
    "TokenizerFile",
    "atomic_write_text",
    "is_hf_tokenizer_file",
    "is_tokenizer_file",
    "may_replace",
    "read_tokenizer_file",
    "write_tokenizer_file",
]

FORMAT_VERSION = 1

# A tokenizer of a million entries written by ``save`` is about 38 MB; loading one takes
# about 600 MB. The two bounds keep the worst file, dense or wide, under 1 GB.
MAX_FILE_BYTES = 32 << 20
MAX_ENTRIES = 1 << 20
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
    return _validate(_parse(read_bounded(path, "tokenizer file"), path), path)


def read_bounded(path: str | Path, what: str, limit: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of ``path``, a regular file or a pipe of at most ``limit`` bytes.

    Never blocks for good: a pipe is read without blocking, a FIFO no one writes to is
    refused at once, and one that sends nothing for :data:`PIPE_IDLE_SECONDS` is given up.
    ``what`` names the file in an ``OSError`` (``cannot read {what}``).
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise type(error)(error.errno, f"cannot read {what}: {error.strerror}", str(path)) from error
    try:
        status = os.fstat(descriptor)
        mode = status.st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, f"cannot read {what}: {os.strerror(errno.EISDIR)}", str(path))
        if stat.S_ISREG(mode):
            if status.st_size > limit:
                raise _too_large(path, limit, what)
            os.set_blocking(descriptor, True)
            raw = _read_file(descriptor, limit)
        elif stat.S_ISFIFO(mode):
            raw = _read_pipe(descriptor, limit, path, what)
        else:
            raise ValueError(f"{path}: not a regular file")
    except OSError as error:
        if error.filename is not None:
            raise
        raise type(error)(error.errno, f"cannot read {what}: {error.strerror}", str(path)) from error
    finally:
        os.close(descriptor)
    if len(raw) > limit:  # a file that grew while it was read
        raise _too_large(path, limit, what)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from error


def _too_large(path: str | Path, limit: int, what: str) -> ValueError:
    return ValueError(f"{path}: larger than the {limit >> 20} MB a {what} may have")


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
                raise ValueError(f"{path}: a pipe that sent nothing for {PIPE_IDLE_SECONDS:g} s") from None
            continue
        if not block:
            break
        blocks.append(block)
        size += len(block)
        if size > limit:
            raise _too_large(path, limit, what)
    if not blocks:
        raise ValueError(f"{path}: not a regular file (a pipe with nothing written to it)")
    return b"".join(blocks)


def _parse(text: str, path: str | Path) -> object:
    """The JSON value of ``text``; every failure a ``JSONDecodeError`` naming the file."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise json.JSONDecodeError(f"{path}: not valid JSON: {error.msg}", error.doc, error.pos) from error
    except RecursionError:
        raise _json_error(f"{path}: not valid JSON (nested too deeply)", text) from None
    except ValueError:
        # Python refuses to convert an integer of more digits than this.
        digits = sys.get_int_max_str_digits()
        raise _json_error(f"{path}: not valid JSON (a number of more than {digits:,} digits)", text) from None


def _json_error(message: str, text: str) -> json.JSONDecodeError:
    """A ``JSONDecodeError`` whose message has no line and column: the reader does not
    say where it stopped, and a made-up place would mislead."""
    error = json.JSONDecodeError(message, text, 0)
    error.args = (message,)
    return error


def _validate(data: object, path: str | Path) -> TokenizerFile:
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object, found {type(data).__name__}")
    for key in ("version", "alphabet", "merges"):
        if key not in data:
            raise KeyError(f"{path}: missing key {key!r}")
    version = data["version"]
    if version != FORMAT_VERSION or isinstance(version, bool):
        raise ValueError(f"{path}: unknown version {version!r} (this glassllm reads version {FORMAT_VERSION})")

    alphabet = data["alphabet"]
    if not isinstance(alphabet, list):
        raise ValueError(f"{path}: 'alphabet' must be a list, found {type(alphabet).__name__}")
    merges = data["merges"]
    if not isinstance(merges, list):
        raise ValueError(f"{path}: 'merges' must be a list, found {type(merges).__name__}")
    entries = 4 + len(alphabet) + len(merges)  # the specials, the alphabet, one per merge
    if entries > MAX_ENTRIES:
        raise ValueError(f"{path}: {entries:,} vocabulary entries, more than the {MAX_ENTRIES:,} a tokenizer may have")
    seen: set[str] = set()
    for position, symbol in enumerate(alphabet):
        if not isinstance(symbol, str) or len(symbol) != 1:
            raise ValueError(f"{path}: alphabet[{position}] must be one character, found {symbol!r}")
        if "\ud800" <= symbol <= "\udfff":
            raise ValueError(f"{path}: alphabet[{position}] is a lone surrogate (U+{ord(symbol):04X}), not a character")
        if symbol in seen:
            raise ValueError(f"{path}: alphabet[{position}] {symbol!r} is a duplicate")
        seen.add(symbol)

    pairs: list[tuple[str, str]] = []
    for rank, pair in enumerate(merges):
        if not isinstance(pair, list) or len(pair) != 2 or not all(isinstance(part, str) and part for part in pair):
            raise ValueError(f"{path}: merges[{rank}] must be a pair of non-empty strings, found {pair!r}")
        for part in pair:
            if part not in seen:
                raise ValueError(
                    f"{path}: merges[{rank}] {pair!r} uses {part!r}, which is not in the vocabulary before that merge"
                )
        seen.add(pair[0] + pair[1])
        pairs.append((pair[0], pair[1]))

    merge_counts = data.get("merge_counts")
    if merge_counts is not None:
        if not isinstance(merge_counts, list) or len(merge_counts) != len(pairs):
            raise ValueError(f"{path}: 'merge_counts' must be a list with one count per merge ({len(pairs)})")
        for rank, count in enumerate(merge_counts):
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                raise ValueError(f"{path}: merge_counts[{rank}] must be a non-negative integer, found {count!r}")
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
        raise ValueError(f"{path}: cannot write {what}: {error.reason} (U+{ord(text[error.start]):04X})") from None
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
        raise type(error)(error.errno, f"cannot write {what}: {error.strerror}", str(path)) from error
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
        # Through the bounded reader too: the file is whatever sits at ``-o``. A Hugging
        # Face file spells each piece twice (vocabulary and merges), hence the larger bound.
        data = _parse(read_bounded(path, "Hugging Face tokenizer file", 4 * MAX_FILE_BYTES), path)
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
