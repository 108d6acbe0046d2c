"""One line's tokens: how each token maps to the line's columns, whoever tokenized them.

:class:`AnyLineTokens` is what a document's readers (hover, hints, bands, stats,
highlight) ask of a line, and one chunk type (:class:`ChunkTokens`) and one span
(:class:`LineSpan`) are what they get, whatever the tokenizer. A line is stored in one of
two ways, each where it is cheapest:

- :class:`LineTokens`: the line's chunks, each one tuple shared by every line that holds
  it (a chunk cache's entry), and NFC's map back to the original columns. A tokenizer
  whose blocks are single lines (glassllm's own) keeps its lines so: it is the hot path
  of typing, and a document of millions of tokens holds a reference per chunk;
- a real model's line is its part of a block of lines tokenized together
  (:class:`~glassllm_server.blocks.ModelLineTokens`): a token may cross into the next line.

A long line of either is kept as its segments (:class:`SegmentedLineTokens`, one for
both), so an edit re-tokenizes the segments it touched; glassllm's own cuts a line where
nothing can join the two sides (:func:`segment_bounds`).
Everything here works in code-point columns. No pygls here.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate
from operator import itemgetter
from typing import NamedTuple

from glassllm.pipeline.chunks import SPACE

__all__ = [
    "LONG_LINE",
    "SEGMENT",
    "AnyLineTokens",
    "ChunkTokens",
    "LineSpan",
    "LineTokens",
    "RawChunk",
    "SegmentedLineTokens",
    "segment_bounds",
]


class ChunkTokens(NamedTuple):
    """One chunk as the server shows it: its text as merging saw it (glassllm's own:
    normalized, spaces as ``▁``; a real model's: after its normalization), its tokens'
    pieces and IDs, and how many of them are unknown."""

    text: str
    pieces: tuple[str, ...]
    ids: tuple[int, ...]
    unknown: int


# A chunk's tokens as lines and the chunk cache keep them: a plain tuple (text, pieces,
# ids, unknown), which the garbage collector stops tracking (it untracks a tuple of
# strings and numbers, never a NamedTuple), so its passes do not walk a document's
# chunks; ChunkTokens is the named view handed out.
RawChunk = tuple[str, tuple[str, ...], tuple[int, ...], int]
_TEXT, _IDS, _UNKNOWN = itemgetter(0), itemgetter(2), itemgetter(3)


class LineSpan(NamedTuple):
    """One token of a line: code-point columns ``[start, end)`` within the line."""

    id: int
    piece: str
    start: int
    end: int
    chunk: int  # index of its chunk within the line (-1: a chunk from the line above)
    piece_index: int  # index of the token within its chunk


class AnyLineTokens(ABC):
    """A line's tokens, however they are stored: everything a document's readers ask of
    a line. The defaults are those of a line no token crosses."""

    __slots__ = ()

    tokens: int  # how many tokens start on the line
    chunk_count: int  # how many chunks start on the line
    unknown: int
    # Map from the normalized line's columns to the line's (None: the same).
    origin: list[int] | None
    # The number of the line's first token: -1 when it is the part of one carried in
    # from the line above.
    first = 0
    continued = False  # whether the line starts in a chunk from the line above
    crosses_lines = False  # whether a token may hold the end of the line and the start of the next
    leading_empty = 0  # tokens at the line's start that hold no character (SentencePiece's dummy prefix)

    @abstractmethod
    def chunk(self, index: int) -> ChunkTokens:
        """The line's chunk number ``index`` (``-1``: the one carried in from above)."""

    @abstractmethod
    def spans(self) -> list[LineSpan]:
        """Every token of the line with its columns, in order (first the part of one
        carried in from above, if any)."""

    @abstractmethod
    def window(self, low: int, high: int) -> tuple[int, list[LineSpan]]:
        """The tokens around columns ``low..high`` (at least every token that overlaps
        them, and the one before ``low``), and the number in the line of the first."""

    @abstractmethod
    def chunk_starts(self) -> Sequence[int]:
        """0, where each later chunk starts, then the line's length: normalized offsets,
        which are the line's columns when :attr:`origin` is None."""

    def extent(self, number: int) -> tuple[tuple[int, int], tuple[int, int]]:
        """Where the line's token number ``number`` starts and ends, as (lines below
        this one, column): the whole token, across lines."""
        span = self.spans()[number - self.first]
        return (0, span.start), (0, span.end)

    def occurrences(self, token_id: int) -> Iterator[tuple[int, int]]:
        """Columns of each token ``token_id`` in the line."""
        return ((span.start, span.end) for span in self.spans() if span.id == token_id)


class LineTokens(AnyLineTokens):
    """The chunks of one line (its ending included) and how its tokens map to columns."""

    __slots__ = ("_chunk_starts", "_token_starts", "chunk_count", "chunks", "origin", "tokens", "unknown")

    def __init__(self, chunks: tuple[RawChunk, ...], origin: list[int] | None) -> None:
        self.chunks = chunks
        # NFC boundary map from normalized to original columns; None when the line is NFC.
        self.origin = origin
        self.chunk_count = len(chunks)
        self.tokens = sum(map(len, map(_IDS, chunks)))
        self.unknown = sum(map(_UNKNOWN, chunks))
        # Tuples, not lists: the collector stops tracking them too.
        self._chunk_starts: tuple[int, ...] | None = None
        self._token_starts: tuple[int, ...] | None = None

    def chunk(self, index: int) -> ChunkTokens:
        """The line's chunk number ``index``."""
        return ChunkTokens._make(self.chunks[index])

    def occurrences(self, token_id: int) -> Iterator[tuple[int, int]]:
        """Columns of each token ``token_id`` in the line, skipping chunks without it
        (cheaper than building every span of a long line)."""
        origin = self.origin
        position = 0
        for text, pieces, ids, _ in self.chunks:
            if token_id not in ids:
                position += len(text)
                continue
            for piece, piece_id in zip(pieces, ids, strict=False):
                end = position + len(piece)
                if piece_id == token_id:
                    yield (position, end) if origin is None else (origin[position], origin[end])
                position = end

    def spans(self) -> list[LineSpan]:
        return self._spans(0, self.chunk_count)

    def window(self, low: int, high: int) -> tuple[int, list[LineSpan]]:
        # The chunks around the columns: costs the window's tokens, not the line's.
        starts = self.chunk_starts()
        origin = self.origin
        if origin is not None:
            low, high = bisect_right(origin, low) - 1, bisect_left(origin, high)
        first = max(bisect_right(starts, low) - 2, 0)
        stop = min(bisect_left(starts, high) + 1, self.chunk_count)
        if self._token_starts is None:
            self._token_starts = tuple(accumulate(map(len, map(_IDS, self.chunks)), initial=0))
        return self._token_starts[first], self._spans(first, stop)

    def chunk_starts(self) -> tuple[int, ...]:
        if self._chunk_starts is None:
            self._chunk_starts = tuple(accumulate(map(len, map(_TEXT, self.chunks)), initial=0))
        return self._chunk_starts

    def _spans(self, first: int, stop: int) -> list[LineSpan]:
        spans: list[LineSpan] = []
        append = spans.append
        origin = self.origin
        position = self.chunk_starts()[first] if first else 0
        for chunk_index in range(first, stop):
            _, pieces, ids, _ = self.chunks[chunk_index]
            for piece_index, (token_id, piece) in enumerate(zip(ids, pieces, strict=False)):
                end = position + len(piece)
                if origin is None:
                    append(LineSpan(token_id, piece, position, end, chunk_index, piece_index))
                else:
                    append(LineSpan(token_id, piece, origin[position], origin[end], chunk_index, piece_index))
                position = end
        return spans


class SegmentedLineTokens(AnyLineTokens):
    """The tokens of a long line, kept as its segments': an edit re-tokenizes only the
    segments around it, and a lookup by column costs a segment, not the line. No token
    crosses a cut, so the line's tokens are the parts' in order, columns shifted by where
    each part starts, chunks and tokens numbered on; only the first part can hold a token
    carried in from the line above."""

    __slots__ = ("_chunk_bases", "_columns", "_origin", "_token_bases", "chunk_count", "parts", "tokens", "unknown")

    def __init__(self, parts: Sequence[tuple[str, AnyLineTokens]]) -> None:
        self.parts = tuple(parts)  # (segment's text, its tokens), in order
        self._columns = list(accumulate((len(text) for text, _ in self.parts), initial=0))
        self._chunk_bases = list(accumulate((tokens.chunk_count for _, tokens in self.parts), initial=0))
        self._token_bases = list(accumulate((tokens.tokens for _, tokens in self.parts), initial=0))
        self.chunk_count = self._chunk_bases[-1]
        self.tokens = self._token_bases[-1]
        self.unknown = sum(tokens.unknown for _, tokens in self.parts)
        self._origin: list[int] | None = None

    @property
    def _head(self) -> AnyLineTokens:
        return self.parts[0][1]

    @property  # type: ignore[override]
    def first(self) -> int:
        return self._head.first

    @property  # type: ignore[override]
    def continued(self) -> bool:
        return self._head.continued

    @property  # type: ignore[override]
    def crosses_lines(self) -> bool:
        return self._head.crosses_lines

    @property  # type: ignore[override]
    def leading_empty(self) -> int:
        return self._head.leading_empty

    @property  # type: ignore[override]
    def origin(self) -> list[int] | None:
        """The parts' NFC maps joined (made on demand, once)."""
        if self._origin is None and any(tokens.origin is not None for _, tokens in self.parts):
            origin = [0]
            for (_, tokens), offset in zip(self.parts, self._columns, strict=False):
                part = tokens.origin if tokens.origin is not None else range(tokens.chunk_starts()[-1] + 1)
                origin.extend(offset + column for column in part[1:])
            self._origin = origin
        return self._origin

    def chunk(self, index: int) -> ChunkTokens:
        if index < 0:
            return self._head.chunk(index)
        part = bisect_right(self._chunk_bases, index) - 1
        return self.parts[part][1].chunk(index - self._chunk_bases[part])

    def extent(self, number: int) -> tuple[tuple[int, int], tuple[int, int]]:
        part = max(bisect_right(self._token_bases, number) - 1, 0)
        (first_line, first_column), (last_line, last_column) = self.parts[part][1].extent(
            number - self._token_bases[part]
        )
        # Columns on this line are the part's; on the lines above or below, their own.
        shift = self._columns[part]
        return (
            (first_line, first_column + shift if first_line == 0 else first_column),
            (last_line, last_column + shift if last_line == 0 else last_column),
        )

    def occurrences(self, token_id: int) -> Iterator[tuple[int, int]]:
        for (_, tokens), shift in zip(self.parts, self._columns, strict=False):
            for start, end in tokens.occurrences(token_id):
                yield start + shift, end + shift

    def spans(self) -> list[LineSpan]:
        return self.window(0, self._columns[-1])[1]

    def window(self, low: int, high: int) -> tuple[int, list[LineSpan]]:
        columns = self._columns
        # From the segment before when ``low`` starts one: the window must hold the
        # token before ``low`` too (a boundary hint at ``low`` needs it).
        first = max(bisect_left(columns, low) - 1, 0)
        stop = max(min(bisect_left(columns, high) + 1, len(self.parts)), first + 1)
        spans: list[LineSpan] = []
        start_token = 0
        for part in range(first, stop):
            text, tokens = self.parts[part]
            shift, chunk_base = columns[part], self._chunk_bases[part]
            # Whole segments after the first, so the spans stay contiguous.
            part_low = max(low - shift, 0) if part == first else 0
            part_high = min(high - shift, len(text)) if part == stop - 1 else len(text)
            number, found = tokens.window(part_low, part_high)
            if part == first:
                start_token = self._token_bases[part] + number
            if not shift and not chunk_base:
                spans += found
                continue
            spans.extend(
                LineSpan(
                    span.id, span.piece, span.start + shift, span.end + shift, span.chunk + chunk_base, span.piece_index
                )
                for span in found
            )
        return start_token, spans

    def chunk_starts(self) -> list[int]:
        # Shifted by each part's normalized length: the line's normalized offsets.
        starts = [0]
        shift = 0
        for _, tokens in self.parts:
            part = tokens.chunk_starts()
            starts.extend(column + shift for column in part[:-1] if column + shift > 0)
            shift += part[-1]
        starts.append(shift)
        return starts


# Lines longer than this are tokenized in segments of about SEGMENT characters, cut where
# neither NFC nor the chunk rule can join the two sides: before an ASCII space that
# follows a character other than a space or ▁. The chunk rule never takes a ▁ after the
# first character of a chunk except in a run of ▁ (rule 5), so a chunk ends there and
# the next starts fresh (the rule looks only ahead); NFC never composes a space with
# what precedes it, and a space is a starter, so NFC cannot reorder across it either.
LONG_LINE = 4096
SEGMENT = 1024
_CUT = re.compile(f"[^ {SPACE}] ")


def segment_bounds(text: str, start: int = 0, stop: int | None = None) -> list[int]:
    """Where the segments of ``text[start:stop]`` begin, then ``stop``: segments of about
    :data:`SEGMENT` characters, or the one region whole where the text has no safe cut."""
    stop = len(text) if stop is None else stop
    bounds = [start]
    position = start + SEGMENT
    while position < stop - SEGMENT // 4:
        found = _CUT.search(text, position - 1, stop)
        if found is None:
            break
        bounds.append(found.start() + 1)
        position = found.start() + 1 + SEGMENT
    bounds.append(stop)
    return bounds
