"""A document's tokens, kept line by line so that an edit re-tokenizes only what it touched.

glassllm's own chunks never cross a line break, so tokenizing a document line by line
(each line with its ending) gives exactly ``Tokenizer.encode_spans`` of the whole text. A
real model's tokenizer is tokenized in blocks of lines cut where the model says a cut
changes nothing, each line keeping its part (:mod:`glassllm_server.blocks`). Two caches make
that cheap: chunks repeat across a document (``▁de``, ``▁que``…) and are tokenized once
(:class:`LineTokenizer`), and each line's tokens are kept by the line's text, so an edit
re-tokenizes only the lines it changed.

Everything here works in code points: a :class:`~server.positions.Point` is a line and a
code-point column. Converting to LSP positions is :mod:`positions`' job. No pygls here.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain, count, islice, pairwise, repeat
from operator import itemgetter
from time import perf_counter
from typing import Any, NamedTuple, Protocol, TypeVar
from weakref import WeakKeyDictionary, WeakSet

from glassllm import Tokenizer
from glassllm.caches import LruCache
from glassllm.formats.model_tokenizer import CUT_WITHIN_CONTEXT, ModelTokenizer
from glassllm.pipeline.any_tokenizer import AnyTokenizer
from glassllm.pipeline.bpe import apply_merges
from glassllm.pipeline.chunks import SPACE, chunk_text
from glassllm.pipeline.specials import SPECIALS, UNK_ID
from glassllm_server.blocks import (
    BLOCK_SEGMENT,
    LONG_BLOCK,
    LineSpan,
    ModelChunk,
    ModelLineTokens,
    block_segments,
    segment_cuts,
    tokenize_block,
    tokenize_long_block,
)
from glassllm_server.gaps import Gaps
from glassllm_server.positions import LineIndex, Point, content_length, split_lines

__all__ = [
    "ChunkTokens",
    "Document",
    "DocumentToken",
    "LineSpan",
    "LineState",
    "LineTokenizer",
    "LineTokens",
    "Stats",
]

# The caches' bounds (docs/server.md, "Memory", says how they were measured): chunks
# the 7 MB corpus reuses stay (about 300 bytes each, 10 MB at most), and lines by their
# characters (about 3.5 bytes a character with their tokens, 4 MB at most). A document
# holds its own lines' tokens, so the line cache only saves work on text seen again.
CHUNK_CACHE_LIMIT = 1 << 15
LINE_CACHE_CHARACTERS = 1 << 20
# A real model's blocks by their characters, as lines are (a block holds its lines' tokens).
BLOCK_CACHE_CHARACTERS = 1 << 20
# The segments of a real model's long blocks: a line of millions keeps every segment (the
# recent half of the cache holds 4,194,304 characters), so an edit re-tokenizes one.
SEGMENT_CACHE_CHARACTERS = 1 << 23
# Where a real model can cut inside a line, by the characters around the place (see
# ModelTokenizer.can_cut_within, which reads CUT_WITHIN_CONTEXT on each side): a cut of every
# segment of 8 MB of long lines.
CUT_CACHE_LIMIT = 1 << 13
# An edit that makes this many lines or fewer has them tokenized at once (see
# _Version.replaced): a keystroke makes three, the edited line and its neighbours.
_EAGER_LINES = 8


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
_Chunk = tuple[str, tuple[str, ...], tuple[int, ...], int]
_TEXT, _IDS, _UNKNOWN = itemgetter(0), itemgetter(2), itemgetter(3)


class Stats(NamedTuple):
    """Counts for a document or a range of it."""

    tokens: int
    chunks: int
    characters: int
    unknown: int


class LineTokens:
    """The chunks of one line (its ending included) and how its tokens map to columns."""

    __slots__ = ("_chunk_starts", "_token_starts", "chunk_count", "chunks", "origin", "tokens", "unknown")

    # glassllm's own lines carry nothing in from the line above, and every token that
    # holds no character ends one (see blocks.ModelLineTokens).
    first = 0
    continued = False
    leading_empty = 0

    def __init__(self, chunks: tuple[_Chunk, ...], origin: list[int] | None) -> None:
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
        self._chunks: tuple[_Chunk, ...] | None = None
        self._origin: list[int] | None = None
        self._chunk_starts = self._token_starts = None

    @property  # type: ignore[override]
    def chunks(self) -> tuple[_Chunk, ...]:
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


class LineTokenizer:
    """A tokenizer with the chunk and line caches; shared by every open document.

    ``model`` is the tokenizer when it is a real model's (``None`` for glassllm's own):
    documents then tokenize it in blocks (:meth:`block`)."""

    def __init__(self, tokenizer: AnyTokenizer, name: str) -> None:
        self.tokenizer = tokenizer
        self.name = name
        self.unk_id = tokenizer.unk_id
        self.model = tokenizer if isinstance(tokenizer, ModelTokenizer) else None
        self._chunks: LruCache[str, _Chunk] = LruCache(CHUNK_CACHE_LIMIT)
        self._lines: LruCache[str, LineTokens] = LruCache(LINE_CACHE_CHARACTERS, len)
        self._blocks: LruCache[tuple[str, bool], tuple[ModelLineTokens, ...]] = LruCache(
            BLOCK_CACHE_CHARACTERS, _block_characters
        )
        self._segments: LruCache[tuple[str, bool], tuple[ModelLineTokens, ...]] = LruCache(
            SEGMENT_CACHE_CHARACTERS, _block_characters
        )
        self._cuts_within: LruCache[tuple[str, int], bool] = LruCache(CUT_CACHE_LIMIT)
        self._last_cuts: tuple[str, list[int]] | None = None  # the last long block's text and cuts
        # A real model's blocks longer than ``long_block`` characters are tokenized in
        # segments of about ``segment`` (see blocks.tokenize_long_block).
        self.long_block, self.segment = LONG_BLOCK, BLOCK_SEGMENT
        self._piece_ids: dict[str, int] = {}
        vocab = tokenizer.vocab if isinstance(tokenizer, Tokenizer) else []
        for index in range(len(SPECIALS), len(vocab)):
            self._piece_ids.setdefault(vocab[index], index)
        # The long line being prepared in the background: its text, segment bounds and
        # how many segments are done.
        self._preparing: tuple[str, list[int], int] | None = None
        # The same for a real model's long block: its text, segments and how many are done.
        self._preparing_block: tuple[str, list[tuple[int, list[str]]], int] | None = None

    def can_cut(self, before: str, after: str) -> bool:
        """Whether a real model's document can be tokenized apart before line ``after``
        (``before``: the line above); see :meth:`ModelTokenizer.can_cut`."""
        assert self.model is not None
        return self.model.can_cut(before, after)

    def block(self, lines: list[str], at_start: bool) -> tuple[ModelLineTokens, ...]:
        """The tokens of a block of a real model's document, one entry per line."""
        assert self.model is not None
        if sum(map(len, lines)) > self.long_block:
            return tokenize_long_block(self._segments_of(lines), len(lines), at_start, self._segment_block)
        return self._cached_block(self._blocks, lines, at_start)

    def _segments_of(self, lines: list[str]) -> list[tuple[int, list[str]]]:
        """The segments of a long block, cut from the last long block's cuts (an edit
        changed it, most often)."""
        text = "".join(lines)
        cuts = segment_cuts(self._can_cut_within, text, self.segment, self._last_cuts)
        self._last_cuts = (text, cuts)
        return block_segments(lines, cuts)

    def _can_cut_within(self, text: str, position: int) -> bool:
        # Kept by the characters the model reads around the position: a long line is
        # cut afresh after each edit, at the same places but those around the edit.
        assert self.model is not None
        low = max(position - CUT_WITHIN_CONTEXT, 0)
        key = (text[low : position + CUT_WITHIN_CONTEXT], position - low)
        found = self._cuts_within.get(key)
        if found is None:
            found = self.model.can_cut_within(text, position)
            self._cuts_within.put(key, found)
        return found

    def _segment_block(self, lines: Sequence[str], at_start: bool) -> tuple[ModelLineTokens, ...]:
        return self._cached_block(self._segments, lines, at_start)

    def _cached_block(
        self, cache: LruCache[tuple[str, bool], tuple[ModelLineTokens, ...]], lines: Sequence[str], at_start: bool
    ) -> tuple[ModelLineTokens, ...]:
        """A block's (or a long block's segment's) tokens, from ``cache`` when it holds
        the same text cut into as many lines."""
        assert self.model is not None
        key = ("".join(lines), at_start)
        cached = cache.get(key)
        if cached is None or len(cached) != len(lines):
            cached = tokenize_block(self.model, lines, at_start)
            cache.put(key, cached)
        return cached

    def chunk(self, text: str) -> ChunkTokens:
        """The tokens of one chunk (already normalized and marked)."""
        return ChunkTokens._make(self._chunk(text))

    def _chunk(self, text: str) -> _Chunk:
        cached = self._chunks.get(text)
        if cached is not None:
            return cached
        # BPE here, as Tokenizer.encode does it, rather than through encode: the library's
        # chunk cache would keep a second copy of every chunk ever typed. The pieces are
        # the vocabulary's own strings (no copy per chunk), but an unknown character's.
        own = self.tokenizer
        assert isinstance(own, Tokenizer), "chunks are glassllm's own; a real model's lines come in blocks"
        merged, _ = apply_merges(text, own.ranks)
        ids = tuple(map(self._piece_ids.get, merged, repeat(UNK_ID)))
        unknown = ids.count(UNK_ID)
        pieces = tuple(merged) if unknown else tuple(map(own.vocab.__getitem__, ids))
        entry = (text, pieces, ids, unknown)
        self._chunks.put(text, entry)
        return entry

    def line(self, text: str, replaced: Sequence[LineTokens] = ()) -> LineTokens:
        """The tokens of one line, its line ending included.

        ``replaced`` are the tokens of the lines an edit replaced by this one. A long line
        keeps the segments the edit did not touch, from the start of the first and the
        end of the last long one. A line takes the chunks it shares with them from them,
        not from the cache: a chunk typed long ago (a name, a typo) may have left it.
        """
        if len(text) > LONG_LINE:
            segmented = [tokens for tokens in replaced if isinstance(tokens, SegmentedLineTokens)]
            return self._long_line(text, (segmented[0], segmented[-1]) if segmented else None)
        cached = self._lines.get(text)
        if cached is not None:
            return cached
        entry = self._tokenize(text, replaced)
        self._lines.put(text, entry)
        return entry

    def _tokenize(self, text: str, replaced: Sequence[LineTokens] = ()) -> LineTokens:
        chunked = chunk_text(text)
        chunks = chunked.chunks
        found = list(map(self._chunks.recent.get, chunks))
        if None in found:
            chunk = self._chunk
            known = {
                entry[0]: entry
                for tokens in replaced
                if not isinstance(tokens, SegmentedLineTokens)  # a long line's are its segments'
                for entry in tokens.chunks
            }
            found = [entry or known.get(text) or chunk(text) for entry, text in zip(found, chunks, strict=False)]
        return LineTokens(tuple(found), chunked.origin)  # type: ignore[arg-type]

    def prepare(self, text: str, deadline: float) -> bool:
        """Tokenize the segments of the long line ``text`` until ``deadline``
        (a :func:`time.perf_counter` time); True when they are all cached, so that
        :meth:`line` then only joins them. Background work on a very long line can so
        give the event loop back, one segment at a time."""
        if self.model is not None:
            return True  # a real model's long blocks: see prepare_block
        if self._preparing is None or self._preparing[0] is not text:
            self._preparing = (text, segment_bounds(text), 0)
        _, bounds, done = self._preparing
        while done < len(bounds) - 1:
            if perf_counter() >= deadline:
                self._preparing = (text, bounds, done)
                return False
            self._segment(text[bounds[done] : bounds[done + 1]])
            done += 1
        self._preparing = None
        return True

    def prepare_block(self, lines: list[str], at_start: bool, deadline: float) -> bool:
        """Tokenize the segments of a real model's long block ``lines`` until
        ``deadline``; True when they are all cached (see :meth:`prepare`)."""
        text = "".join(lines)
        if self._preparing_block is None or self._preparing_block[0] != text:
            self._preparing_block = (text, self._segments_of(lines), 0)
        _, segments, done = self._preparing_block
        while done < len(segments):
            if perf_counter() >= deadline:
                self._preparing_block = (text, segments, done)
                return False
            self._segment_block(segments[done][1], at_start and done == 0)
            done += 1
        self._preparing_block = None
        return True

    def _segment(self, text: str) -> LineTokens:
        # Segments are cached like lines (a long segment, where no cut was safe, is not:
        # the cache must not keep megabytes of old text alive).
        return self.line(text) if len(text) <= LONG_LINE else self._tokenize(text)

    def _long_line(self, text: str, previous: tuple[SegmentedLineTokens, SegmentedLineTokens] | None) -> LineTokens:
        head: list[tuple[str, LineTokens]] = []
        tail: list[tuple[str, LineTokens]] = []
        if previous is not None:
            # The old segments that reach the new text unchanged, from either end, and
            # whose cuts are still safe (the characters on both sides unchanged).
            first, last = previous
            offset = 0
            for piece, tokens in first.parts[:-1]:
                if not (text.startswith(piece, offset) and text.startswith(" ", offset + len(piece))):
                    break
                head.append((piece, tokens))
                offset += len(piece)
            end = len(text)
            for piece, tokens in reversed(last.parts[(len(head) if last is first else 0) + 1 :]):
                start = end - len(piece)
                if start - 1 <= offset or not text.startswith(piece, start) or text[start - 1] in (" ", SPACE):
                    break
                tail.append((piece, tokens))
                end = start
            tail.reverse()
        start = sum(len(piece) for piece, _ in head)
        stop = len(text) - sum(len(piece) for piece, _ in tail)
        bounds = segment_bounds(text, start, stop)
        middle = [(text[a:b], self._segment(text[a:b])) for a, b in pairwise(bounds) if a < b]
        return SegmentedLineTokens((*head, *middle, *tail))


def _block_characters(key: tuple[str, bool]) -> int:
    return len(key[0])


# A line's tokens: glassllm's own, or its part of a real model's block.
AnyLineTokens = LineTokens | ModelLineTokens


@dataclass(frozen=True, slots=True)
class DocumentToken:
    """A token of a document: where it is, what it is, and the chunk it belongs to."""

    id: int
    piece: str
    line: int
    start: int  # code-point columns within the line, [start, end)
    end: int
    # Position of the token in the whole document's token sequence; None while the
    # lines above it are not all tokenized yet (a large document just opened).
    index: int | None
    chunk: ChunkTokens | ModelChunk
    chunk_index: int  # index of the chunk within its line
    piece_index: int  # index of the token within its chunk
    # Where the whole token starts and ends when it crosses a line break (a real
    # model's ".\n\n"); None when it lies within its line.
    extent: tuple[Point, Point] | None = None

    @property
    def start_point(self) -> Point:
        return Point(self.line, self.start) if self.extent is None else self.extent[0]

    @property
    def end_point(self) -> Point:
        return Point(self.line, self.end) if self.extent is None else self.extent[1]


class LineState(Protocol):
    """Per-line state kept beside a document's versions (:meth:`Document.line_state`)."""

    def replaced(self, first: int, old_lines: list[str], new_lines: list[str], in_place: bool) -> LineState:
        """The state after the lines from ``first`` on, ``old_lines``, were replaced by
        ``new_lines``: a new object, which takes the old one's lists when ``in_place``
        (nothing holds the old version any more) and copies them otherwise (the old one
        still describes it)."""
        ...


_State = TypeVar("_State", bound=LineState)


class _Version:
    """One version of a document's text and its tokens, filled in lazily.

    A document and every snapshot taken of it while it is unchanged share one version,
    so tokens computed for any of them are there for all. An edit makes a new version:
    it takes over the old one's line lists and edits them in place when nothing else
    holds the old one (no snapshot: the old version is then dropped), and copies them
    otherwise, so a snapshot keeps its text. In place, an edit costs the lines it
    changed, whatever the document's length.
    """

    __slots__ = (
        "borrowed",
        "counts",
        "cuts",
        "gaps",
        "index",
        "line_states",
        "lines",
        "prefix",
        "revision",
        "snapshots",
        "tokenizer",
        "tokens",
        "totals",
    )

    _revisions = count(1)

    def __init__(self, lines: list[str], tokenizer: LineTokenizer, borrowed: bool = False) -> None:
        self.lines = lines
        self.index = LineIndex(lines)
        self.tokenizer = tokenizer
        self.tokens: list[AnyLineTokens | None] = [None] * len(lines)
        # Each line's number of tokens (0 without tokens), and the tokens before each
        # line as far as a request needed them: a line's index in the document extends
        # the sums from where they stop, in C over ints, and a change to a line's tokens
        # cuts them there.
        self.counts = [0] * len(lines)
        self.prefix = [0]
        # A real model's: whether the document is cut into blocks before each line
        # (None: not decided yet); see blocks.py.
        self.cuts: list[bool | None] = [None] * len(lines) if tokenizer.model is not None else []
        self.gaps = Gaps.everywhere(len(lines))  # the lines without tokens
        self.totals = [0, 0, 0, 0]  # tokens, chunks, characters, unknown of tokenized lines
        # Unique per version: what caches of answers are keyed by.
        self.revision = next(self._revisions)
        # Per-line state kept by others (see Document.line_state), weakly by its owner.
        self.line_states: WeakKeyDictionary[Any, LineState] = WeakKeyDictionary()
        # The snapshots that share this version (made on the first), and whether its
        # lines and line states are another version's too (a tokenizer switch keeps
        # them): either way an edit copies them rather than edit them in place.
        self.snapshots: WeakSet[Document] | None = None
        self.borrowed = borrowed

    @property
    def shared(self) -> bool:
        """Whether anything but its document holds this version's lists."""
        return self.borrowed or bool(self.snapshots)

    def replaced(self, first: int, stop: int, new_lines: list[str]) -> _Version:
        """A new version with lines ``first..stop-1`` replaced by ``new_lines``; unless
        :attr:`shared`, it takes this version's lists, and this one must not be used again."""
        in_place = not self.shared
        old_lines, old_tokens = self.lines[first:stop], self.tokens[first:stop]
        new_count = len(new_lines)
        version = _Version.__new__(_Version)
        version.tokenizer = tokenizer = self.tokenizer
        version.lines = lines = self.lines if in_place else self.lines.copy()
        lines[first:stop] = new_lines
        version.index = LineIndex(lines)
        version.tokens = tokens = self.tokens if in_place else self.tokens.copy()
        tokens[first:stop] = [None] * new_count
        version.counts = self.counts if in_place else self.counts.copy()
        version.counts[first:stop] = [0] * new_count
        version.prefix = self.prefix if in_place else self.prefix[: first + 1]
        del version.prefix[first + 1 :]
        version.gaps = self.gaps.replaced(old_tokens.count(None), first, stop, new_count)
        version.cuts = cuts = self.cuts if in_place or tokenizer.model is None else self.cuts.copy()
        if tokenizer.model is not None:
            cuts[first:stop] = [None] * new_count
        version.totals = totals = self.totals.copy()
        version.revision = next(self._revisions)
        version.line_states = WeakKeyDictionary()
        version.snapshots = None
        version.borrowed = False
        for line_tokens, line in zip(old_tokens, old_lines, strict=False):
            if line_tokens is not None:
                _count(totals, line_tokens, line, -1)
        for owner, state in self.line_states.items():
            version.line_states[owner] = state.replaced(first, old_lines, new_lines, in_place)
        if tokenizer.model is not None:
            version._forget_blocks(first, new_count)
            return version  # a real model's blocks are tokenized whole, when needed
        # The lines of a small edit (typing: the edited line and one on each side) are
        # tokenized now, from the tokens of the lines it replaced: an unchanged line
        # keeps its own, an edited one takes the chunks it shares with them. So are the
        # long lines an edit made, around the edit only, from the segments of the long
        # lines it replaced. Others wait for the background or a request.
        unchanged = {line: found for line, found in zip(old_lines, old_tokens, strict=False) if found is not None}
        if not unchanged:
            return version
        kept = set(new_lines)
        previous = [found for line, found in unchanged.items() if isinstance(found, LineTokens) and line not in kept]
        small = new_count <= _EAGER_LINES
        long_ones = any(isinstance(found, SegmentedLineTokens) for found in previous)
        for number, new in enumerate(new_lines, first):
            found = unchanged.get(new)
            if found is None:
                if not (long_ones if len(new) > LONG_LINE else small):
                    continue
                found = tokenizer.line(new, previous)
            version._put(number, found)
        return version

    def _forget_blocks(self, first: int, new_count: int) -> None:
        """After an edit made lines ``first..first+new_count-1`` (its lists edited, the
        cuts before the new lines forgotten): forget the cut after them, which the edit
        may change, and the tokens of every block that held a line next to the edit (the
        cuts around them may have changed)."""
        cuts, tokens = self.cuts, self.tokens
        after = first + new_count
        count = len(tokens)
        # Upward: the block of the line above the edit, whole; downward: the block of the
        # line below it (a block that held replaced lines reaches beyond them only
        # through those). A block's lines are all tokenized or none, and the cuts
        # inside it and at its edges are known (block_of decided them).
        for line, step in ((first - 1, -1), (after, 1)):
            if not 0 <= line < count or tokens[line] is None:
                continue
            while True:
                self._drop(line)
                inside = cuts[line] is False if step < 0 else line + 1 < count and cuts[line + 1] is False
                if not inside:
                    break
                line += step
        if after < count:
            cuts[after] = None

    def _put(self, line: int, tokens: AnyLineTokens) -> None:
        """Give line ``line`` its tokens (in place of none, or of stale ones)."""
        stale = self.tokens[line]
        if stale is None:
            self.gaps.filled()  # prefix never sums past a line without tokens
        else:
            _count(self.totals, stale, self.lines[line], -1)
            del self.prefix[line + 1 :]
        self.tokens[line] = tokens
        self.counts[line] = tokens.tokens
        _count(self.totals, tokens, self.lines[line], 1)

    def _drop(self, line: int) -> None:
        """Forget line ``line``'s tokens."""
        found = self.tokens[line]
        assert found is not None, f"line {line} has no tokens to forget"
        _count(self.totals, found, self.lines[line], -1)
        self.tokens[line] = None
        self.counts[line] = 0
        del self.prefix[line + 1 :]
        self.gaps.emptied(line)

    def cut_before(self, line: int) -> bool:
        """Whether a real model's document is cut into blocks before line ``line``."""
        if line == 0:
            return True
        found = self.cuts[line]
        if found is None:
            found = self.cuts[line] = self.tokenizer.can_cut(self.lines[line - 1], self.lines[line])
        return found

    def prepare_block(self, line: int, deadline: float) -> bool:
        """A real model's document: tokenize the segments of the long block that holds line
        ``line`` until ``deadline`` (a slice of background work); True when done or when
        the block is not long."""
        first, stop = self.block_of(line)
        tokenizer = self.tokenizer
        if sum(map(len, self.lines[first:stop])) <= tokenizer.long_block:
            return True
        return tokenizer.prepare_block(self.lines[first:stop], first == 0, deadline)

    def line_tokens(self, line: int) -> AnyLineTokens:
        tokens = self.tokens[line]
        if tokens is None:
            if self.tokenizer.model is not None:
                return self._block_tokens(line)
            tokens = self.tokenizer.line(self.lines[line])
            self._put(line, tokens)
        return tokens

    def block_of(self, line: int) -> tuple[int, int]:
        """The first line of the block that holds line ``line`` and the line after it."""
        first = line
        while not self.cut_before(first):
            first -= 1
        stop = line + 1
        while stop < len(self.lines) and not self.cut_before(stop):
            stop += 1
        return first, stop

    def _block_tokens(self, line: int) -> AnyLineTokens:
        """Tokenize the block that holds line ``line`` (a real model's document)."""
        first, stop = self.block_of(line)
        found = self.tokenizer.block(self.lines[first:stop], first == 0)
        for number, tokens in enumerate(found, first):
            self._put(number, tokens)
        return found[line - first]

    def advance_pending(self) -> int:
        """The first line without tokens (the number of lines when none is left)."""
        return self.gaps.first(self.tokens)


def _count(totals: list[int], tokens: AnyLineTokens, line: str, sign: int) -> None:
    totals[0] += sign * tokens.tokens
    totals[1] += sign * tokens.chunk_count
    totals[2] += sign * len(line)
    totals[3] += sign * tokens.unknown


class Document:
    """One open document: its lines, its version and its tokens, filled in lazily.

    ``lines`` follows :func:`split_lines` (one entry per LSP line, endings kept). Tokens
    of a line are computed when first needed; :meth:`tokenize_pending` fills the rest
    in small steps so that a server can interleave it with other work.

    :meth:`snapshot` gives the document as it is now, unaffected by later edits: what
    a request sees when the document changes before it is answered.
    """

    def __init__(self, uri: str, text: str, version: int | None, tokenizer: LineTokenizer) -> None:
        self.uri = uri
        self.version = version
        self._version = _Version(split_lines(text), tokenizer)
        # The line the user last edited or hovered: where views that cannot cover a
        # large document whole (inlay hints for the whole of it) look. One cell shared
        # with the snapshots, so a hover answered from a snapshot moves it too.
        self._focus = [0]
        self.frozen = False

    def snapshot(self) -> Document:
        """This document as it is now: later edits to it do not change the snapshot."""
        copy = Document.__new__(Document)
        version = self._version
        copy.uri, copy.version, copy._version, copy._focus = self.uri, self.version, version, self._focus
        copy.frozen = True
        if version.snapshots is None:
            version.snapshots = WeakSet()
        version.snapshots.add(copy)
        return copy

    def same_text(self, other: Document) -> bool:
        """Whether ``other`` (a snapshot, say) is this very version, tokens included."""
        return self._version is other._version

    @property
    def lines(self) -> list[str]:
        """The lines (do not modify). A live document's next edit may change this very
        list; take a :meth:`snapshot` to keep them."""
        return self._version.lines

    @property
    def index(self) -> LineIndex:
        return self._version.index

    @property
    def tokenizer(self) -> LineTokenizer:
        return self._version.tokenizer

    @property
    def revision(self) -> int:
        """Changes with every edit and tokenizer switch; equal for a snapshot."""
        return self._version.revision

    @property
    def focus_line(self) -> int:
        return self._focus[0]

    @focus_line.setter
    def focus_line(self, line: int) -> None:
        self._focus[0] = line

    # Text and edits

    @property
    def text(self) -> str:
        return "".join(self.lines)

    def apply_change(self, start: Point | None, end: Point | None, text: str) -> None:
        """Replace the text between two points (the whole text when ``start`` is None)."""
        if self.frozen:
            raise TypeError("a document snapshot cannot change")
        lines = self.lines
        if start is None or end is None:
            first, last = 0, len(lines) - 1
            replaced = text
        else:
            if end < start:
                start, end = end, start
            # One more line on each side: a "\r" next to an inserted "\n" becomes "\r\n".
            first, last = max(start.line - 1, 0), min(end.line + 1, len(lines) - 1)
            old = "".join(lines[first : last + 1])
            begin = sum(map(len, lines[first : start.line])) + start.column
            finish = sum(map(len, lines[first : end.line])) + end.column
            replaced = old[:begin] + text + old[finish:]
        new_lines = split_lines(replaced)
        if last < len(lines) - 1:
            # The region ended with a line ending, so its split has an empty tail.
            new_lines.pop()
        self._version = self._version.replaced(first, last + 1, new_lines)

    def set_tokenizer(self, tokenizer: LineTokenizer) -> None:
        """Use another tokenizer: every line is tokenized again when next needed."""
        if self.frozen:
            raise TypeError("a document snapshot cannot change")
        version = _Version(self.lines, tokenizer, borrowed=True)
        # The same lines: per-line state that does not depend on the tokenizer stays.
        version.line_states.update(self._version.line_states)
        self._version = version

    def replace_text(self, text: str) -> None:
        self.apply_change(None, None, text)

    def line_state(self, owner: object, new: Callable[[int], _State]) -> _State:
        """Per-line state that ``owner`` keeps for this version of the text (a compared
        tokenizer's counts, say): made by ``new(line_count)`` on first use, then carried
        through each edit by its ``replaced``, so the next version's state costs the
        edited lines. Held weakly by ``owner``; a snapshot keeps its own version's."""
        states = self._version.line_states
        state = states.get(owner)
        if state is None:
            state = states[owner] = new(len(self.lines))
        return state  # type: ignore[return-value]

    # Tokens

    def block_of(self, line: int) -> tuple[int, int]:
        """A real model's document: the first line of the block that holds line ``line``
        and the line after it (see :mod:`glassllm_server.blocks`)."""
        return self._version.block_of(line)

    def line_tokens(self, line: int) -> AnyLineTokens:
        """The tokens of line ``line`` (computed now if needed)."""
        return self._version.line_tokens(line)

    def tokenized_through(self, line: int) -> bool:
        """Whether lines ``0..line`` all have their tokens."""
        return self._version.advance_pending() > line

    @property
    def complete(self) -> bool:
        """Whether every line has its tokens."""
        return self._version.advance_pending() >= len(self.lines)

    def tokenize_pending(self, max_lines: int) -> bool:
        """Tokenize up to ``max_lines`` lines that lack tokens, in order; True when done."""
        version = self._version
        total = len(version.lines)
        for _ in range(max_lines):
            pending = version.advance_pending()
            if pending >= total:
                return True
            version.line_tokens(pending)
        return version.advance_pending() >= total

    def tokenize_for(self, seconds: float) -> bool:
        """Tokenize lines that lack tokens, in order, for about ``seconds`` (a very long
        line a segment at a time); True when every line has its tokens."""
        deadline = perf_counter() + seconds
        version = self._version
        total = len(version.lines)
        while True:
            pending = version.advance_pending()
            if pending >= total:
                return True
            if perf_counter() >= deadline:
                return False
            text = version.lines[pending]
            if len(text) > LONG_LINE and not version.tokenizer.prepare(text, deadline):
                return False
            if version.tokenizer.model is not None and not version.prepare_block(pending, deadline):
                return False
            version.line_tokens(pending)

    def tokens_before(self, line: int) -> int:
        """How many tokens come before line ``line`` (tokenizing the lines before it)."""
        version = self._version
        pending = version.advance_pending()
        if pending < line:
            self.tokenize_pending(line - pending)
        prefix = version.prefix
        if len(prefix) <= line:
            sums = accumulate(version.counts[len(prefix) - 1 : line], initial=prefix[-1])
            prefix.extend(islice(sums, 1, None))
        return prefix[line]

    def line_spans(self, line: int) -> list[LineSpan]:
        return self.line_tokens(line).spans()

    def span_at(self, point: Point) -> tuple[int, LineSpan] | None:
        """The token holding the character at ``point`` as ``(index in line, span)``; at
        the end of a line's content, its line-ending token; None at the end of the text."""
        return next(self._holding(point), None)

    def token_at(self, point: Point) -> DocumentToken | None:
        """Like :meth:`span_at`, with the token's chunk and its index in the document
        (None until the lines above are tokenized: see :meth:`tokenize_pending`)."""
        found = self.span_at(point)
        if found is None:
            return None
        number, span = found
        return self._token(point.line, number, span)

    def tokens_at(self, point: Point) -> list[DocumentToken]:
        """Every token holding the character at ``point``, in order: the one of
        :meth:`token_at`, then those holding more of its bytes when a real model splits
        its UTF-8 over several (byte-level pieces, SentencePiece's byte fallback)."""
        return [self._token(point.line, number, span) for number, span in self._holding(point)]

    def _holding(self, point: Point) -> Iterator[tuple[int, LineSpan]]:
        """``(index in line, span)`` of each token holding the character at ``point``."""
        first, spans = self.line_tokens(point.line).window(point.column, point.column + 1)
        for number, span in enumerate(spans, first):
            if span.start <= point.column < span.end:
                yield number, span

    def meant_token(self, point: Point) -> DocumentToken | None:
        """The token a cursor at ``point`` means: the one under it, at the end of a line
        the last one before it; None on an empty line or past the text."""
        token = self.token_at(point)
        if (token is None or token.start >= content_length(self.lines[point.line])) and point.column > 0:
            token = self.token_at(Point(point.line, point.column - 1))
        if token is None or token.start >= content_length(self.lines[token.line]):
            return None
        return token

    def _token(self, line: int, number: int, span: LineSpan) -> DocumentToken:
        before = self.tokens_before(line) if self.tokenized_through(line - 1) else None
        tokens = self.line_tokens(line)
        extent = None
        if isinstance(tokens, ModelLineTokens) and (number < 0 or span.end == len(self.lines[line])):
            (first_line, first_column), (last_line, last_column) = tokens.extent(number)
            if first_line != last_line:
                extent = Point(line + first_line, first_column), Point(line + last_line, last_column)
        return DocumentToken(
            span.id,
            span.piece,
            line,
            span.start,
            span.end,
            None if before is None else before + number,
            tokens.chunk(span.chunk),
            span.chunk,
            span.piece_index,
            extent,
        )

    def spans_in(self, start: Point, end: Point) -> Iterator[tuple[int, int, LineSpan]]:
        """``(line, index in line, span)`` of the tokens that overlap ``[start, end)``.

        A token left with no characters by NFC (a decomposed character's second piece,
        placed at the end of that character) goes with the character it ends.
        """
        for line in range(start.line, end.line + 1):
            low = start.column if line == start.line else 0
            high = end.column if line == end.line else len(self.lines[line])
            if low >= high:
                continue
            first, spans = self.line_tokens(line).window(low, high)
            for number, span in enumerate(spans, first):
                if span.start == span.end:
                    if low < span.start <= high:
                        yield line, number, span
                    elif span.start > high:
                        break
                elif span.start >= high:
                    break
                elif span.end > low:
                    yield line, number, span

    def stats(self, start: Point | None = None, end: Point | None = None) -> Stats:
        """Counts for the whole document, or for the tokens and chunks that overlap
        ``[start, end)`` (a token cut by the range's edge counts)."""
        if start is None or end is None:
            self.tokenize_pending(len(self.lines))
            return Stats(*self._version.totals)
        if end < start:
            start, end = end, start
        characters = self.index.point_offset(end) - self.index.point_offset(start)
        unk = self.tokenizer.unk_id
        tokens = chunks = unknown = 0
        for line in range(start.line, end.line + 1):
            low = start.column if line == start.line else 0
            high = end.column if line == end.line else len(self.lines[line])
            # A token (or chunk) that a real model's line carries in from the line above
            # counts on the range's first line; below, it was counted where it starts.
            first = line == start.line
            if low == 0 and high >= len(self.lines[line]):
                line_tokens = self.line_tokens(line)
                tokens += line_tokens.tokens - line_tokens.leading_empty
                chunks += line_tokens.chunk_count
                unknown += line_tokens.unknown
                if first and line_tokens.continued:
                    chunks += 1
                if first and line_tokens.first < 0:
                    tokens += 1
                    unknown += line_tokens.spans()[0].id == unk
                continue
            seen = set()
            for _, number, span in self.spans_in(Point(line, low), Point(line, high)):
                if number < 0 and not first:
                    continue
                tokens += 1
                unknown += span.id == unk
                if span.chunk >= 0 or first:
                    seen.add(span.chunk)
            chunks += len(seen)
        return Stats(tokens, chunks, characters, unknown)
