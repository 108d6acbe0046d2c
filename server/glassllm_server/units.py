"""The units a document is counted in (:class:`~glassllm_server.counted.CountedUnit`):
the whole document, one per line of a JSONL dataset of ``{"text": …}`` records, or a chat
document's conversations as the model receives them (its prompt, the template's tokens
included: :class:`~glassllm_server.chat_units.ChatUnit`).

:func:`counted_units` (with the document's own tokenizer) and :func:`units_with` (with
another) decide, by the document's kind. A chat
document gives its own units, encoded by :class:`~glassllm_server.chat_documents.ChatDocuments`
(off the event loop, so the caller hands them in): they count with the tokenizer in use,
whose chat template they went through. A plain
document counted with its own tokenizer is read from its tokens (kept up to date while
typing); counted with another tokenizer (a budget may name one, :func:`units_with`), from
that tokenizer's per-line counts, counted a slice at a time and carried through edits
(:class:`CountedDocument`). A record's text (what a model receives is the decoded string,
not its JSON source) is encoded here and each token's code-point offsets are mapped back
to the document through the record's escapes (:mod:`glassllm_server.json_strings`).
No pygls here.
"""

from __future__ import annotations

import asyncio
import time
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Literal
from weakref import WeakKeyDictionary

from glassllm.file_tokens import counting_kind
from glassllm.pipeline.any_tokenizer import AnyTokenizer
from glassllm_server.compare import ComparedTokenizer, DocumentCounts
from glassllm_server.counted import CountedUnit
from glassllm_server.document import ReadOnlyDocument
from glassllm_server.json_strings import JsonString, JsonTextError, parse_json
from glassllm_server.positions import Point

__all__ = [
    "CountedDocument",
    "DocumentUnit",
    "TextUnit",
    "count_document",
    "counted_units",
    "record_unit",
    "record_units",
    "units_with",
]

# Counting a document with another tokenizer (a budget's) gives the event loop back after
# this long, as the compared tokenizers' counts do, so requests meanwhile wait about that much.
_SLICE_SECONDS = 0.002

# A record line's text encoded: its tokens' starts and ends in the text, and the string's
# map to the line's columns (parsed as line 0); False for a line that is no record.
_Encoded = tuple[tuple[int, ...], tuple[int, ...], JsonString] | Literal[False]


class _Records:
    """Whose line state a dataset's encodings are, per tokenizer (see
    :meth:`ReadOnlyDocument.line_state`, which holds its owners weakly)."""


_owners: WeakKeyDictionary[AnyTokenizer, _Records] = WeakKeyDictionary()


class _RecordLines:
    """Each line's record encoded with one tokenizer (None: not yet), carried through
    edits: an edit encodes again the lines it changed, not the dataset."""

    def __init__(self, line_count: int) -> None:
        self.encoded: list[_Encoded | None] = [None] * line_count

    def replaced(self, first: int, old_lines: list[str], new_lines: list[str], in_place: bool) -> _RecordLines:
        stop = first + len(old_lines)
        # The lines handed over around an edit that it left as they were keep theirs.
        kept = dict(zip(old_lines, self.encoded[first:stop], strict=True))
        following = _RecordLines(0)
        following.encoded = self.encoded if in_place else self.encoded.copy()
        following.encoded[first:stop] = [kept.get(line) for line in new_lines]
        return following


class DocumentUnit:
    """The whole document, counted with its own tokens."""

    template_count = 0
    first_line = 0

    def __init__(self, document: ReadOnlyDocument) -> None:
        self.document = document
        self.count = document.stats().tokens

    def token_range(self, index: int) -> tuple[Point, Point]:
        document = self.document
        # The last line whose tokens before it are at most ``index``: the token starts there.
        line = bisect_right(range(len(document.lines)), index, key=document.tokens_before) - 1
        tokens = document.line_tokens(line)
        number = index - document.tokens_before(line)
        span = tokens.spans()[number - tokens.first]
        if tokens.crosses_lines and span.end == len(document.lines[line]):
            (first_line, first_column), (last_line, last_column) = tokens.extent(number)
            return Point(line + first_line, first_column), Point(line + last_line, last_column)
        return Point(line, span.start), Point(line, span.end)


class CountedDocument:
    """The whole document counted with another tokenizer than its own, from that
    tokenizer's per-line counts (:class:`~glassllm_server.compare.DocumentCounts`, carried
    through edits: an edit costs the edited lines' blocks); a token's place is found by
    tokenizing only the block that holds it."""

    template_count = 0
    first_line = 0

    def __init__(self, document: ReadOnlyDocument, tokenizer: ComparedTokenizer, counts: DocumentCounts) -> None:
        self.document, self.tokenizer, self.counts = document, tokenizer, counts
        self.count = counts.totals(tokenizer.name).tokens

    def token_range(self, index: int) -> tuple[Point, Point]:
        lines = self.document.lines
        line, before = self.counts.line_of_token(index)
        first, stop = self.tokenizer.block_of(lines, line)
        tokens = self.tokenizer.lines.block(list(lines[first:stop]), first == 0)[line - first]
        number = index - before
        span = tokens.spans()[number - tokens.first]
        if tokens.crosses_lines and span.end == len(lines[line]):
            (first_line, first_column), (last_line, last_column) = tokens.extent(number)
            return Point(line + first_line, first_column), Point(line + last_line, last_column)
        return Point(line, span.start), Point(line, span.end)


async def count_document(document: ReadOnlyDocument, tokenizer: ComparedTokenizer) -> CountedDocument:
    """``document`` counted whole with ``tokenizer``, the lines no count is kept for
    counted a slice at a time, the event loop given back in between."""
    counts = tokenizer.document(document)
    while not counts.count_pending(tokenizer, document.lines, 0):
        deadline = time.perf_counter() + _SLICE_SECONDS
        while time.perf_counter() < deadline and not counts.count_pending(tokenizer, document.lines, 1):
            pass
        await asyncio.sleep(0)
    return CountedDocument(document, tokenizer, counts)


class TextUnit:
    """A text encoded here: its tokens' code-point offsets, placed in the document by
    ``locate`` (an offset in the text to its document point)."""

    template_count = 0

    def __init__(
        self, starts: Sequence[int], ends: Sequence[int], first_line: int, locate: Callable[[int], Point]
    ) -> None:
        self.starts = starts
        self.ends = ends
        self.first_line = first_line
        self.locate = locate

    @property
    def count(self) -> int:
        return len(self.starts)

    def token_range(self, index: int) -> tuple[Point, Point]:
        return self.locate(self.starts[index]), self.locate(self.ends[index])


def counted_units(document: ReadOnlyDocument, chats: Sequence[CountedUnit] | None = None) -> list[CountedUnit]:
    """What ``document`` is counted in, with its own tokenizer.

    ``chats``: the conversations of a chat document (None for any other), which are its
    units; a dataset's line that holds no conversation but a ``{"text": …}`` record is
    counted as a record. A ``.jsonl`` document with ``{"text": …}`` records: one unit per
    record line (a line that is no such record, as while one is typed, gives none);
    otherwise the whole document, as ``glassllm tokens`` counts a file.
    """
    jsonl = counting_kind(document.uri) == "jsonl"
    own = document.tokenizer.tokenizer
    if chats:
        if not jsonl:
            return list(chats)
        lines = {unit.first_line for unit in chats}
        records = [unit for unit in record_units(document, own) if unit.first_line not in lines]
        return sorted([*chats, *records], key=lambda unit: unit.first_line)
    if jsonl:
        records = record_units(document, own)
        if records:
            return records
    return [DocumentUnit(document)]


async def units_with(document: ReadOnlyDocument, tokenizer: ComparedTokenizer) -> list[CountedUnit]:
    """What ``document`` is counted in with another tokenizer than its own (a budget may
    name one): a dataset's ``{"text": …}`` records (each line's encoding kept through
    edits), else the whole document (:func:`count_document`)."""
    if counting_kind(document.uri) == "jsonl":
        records = record_units(document, tokenizer.tokenizer)
        if records:
            return records
    return [await count_document(document, tokenizer)]


def record_units(document: ReadOnlyDocument, tokenizer: AnyTokenizer) -> list[CountedUnit]:
    """One unit per line of ``document`` that is a ``{"text": …}`` record, its text
    encoded with ``tokenizer``."""
    encodings = _record_lines(document, tokenizer)
    units = [_record_at(document, tokenizer, encodings, number) for number in range(len(document.lines))]
    return [unit for unit in units if unit is not None]


def record_unit(document: ReadOnlyDocument, tokenizer: AnyTokenizer, line: int) -> CountedUnit | None:
    """Line ``line``'s record as a unit (see :func:`record_units`); None when it is none."""
    return _record_at(document, tokenizer, _record_lines(document, tokenizer), line)


def _record_lines(document: ReadOnlyDocument, tokenizer: AnyTokenizer) -> list[_Encoded | None]:
    owner = _owners.get(tokenizer)
    if owner is None:
        owner = _owners[tokenizer] = _Records()
    return document.line_state(owner, _RecordLines).encoded


def _record_at(
    document: ReadOnlyDocument, tokenizer: AnyTokenizer, encodings: list[_Encoded | None], number: int
) -> TextUnit | None:
    encoded = encodings[number]
    if encoded is None:
        encoded = encodings[number] = _encode_record(document.lines[number], tokenizer)
    if encoded is False:
        return None
    starts, ends, string = encoded
    return TextUnit(starts, ends, number, _on_line(string, number))


def _encode_record(line: str, tokenizer: AnyTokenizer) -> _Encoded:
    """A record line's text encoded, or False when the line is no ``{"text": …}`` record."""
    if not line.strip():
        return False
    try:
        parsed = parse_json(line)
    except JsonTextError:
        return False
    string = parsed.strings.get(("text",))
    if not isinstance(parsed.value, dict) or string is None:
        return False
    spans = tokenizer.encode_spans(string.text)
    return tuple(span.start for span in spans), tuple(span.end for span in spans), string


def _on_line(string: JsonString, line: int) -> Callable[[int], Point]:
    """``string``'s map (parsed as line 0) for the document's line ``line``."""

    def locate(offset: int) -> Point:
        return Point(line, string.point(offset).column)

    return locate
