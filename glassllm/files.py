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
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from glassllm.problems import Problem, os_problem, problem, with_problem

__all__ = [
    "FORMAT_VERSION",
    "TokenizerFile",
    "atomic_write_text",
    "is_hf_tokenizer_file",
    "is_tokenizer_file",
    "may_replace",
    "read_tokenizer_file",
    "write_tokenizer_file",
]

FORMAT_VERSION = 1


@dataclass(frozen=True)
class TokenizerFile:
    """The validated contents of a tokenizer file."""

    alphabet: list[str]
    merges: list[tuple[str, str]]
    merge_counts: list[int] | None


def read_tokenizer_file(path: str | Path) -> TokenizerFile:
    """Read and validate a tokenizer file."""
    try:
        with open(path, encoding="utf-8") as handle:
            raw = handle.read()
    except OSError as error:
        raise os_problem(error, "file.unreadable", "tokenizer file", str(path)) from error
    except UnicodeDecodeError as error:
        raise problem(ValueError, "file.not_utf8", path=path, reason=error.reason, byte=error.start) from error
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as error:
        found = Problem(
            "file.not_json", {"path": path, "reason": error.msg, "line": error.lineno, "column": error.colno}
        )
        raise with_problem(json.JSONDecodeError(found.text(), error.doc, error.pos), found) from error
    return _validate(data, path)


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
    seen: set[str] = set()
    for position, symbol in enumerate(alphabet):
        if not isinstance(symbol, str) or len(symbol) != 1:
            raise problem(ValueError, "file.symbol", path=path, position=position, found=symbol)
        if symbol in seen:
            raise problem(ValueError, "file.duplicate", path=path, position=position, symbol=symbol)
        seen.add(symbol)

    merges = data["merges"]
    if not isinstance(merges, list):
        raise problem(ValueError, "file.not_list", path=path, key="merges", found=type(merges).__name__)
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
    temporary: str | None = None
    try:
        descriptor, temporary = tempfile.mkstemp(dir=destination.parent, prefix=f".{destination.name}.", suffix=".tmp")
        # mkstemp creates the file private (0600); a tokenizer file is ordinary data.
        os.fchmod(descriptor, 0o644)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
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
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
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
