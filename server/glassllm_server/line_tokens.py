"""One line's tokens, kept as its chunks: how each token maps to the line's columns.

glassllm's own chunks never cross a line break, so a line (with its ending) is tokenized
alone: :class:`LineTokens` holds its chunks and their tokens, and NFC's map back to the
original columns; a long line is kept as its segments (:class:`SegmentedLineTokens`), cut
where nothing can join the two sides (:func:`segment_bounds`), so an edit re-tokenizes
one. A real model's line is its part of a block (:class:`~glassllm_server.blocks.ModelLineTokens`);
:class:`AnyLineTokens` is what both offer.
Everything here works in code-point columns. No pygls here.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate, chain
from operator import itemgetter
from typing import NamedTuple, Protocol

from glassllm.pipeline.chunks import SPACE
from glassllm_server.blocks import LineSpan, ModelChunk

__all__ = [
    "LONG_LINE",
    "SEGMENT",
    "AnyLineTokens",
    "ChunkTokens",
    "LineTokens",
    "RawChunk",
    "SegmentedLineTokens",
    "segment_bounds",
]


class ChunkTokens(NamedTuple):
    """One chunk (normalized, spaces as ``▁``) and the tokens BPE makes of it."""

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


class LineTokens:
    """The chunks of one line (its ending included) and how its tokens map to columns."""

    __slots__ = ("_chunk_starts", "_token_starts", "chunk_count", "chunks", "origin", "tokens", "unknown")

    # glassllm's own lines carry nothing in from the line above, no token crosses their
    # end, and every token that holds no character ends one (see blocks.ModelLineTokens).
    first = 0
    continued = False
    crosses_lines = False
    leading_empty = 0

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

    def extent(self, number: int) -> tuple[tuple[int, int], tuple[int, int]]:
        """Where the line's token number ``number`` starts and ends, as (lines below
        this one, column): always this line's."""
        span = self.spans()[number]
        return (0, span.start), (0, span.end)

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
        """Every token of the line with its columns, in order, covering the line."""
        return self._spans(0, self.chunk_count)

    def window(self, low: int, high: int) -> tuple[int, list[LineSpan]]:
        """The tokens of the chunks around columns ``low..high`` (at least every token
        that overlaps them), and the index in the line of the first one.

        Costs the window's tokens, not the line's: a line can be a megabyte long.
        """
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
        """Normalized offset of each chunk's start, then the normalized line's length."""
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


class SegmentedLineTokens(LineTokens):
    """The tokens of a long line, kept as its segments' (see :func:`segment_bounds`):
    an edit re-tokenizes only the segments around it, and a lookup by column costs a
    segment, not the line. The whole line's chunks and NFC map are joined on demand."""

    __slots__ = ("_chunks", "_origin", "_part_chunks", "_part_columns", "_part_tokens", "parts")

    def __init__(self, parts: tuple[tuple[str, LineTokens], ...]) -> None:
        self.parts = parts  # (segment text, its tokens), in order
        self._part_columns = list(accumulate((len(text) for text, _ in parts), initial=0))
        self._part_chunks = list(accumulate((tokens.chunk_count for _, tokens in parts), initial=0))
        self._part_tokens = list(accumulate((tokens.tokens for _, tokens in parts), initial=0))
        self.chunk_count = self._part_chunks[-1]
        self.tokens = self._part_tokens[-1]
        self.unknown = sum(tokens.unknown for _, tokens in parts)
        self._chunks: tuple[RawChunk, ...] | None = None
        self._origin: list[int] | None = None
        self._chunk_starts = self._token_starts = None

    @property  # type: ignore[override]
    def chunks(self) -> tuple[RawChunk, ...]:
        if self._chunks is None:
            self._chunks = tuple(chain.from_iterable(tokens.chunks for _, tokens in self.parts))
        return self._chunks

    @property  # type: ignore[override]
    def origin(self) -> list[int] | None:
        if self._origin is None and any(tokens.origin is not None for _, tokens in self.parts):
            origin = [0]
            for (_text, tokens), offset in zip(self.parts, self._part_columns, strict=False):
                length = sum(map(len, map(_TEXT, tokens.chunks)))
                part = tokens.origin if tokens.origin is not None else range(length + 1)
                origin.extend(offset + column for column in part[1:])
            self._origin = origin
        return self._origin

    def chunk(self, index: int) -> ChunkTokens:
        part = bisect_right(self._part_chunks, index) - 1
        return ChunkTokens._make(self.parts[part][1].chunks[index - self._part_chunks[part]])

    def spans(self) -> list[LineSpan]:
        return self.window(0, self._part_columns[-1])[1]

    def window(self, low: int, high: int) -> tuple[int, list[LineSpan]]:
        columns = self._part_columns
        # From the segment before when ``low`` starts one: the window must hold the
        # token before ``low`` too (a boundary hint at ``low`` needs it).
        first = max(bisect_left(columns, low) - 1, 0)
        stop = max(min(bisect_left(columns, high) + 1, len(self.parts)), first + 1)
        spans: list[LineSpan] = []
        start_token = 0
        for part in range(first, stop):
            text, tokens = self.parts[part]
            offset, chunk_offset = columns[part], self._part_chunks[part]
            # Whole segments after the first, so the spans stay contiguous.
            part_low = max(low - offset, 0) if part == first else 0
            part_high = min(high - offset, len(text)) if part == stop - 1 else len(text)
            number, found = tokens.window(part_low, part_high)
            if part == first:
                start_token = self._part_tokens[part] + number
            spans.extend(
                LineSpan(
                    span.id,
                    span.piece,
                    span.start + offset,
                    span.end + offset,
                    span.chunk + chunk_offset,
                    span.piece_index,
                )
                for span in found
            )
        return start_token, spans


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


class AnyLineTokens(Protocol):
    """A line's tokens, whoever tokenized them: glassllm's own (:class:`LineTokens`), or
    the line's part of a real model's block
    (:class:`~glassllm_server.blocks.ModelLineTokens`). Everything a document's readers
    (hover, hints, bands, stats, highlight) ask of a line."""

    @property
    def tokens(self) -> int:
        """How many tokens start on the line."""
        ...

    @property
    def chunk_count(self) -> int:
        """How many chunks start on the line."""
        ...

    @property
    def unknown(self) -> int: ...

    @property
    def first(self) -> int:
        """The number of the line's first token: ``-1`` when it is the part of one
        carried in from the line above."""
        ...

    @property
    def continued(self) -> bool:
        """Whether the line starts in a chunk from the line above."""
        ...

    @property
    def crosses_lines(self) -> bool:
        """Whether a token may hold the end of the line and the start of the next."""
        ...

    @property
    def leading_empty(self) -> int:
        """Tokens at the line's start that hold no character (SentencePiece's dummy prefix)."""
        ...

    @property
    def origin(self) -> list[int] | None:
        """Map from the normalized line's columns to the line's (None: the same)."""
        ...

    def chunk(self, index: int) -> ChunkTokens | ModelChunk: ...

    def spans(self) -> list[LineSpan]: ...

    def window(self, low: int, high: int) -> tuple[int, list[LineSpan]]: ...

    def chunk_starts(self) -> Sequence[int]: ...

    def extent(self, number: int) -> tuple[tuple[int, int], tuple[int, int]]: ...

    def occurrences(self, token_id: int) -> Iterator[tuple[int, int]]: ...
