"""Counts files: the chunk counts of a corpus, written by one job and learned from by another.

Counting is the part of training that grows with the corpus; learning merges only needs
the counts. So a corpus can be counted anywhere (``glassllm count``, a Dask cluster, a
Spark or Ray job), the counts summed, and the tokenizer learned once, exactly as if it
had been trained on the text. That holds only if every counter cut the text as the
encoder will, so each file is stamped with the glassllm version and a digest of the
normalization and the chunk rule, and a file stamped otherwise is refused.

The format (version 1), UTF-8 text, one JSON value per line:

    {"glassllm_counts": 1, "glassllm": "0.1.0", "rule": "sha256:…"}
    ["▁the", 48213]
    ["\\n", 30525]
    …

The first line is the stamp (:func:`counts_stamp` gives it); each line after it holds a
chunk (a non-empty string) and how often it occurs (a positive integer). A chunk may
appear on several lines, even in one file: its counts are summed. A name ending in
``.gz``, ``.bz2``, ``.xz`` or ``.zst`` is compressed with that format.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tempfile
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

from glassllm import __version__
from glassllm.pipeline.chunks import CHUNK_FLAGS, CHUNK_RULE, SPACE
from glassllm.shown.problems import problem
from glassllm.training.corpus import compressing_writer, open_compressed, reading

__all__ = ["COUNTS_FORMAT", "counts_stamp", "read_counts", "sum_counts", "write_counts"]

COUNTS_FORMAT = 1


@cache
def rule_digest() -> str:
    """A digest of everything that decides which chunks a text has: NFC under this
    Python's Unicode database (which also decides what ``\\w`` and ``\\d`` match), the
    space marker and the chunk pattern."""
    written = re.compile(CHUNK_RULE, CHUNK_FLAGS)  # the rule as written, not its faster form
    rule = {
        "normalization": "NFC",
        "unicode": unicodedata.unidata_version,
        "space": SPACE,
        "pattern": written.pattern,
        "flags": int(written.flags),
    }
    return "sha256:" + hashlib.sha256(json.dumps(rule, sort_keys=True).encode("utf-8")).hexdigest()


def counts_stamp() -> dict[str, int | str]:
    """The first line of a counts file this glassllm writes and accepts."""
    return {"glassllm_counts": COUNTS_FORMAT, "glassllm": __version__, "rule": rule_digest()}


def write_counts(counts: Mapping[str, int], path: str | Path) -> None:
    """Write ``counts`` to ``path`` as a counts file, most frequent chunk first (ties in
    code point order, so the same counts always make the same bytes). The file is
    written beside ``path`` and renamed over it, so a reader never sees half of it."""
    path = Path(path)
    with reading(path, "counts file", "file.unwritable"):
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(descriptor, "wb") as raw:
                out = io.TextIOWrapper(compressing_writer(raw, path.name), encoding="utf-8", newline="\n")
                out.write(json.dumps(counts_stamp()) + "\n")
                for chunk, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
                    out.write(json.dumps([chunk, count], ensure_ascii=False) + "\n")
                out.close()  # finishes a compressed stream (and closes ``raw``, which is then harmless)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise


def read_counts(path: str | Path) -> Counter[str]:
    """The chunk counts in a counts file. Raises ``ValueError``, naming the file and the
    line, for a file that is not a counts file, one made by another glassllm version or
    with another chunk rule, or a line that is not a chunk and a positive count."""
    total: Counter[str] = Counter()
    _read_into(total, str(path))
    return total


def sum_counts(paths: Iterable[str | Path]) -> Counter[str]:
    """The sum of the chunk counts in several counts files (see :func:`read_counts`)."""
    total: Counter[str] = Counter()
    for path in paths:
        _read_into(total, str(path))
    return total


def _read_into(total: Counter[str], path: str) -> None:
    with reading(path, "counts file"), open_compressed(path) as raw:
        lines = io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
        try:
            _check_stamp(path, lines.readline())
            for number, line in enumerate(lines, start=2):
                try:
                    chunk, count = json.loads(line)
                except (ValueError, TypeError):
                    raise problem(ValueError, "counts.line", path=path, line=number, found=line.strip()[:80]) from None
                if not isinstance(chunk, str) or not chunk:
                    raise problem(ValueError, "counts.chunk", path=path, line=number, chunk=chunk)
                if not isinstance(count, int) or isinstance(count, bool) or count < 1:
                    raise problem(ValueError, "counts.count", path=path, line=number, chunk=chunk, count=count)
                total[chunk] += count
        except UnicodeDecodeError as error:
            raise problem(ValueError, "counts.not_utf8", path=path, reason=error.reason) from None


def _check_stamp(path: str, first_line: str) -> None:
    try:
        stamp = json.loads(first_line)
    except ValueError:
        stamp = None
    if not isinstance(stamp, dict) or "glassllm_counts" not in stamp:
        raise problem(ValueError, "counts.not_counts", path=path)
    if stamp["glassllm_counts"] != COUNTS_FORMAT:
        raise problem(ValueError, "counts.format", path=path, found=stamp["glassllm_counts"], expected=COUNTS_FORMAT)
    if stamp.get("rule") != rule_digest():
        raise problem(ValueError, "counts.rule", path=path, found=stamp.get("rule"), expected=rule_digest())
    if stamp.get("glassllm") != __version__:
        raise problem(ValueError, "counts.version", path=path, found=stamp.get("glassllm"), expected=__version__)
