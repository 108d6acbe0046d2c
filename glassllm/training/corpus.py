"""The corpora people have: where training text comes from, cut into parts to count.

A corpus is named by paths: files, folders (read recursively, hidden files left out) and
glob patterns, local or as ``fsspec`` URLs (``s3://bucket/data/*.parquet``). Each file
is one of:

- plain UTF-8 text, a text of its own (no chunk spans two files);
- the same compressed with gzip, bzip2, xz or Zstandard (``.gz``, ``.bz2``, ``.xz``,
  ``.zst``);
- JSON Lines (``.jsonl``, ``.ndjson``, also compressed) or Parquet (``.parquet``), the
  shape of most datasets on disk: each record's ``field`` is a text of its own.

A file is counted in :class:`Part` s so that a large one keeps every process busy:
uncompressed text and JSON Lines in byte ranges that end after a line break (chunks
never cross one, so the parts' counts sum to the file's), Parquet in row groups;
a compressed stream cannot be entered in the middle, so it is one part. Reading a part
yields blocks of text of about a megabyte, never a whole file. Records are joined into
a block with line breaks, whose chunks are then taken off again (a line break never
composes under NFC nor joins a chunk, so that is exact).

Nothing is skipped silently: text that is not UTF-8, a line that is not JSON, a record
without the field or with a field that is not text raises ``ValueError`` naming the
file and the line (or row).
"""

from __future__ import annotations

import bz2
import errno
import glob
import gzip
import io
import json
import lzma
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, BinaryIO

from glassllm.shown.problems import MESSAGES, Problem, os_problem, problem, with_problem
from glassllm.training.optional import optional

__all__ = ["Part", "corpus_files", "corpus_parts", "open_compressed", "read_part", "reading"]

COMPRESSIONS = (".gz", ".bz2", ".xz", ".zst")
JSON_LINES = (".jsonl", ".ndjson")
PARQUET = (".parquet",)

# Blocks of this many bytes are read, decoded and counted at a time.
BLOCK = 1 << 20


@dataclass(frozen=True)
class Part:
    """A piece of one corpus file to count on its own: bytes ``[start, end)`` of a text
    or JSON Lines file, the row groups ``[start, end)`` of a Parquet file, or a whole
    compressed file. ``size`` is what the part weighs in progress, in bytes of the file."""

    path: str
    kind: str  # "text", "jsonl" or "parquet"
    start: int
    end: int
    size: int
    field: str | None = None
    compressed: bool = False


def is_url(path: str) -> bool:
    return "://" in path


def _fs(path: str) -> tuple[Any, str]:
    """The ``fsspec`` filesystem of a URL and the path inside it."""
    return optional("fsspec.core", "urls", path=path).url_to_fs(path)


@contextmanager
def reading(path: str | Path, what: str = "corpus file", code: str = "file.unreadable") -> Iterator[None]:
    """Name the file in an ``OSError`` raised while reading (or, with ``file.unwritable``,
    writing) ``what``."""
    try:
        yield
    except OSError as error:
        if error.strerror is None:  # not the system's (an fsspec backend's own): its message as it is
            raise OSError(f"{path}: {error}") from error
        raise os_problem(error, code, what, str(path)) from error


def _open_raw(path: str) -> IO[bytes]:
    if is_url(path):
        fs, inner = _fs(path)
        return fs.open(inner, "rb")
    return open(path, "rb")


def file_size(path: str) -> int:
    if is_url(path):
        fs, inner = _fs(path)
        return int(fs.size(inner))
    return os.stat(path).st_size


def compression_of(name: str) -> str | None:
    suffix = os.path.splitext(name)[1].lower()
    return suffix if suffix in COMPRESSIONS else None


def kind_of(name: str) -> str:
    base = name[: -len(compression_of(name) or "")] if compression_of(name) else name
    suffix = os.path.splitext(base)[1].lower()
    if suffix in JSON_LINES:
        return "jsonl"
    if suffix in PARQUET:
        return "parquet"
    return "text"


@contextmanager
def open_compressed(path: str) -> Iterator[BinaryIO]:
    """``path`` opened for reading bytes, decompressed as its suffix says."""
    with _open_raw(path) as raw:
        yield _decompressing(raw, path)


def _decompressing(raw: IO[bytes], name: str) -> BinaryIO:
    # Every one of these streams reads (and seeks) like a binary file.
    stream: Any = raw
    compression = compression_of(name)
    if compression == ".gz":
        stream = gzip.GzipFile(fileobj=raw, mode="rb")
    elif compression == ".bz2":
        stream = bz2.BZ2File(raw, "rb")
    elif compression == ".xz":
        stream = lzma.LZMAFile(raw, "rb")  # noqa: SIM115 (the caller closes it)
    elif compression == ".zst":
        zstandard = optional("zstandard", "zstd")
        stream = io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True))
    return stream


def compressing_writer(raw: IO[bytes], name: str) -> BinaryIO:
    """A stream that writes into ``raw`` compressed as ``name``'s suffix says (closing
    it finishes the compressed stream and leaves ``raw`` open)."""
    stream: Any = raw
    compression = compression_of(name)
    if compression == ".gz":
        stream = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0)
    elif compression == ".bz2":
        stream = bz2.BZ2File(raw, "wb")
    elif compression == ".xz":
        stream = lzma.LZMAFile(raw, "wb")  # noqa: SIM115 (the caller closes it)
    elif compression == ".zst":
        zstandard = optional("zstandard", "zstd")
        stream = zstandard.ZstdCompressor().stream_writer(raw, closefd=False)
    return stream


def corpus_files(inputs: Iterable[str | Path]) -> list[str]:
    """The files that ``inputs`` name: each file itself, each folder's files (recursively,
    sorted, hidden ones left out), each glob pattern's matches (sorted). Raises
    ``FileNotFoundError`` for a path or pattern that names nothing."""
    files: list[str] = []
    for item in map(str, inputs):
        if is_url(item):
            files.extend(_url_files(item))
        elif glob.has_magic(item) and not os.path.exists(item):  # "notes[1].txt" may be a name
            matches = sorted(path for path in glob.glob(item, recursive=True) if os.path.isfile(path))
            if not matches:
                raise _nothing_found("corpus.no_match", item)
            files.extend(matches)
        elif os.path.isdir(item):
            found = sorted(
                os.path.join(folder, name)
                for folder, subfolders, names in os.walk(item)
                for name in names
                if not name.startswith(".")
                and not any(part.startswith(".") for part in Path(os.path.relpath(folder, item)).parts)
            )
            if not found:
                raise _nothing_found("corpus.empty_folder", item)
            files.extend(found)
        else:
            with reading(item):
                os.stat(item)
            files.append(item)
    return files


def _url_files(url: str) -> list[str]:
    fs, inner = _fs(url)
    protocol = url.split("://", 1)[0]
    if glob.has_magic(inner):
        names = sorted(fs.glob(inner))
    elif fs.isdir(inner):
        names = sorted(fs.find(inner))
    elif fs.exists(inner):
        names = [inner]
    else:
        names = []
    names = [name for name in names if not os.path.basename(name).startswith(".")]
    if not names:
        raise _nothing_found("corpus.empty_url", url)
    return [name if "://" in name else f"{protocol}://{name}" for name in names]


def _nothing_found(code: str, path: str) -> FileNotFoundError:
    return with_problem(FileNotFoundError(errno.ENOENT, MESSAGES[code][0], path), Problem(code, {"path": path}))


def corpus_parts(files: Iterable[str], part_bytes: int, field: str | None = None) -> list[Part]:
    """Cut ``files`` into parts of about ``part_bytes`` each (see the module's text).
    ``field`` names the text field of JSON Lines and Parquet records, and must be given
    for them; plain text files beside them are read as text."""
    parts: list[Part] = []
    for path in files:
        kind = kind_of(path)
        if kind != "text" and field is None:
            name = "JSON Lines" if kind == "jsonl" else "Parquet"
            raise problem(ValueError, "corpus.field_needed", path=path, kind=name)
        with reading(path):
            size = file_size(path)
            if kind == "parquet":
                parts.extend(_parquet_parts(path, size, part_bytes, field))
            elif compression_of(path):
                parts.append(Part(path, kind, 0, size, size, field, compressed=True))
            else:
                parts.extend(
                    Part(path, kind, start, end, end - start, field)
                    for start, end in _line_ranges(path, size, part_bytes)
                )
    return parts


def _line_ranges(path: str, size: int, part_bytes: int) -> list[tuple[int, int]]:
    """Byte ranges of about ``part_bytes``, each ending after a ``\\n`` byte (never inside
    a UTF-8 sequence, whose bytes are all ≥ 0x80)."""
    ranges: list[tuple[int, int]] = []
    start = 0
    with _open_raw(path) as handle:
        while size - start > part_bytes:
            handle.seek(start + part_bytes)
            newline = -1
            skipped = 0
            while newline < 0:
                rest = handle.read(BLOCK)
                if not rest:
                    break
                newline = rest.find(b"\n")
                if newline < 0:
                    skipped += len(rest)
            if newline < 0:
                break
            end = start + part_bytes + skipped + newline + 1
            ranges.append((start, end))
            start = end
    ranges.append((start, size))
    return ranges


def _parquet_file(path: str) -> Any:
    return optional("pyarrow.parquet", "parquet", path=path).ParquetFile(_open_raw(path))


def _parquet_parts(path: str, size: int, part_bytes: int, field: str | None) -> list[Part]:
    """Runs of whole row groups of about ``part_bytes`` (compressed) each."""
    parquet = _parquet_file(path)
    try:
        names = parquet.schema_arrow.names
        if field not in names:
            raise problem(ValueError, "corpus.no_field", path=path, field=field, fields=", ".join(names))
        metadata = parquet.metadata
        weights = [
            sum(group.column(column).total_compressed_size for column in range(group.num_columns))
            for group in map(metadata.row_group, range(metadata.num_row_groups))
        ]
    finally:
        parquet.close()
    parts: list[Part] = []
    first, weight = 0, 0
    for index, group_weight in enumerate(weights):
        weight += group_weight
        if weight >= part_bytes or index == len(weights) - 1:
            parts.append(Part(path, "parquet", first, index + 1, weight, field))
            first, weight = index + 1, 0
    if not parts:
        return [Part(path, "parquet", 0, 0, size, field)]
    # The footer and headers weigh too: the last part carries them, so the parts add up.
    last = parts[-1]
    parts[-1] = Part(path, "parquet", last.start, last.end, size - sum(part.size for part in parts[:-1]), field)
    return parts


# What a block holds: text to count, and how many line breaks were put between records
# (to take off the count of "\n" again).
Block = tuple[str, int]


def read_part(part: Part, progress: Callable[[int], None] | None = None) -> Iterator[Block]:
    """The text of ``part`` in blocks. ``progress(n)`` is told of each ``n`` bytes of the
    file read."""
    if part.kind == "parquet":
        yield from _parquet_blocks(part, progress)
    elif part.kind == "jsonl":
        for lines, first_line in _line_blocks(part, progress):
            yield _records(part, lines, first_line)
    else:
        for lines, first_line in _line_blocks(part, progress):
            try:
                yield lines.decode("utf-8"), 0
            except UnicodeDecodeError as error:
                line = first_line() + lines.count(b"\n", 0, error.start)
                raise problem(ValueError, "corpus.not_utf8", path=part.path, line=line, reason=error.reason) from None


def _line_blocks(part: Part, progress: Callable[[int], None] | None) -> Iterator[tuple[bytes, Callable[[], int]]]:
    """Blocks of whole lines of ``part`` (bytes), each with a function that gives the
    number of its first line in the file (found again only when an error needs it)."""
    lines_before = 0
    with _open_raw(part.path) as raw:
        stream = _decompressing(raw, part.path)
        if not part.compressed:
            stream.seek(part.start)
        remaining = part.end - part.start
        reported = 0
        while True:
            wanted = BLOCK if part.compressed else min(BLOCK, remaining)
            block = stream.read(wanted)
            if not block:
                break
            if not block.endswith(b"\n"):
                rest = stream.readline()
                block += rest if part.compressed else rest[: remaining - len(block)]
            remaining -= len(block)

            def first_line(before: int = lines_before) -> int:
                return 1 + before + (0 if part.compressed else _lines_before(part.path, part.start))

            yield block, first_line
            lines_before += block.count(b"\n")
            if progress is not None:
                done = raw.tell() - part.start if not part.compressed else raw.tell()
                progress(done - reported)
                reported = done
            if not part.compressed and remaining <= 0:
                break
        if progress is not None and part.size > reported:
            progress(part.size - reported)


def _lines_before(path: str, offset: int) -> int:
    counted = 0
    with _open_raw(path) as handle:
        while offset > 0:
            block = handle.read(min(BLOCK, offset))
            if not block:
                break
            counted += block.count(b"\n")
            offset -= len(block)
    return counted


def _records(part: Part, lines: bytes, first_line: Callable[[], int]) -> Block:
    texts: list[str] = []
    for index, line in enumerate(lines.split(b"\n")):
        if not line.strip():
            continue
        text = _record_text(line, part.field)
        if isinstance(text, tuple):
            code, fields = text
            raise problem(ValueError, code, path=part.path, line=first_line() + index, **fields)
        texts.append(text)
    return "\n".join(texts), max(len(texts) - 1, 0)


def _record_text(line: bytes, field: str | None) -> str | tuple[str, dict[str, Any]]:
    """The text in ``field`` of the JSON record ``line``, or what is wrong with the
    record: a problem's code and fields, to which the caller adds the file and line."""
    try:
        record = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as error:
        return "corpus.not_utf8", {"reason": error.reason}
    except ValueError as error:
        return "corpus.not_json", {"reason": str(error)}
    if not isinstance(record, dict) or field not in record:
        return "corpus.record_field", {"field": field}
    text = record[field]
    if not isinstance(text, str):
        return "corpus.not_text", {"field": field, "found": type(text).__name__}
    return text


def _parquet_blocks(part: Part, progress: Callable[[int], None] | None) -> Iterator[Block]:
    pa = optional("pyarrow", "parquet", path=part.path)
    parquet = _parquet_file(part.path)
    try:
        metadata = parquet.metadata
        row = sum(metadata.row_group(group).num_rows for group in range(part.start))
        rows = sum(metadata.row_group(group).num_rows for group in range(part.start, part.end))
        column_type = parquet.schema_arrow.field(part.field).type
        if not (pa.types.is_string(column_type) or pa.types.is_large_string(column_type)):
            raise problem(
                ValueError, "corpus.column_not_text", path=part.path, field=part.field, found=str(column_type)
            )
        reported = 0
        for batch in parquet.iter_batches(
            batch_size=4096, row_groups=range(part.start, part.end), columns=[part.field], use_threads=False
        ):
            column = batch.column(0)
            if column.null_count:
                missing = column.is_null().index(True).as_py()
                raise problem(ValueError, "corpus.null", path=part.path, row=row + missing, field=part.field)
            try:
                column.validate(full=True)
                texts = column.to_pylist()
            except (pa.ArrowInvalid, UnicodeDecodeError):
                found = row + _first_invalid(column)
                raise problem(ValueError, "corpus.row_not_utf8", path=part.path, row=found) from None
            yield "\n".join(texts), max(len(texts) - 1, 0)
            row += len(texts)
            if progress is not None and rows:
                done = part.size * row // rows if row < rows else part.size
                progress(done - reported)
                reported = done
        if progress is not None and part.size > reported:
            progress(part.size - reported)
    finally:
        parquet.close()


def _first_invalid(column: Any) -> int:
    import pyarrow as pa

    for index, value in enumerate(column.cast(pa.binary()).to_pylist()):
        try:
            value.decode("utf-8")
        except UnicodeDecodeError:
            return index
    return 0
