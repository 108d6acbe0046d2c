"""How the server tokenizes a document's text, whatever the tokenizer: one interface,
:class:`LineTokenizer`, with the caches every open document shares.

A document is tokenized in blocks of lines: a block is what the tokenizer must see
whole, and a cut between blocks changes no token. :func:`line_tokenizer` is the one place
the server looks at a tokenizer's kind:

- glassllm's own tokenizer (:class:`OwnLineTokenizer`) never merges across a line
  ending, so each line is a block: its chunks repeat across a document (``▁de``,
  ``▁que``…) and are tokenized once, each line's tokens are kept by the line's text (a
  line seen again costs nothing), and an edit tokenizes its lines at once;
- a real model's (:class:`ModelLineTokenizer`, any
  :class:`~glassllm.formats.model_tokenizer.ModelTokenizer`) cuts where the model says a
  cut changes nothing (:mod:`glassllm_server.blocks`).

No pygls here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from itertools import accumulate, chain, pairwise, repeat
from time import perf_counter
from typing import NamedTuple, TypeVar

from glassllm import Tokenizer
from glassllm.caches import LruCache
from glassllm.formats.model_tokenizer import CUT_WITHIN_CONTEXT, ModelTokenizer
from glassllm.pipeline.any_tokenizer import AnyTokenizer
from glassllm.pipeline.bpe import merge_pieces
from glassllm.pipeline.chunks import SPACE, chunk_text, pre_tokenize
from glassllm.pipeline.specials import SPECIALS, UNK_ID
from glassllm.pipeline.tokens import ChunkExplanation, TokenSpan
from glassllm.shown.problems import Locale
from glassllm.shown.search import MERGES, method_text, search_lines
from glassllm_server.blocks import (
    BLOCK_SEGMENT,
    LONG_BLOCK,
    ModelLineTokens,
    block_segments,
    segment_cuts,
    tokenize_block,
    tokenize_long_block,
)
from glassllm_server.line_tokens import (
    LONG_LINE,
    AnyLineTokens,
    ChunkTokens,
    LineTokens,
    RawChunk,
    SegmentedLineTokens,
    segment_bounds,
)

__all__ = [
    "CHUNKS_SHIFT",
    "UNKNOWN_SHIFT",
    "LineTokenizer",
    "ModelLineTokenizer",
    "OwnLineTokenizer",
    "TokenizerFacts",
    "by_family",
    "line_tokenizer",
    "readable_explanation",
]

_T = TypeVar("_T")

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
# OwnLineTokenizer.edited): a keystroke makes three, the edited line and its neighbours.
EAGER_LINES = 8
# A line's counts (see LineTokenizer.count_block) are one int, ``tokens + (unknown << 32)
# + (chunks << 64)``, so a document's totals are one ``sum`` over them, in C: a few
# milliseconds for 30,000 lines.
UNKNOWN_SHIFT = 32
CHUNKS_SHIFT = 64


class LineTokenizer(ABC):
    """A tokenizer as a document uses it: the blocks its text is cut into, each block's
    tokens line by line, and what a hover or the stats say of it beside its name. Shared
    by every open document; made by :func:`line_tokenizer`."""

    # Whether a line's tokens depend on its own text alone (every line is a block, and
    # whatever the lines around it): then an edit tokenizes its lines at once from the
    # lines it replaced, a line's bands may be kept by its text, and its compared counts
    # outlive an edit that left it as it was.
    lines_alone: bool

    def __init__(self, tokenizer: AnyTokenizer, name: str) -> None:
        self.tokenizer = tokenizer
        self.name = name
        self.unk_id = tokenizer.unk_id
        before, after = tokenizer.around
        # Made once: every hover and stats request asks, and a tokenizer never changes.
        self.facts = TokenizerFacts(
            tokenizer.kind,
            tokenizer.priority_name,
            tokenizer.has_counts,
            tokenizer.match_specials,
            tokenizer.around,
            (tokenizer.tokens(before), tokenizer.tokens(after)),
            getattr(tokenizer, "method", MERGES),
        )

    @property
    def undecided_cut(self) -> bool | None:
        """What a cut between two lines is before :meth:`can_cut` is asked: True where
        every line is a block, None where it must be decided."""
        return True if self.lines_alone else None

    def can_cut(self, before: str, after: str) -> bool:
        """Whether a document can be tokenized apart before line ``after`` (``before``:
        the line above): the two blocks' tokens are then those of the text whole (see
        :meth:`AnyTokenizer.can_cut <glassllm.AnyTokenizer.can_cut>`)."""
        return self.tokenizer.can_cut(before, after)

    @abstractmethod
    def block(self, lines: list[str], at_start: bool) -> tuple[AnyLineTokens, ...]:
        """The tokens of a block (``at_start``: it opens the document), one entry per line."""

    @abstractmethod
    def begin_pass(self) -> None:
        """A document is about to be tokenized whole in the background (until :meth:`end_pass`)."""

    @abstractmethod
    def end_pass(self) -> None:
        """The pass :meth:`begin_pass` announced is over."""

    @abstractmethod
    def prepare(self, lines: list[str], at_start: bool, deadline: float) -> bool:
        """Tokenize the segments of a long block until ``deadline`` (a
        :func:`time.perf_counter` time); True when they are all cached, so that
        :meth:`block` then only joins them, or when the block is not long. Background
        work on a very long line can so give the event loop back, one segment at a time."""

    @abstractmethod
    def edited(
        self, old_lines: list[str], old_tokens: list[AnyLineTokens | None], new_lines: list[str]
    ) -> Sequence[AnyLineTokens | None]:
        """The tokens of the lines an edit made, as far as they are due at once (None: when
        needed), from the tokens of the lines it replaced (None: they had none)."""

    # What a compared tokenizer asks: counts without the tokens, and its view of a chunk
    # of the tokenizer in use.

    @abstractmethod
    def count_block(self, lines: Sequence[str], at_start: bool) -> tuple[int, ...]:
        """Each line's counts in the block ``lines`` (packed, see :data:`UNKNOWN_SHIFT`):
        the tokens and chunks that start on it, the unknown ones among them."""

    @abstractmethod
    def count_range(self, lines: Sequence[str], low: int, high: int, at_start: bool) -> int:
        """The packed counts of the tokens and chunks of the block ``lines`` that overlap
        offsets ``[low, high)`` of its text (a token cut by an edge counts)."""

    @abstractmethod
    def chunk_tokens(self, chunk: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """Readable pieces and IDs of a chunk of glassllm's tokenizer in use (normalized,
        spaces as ``▁``), as this tokenizer splits it."""

    @abstractmethod
    def explain_chunk(self, text: str, chunk: str) -> ChunkExplanation:
        """The explanation of a chunk of the tokenizer in use: its original ``text``, and
        ``chunk`` as that tokenizer merged it (normalized, spaces as ``▁``)."""

    def is_matched(self, token_id: int) -> bool:
        """Whether ``token_id`` is matched whole in the text (a special token read as
        special), never built by merges."""
        return False

    def search(self, chunk: str) -> dict[str, object] | None:
        """How a model that does not merge cut ``chunk`` (a chunk of this tokenizer, as
        its explanation or a document token's chunk gives it): the tokenizer's own
        ``search`` data; None for a model that merges, whose steps say it."""
        return None

    def search_lines(
        self, chunk: str, locale: Locale, piece: Callable[[str], str], most: int | None = None
    ) -> list[str]:
        """:meth:`search` worded by the library in ``locale``, one line a step (``piece``
        writes a piece as the page or hover shows it; ``most``: the candidates a step
        names at most); none for a model that merges."""
        return search_lines(self.search(chunk), locale, piece, most=most)

    def merge_order(self, left: str, right: str) -> tuple[int, float | None] | None:
        """``(rank, score)`` of a merge as a hover shows it beside the step (score: where
        scores order the merges); None where the hover shows none (glassllm's own
        explains its merges by their training counts instead)."""
        return None


class TokenizerFacts(NamedTuple):
    """What the hover and the stats may say of a tokenizer beside its name (see
    :func:`glassllm_server.render.model.facts_lines`)."""

    kind: str
    priority_name: str  # what orders its merges: "rank" or "score"
    has_counts: bool  # whether its merges carry training counts
    match_specials: bool
    around: tuple[tuple[int, ...], tuple[int, ...]]  # the IDs it adds before and after a text
    around_pieces: tuple[list[str], list[str]]
    method: str  # how its model cuts a chunk, in English: "merges", or a search (see glassllm.shown.search)

    def method_text(self, locale: Locale) -> str | None:
        """How its model cuts a chunk in ``locale``, where it does not merge (else None)."""
        return None if self.method == MERGES else method_text(self.method, locale)


def by_family(tokenizer: AnyTokenizer, own: Callable[[Tokenizer], _T], model: Callable[[ModelTokenizer], _T]) -> _T:
    """``own(tokenizer)`` for glassllm's own tokenizer, ``model(tokenizer)`` for a real
    model's (any :class:`ModelTokenizer`, whatever its format: a new format is a new
    subclass in the library, and nothing here changes). The one place the server tells
    tokenizers apart: :func:`line_tokenizer` and the compared tokenizers ask it."""
    if isinstance(tokenizer, ModelTokenizer):
        return model(tokenizer)
    if isinstance(tokenizer, Tokenizer):
        return own(tokenizer)
    raise TypeError(f"{type(tokenizer).__name__} is no tokenizer the server knows")


def line_tokenizer(tokenizer: AnyTokenizer, name: str) -> LineTokenizer:
    """The tokenizer as documents use it: a real model's is tokenized in blocks,
    glassllm's own line by line."""
    return by_family(tokenizer, lambda own: OwnLineTokenizer(own, name), lambda model: ModelLineTokenizer(model, name))


class ModelLineTokenizer(LineTokenizer):
    """A real model's tokenizer: a document is tokenized in blocks of lines cut where the
    model says a cut changes nothing, a long block in segments (see
    :mod:`glassllm_server.blocks`), each kept by its text."""

    lines_alone = False

    def __init__(self, tokenizer: ModelTokenizer, name: str) -> None:
        super().__init__(tokenizer, name)
        self.model = tokenizer
        self._blocks: LruCache[tuple[str, bool], tuple[ModelLineTokens, ...]] = LruCache(
            BLOCK_CACHE_CHARACTERS, _block_characters
        )
        self._segments: LruCache[tuple[str, bool], tuple[ModelLineTokens, ...]] = LruCache(
            SEGMENT_CACHE_CHARACTERS, _block_characters
        )
        self._cuts_within: LruCache[tuple[str, int], bool] = LruCache(CUT_CACHE_LIMIT)
        # A compared model's counts per line of each block it counted.
        self._block_counts: LruCache[tuple[str, bool], tuple[int, ...]] = LruCache(
            BLOCK_CACHE_CHARACTERS, _block_characters
        )
        self._last_cuts: tuple[str, list[int]] | None = None  # the last long block's text and cuts
        # Blocks longer than ``long_block`` characters are tokenized in segments of about
        # ``segment`` (see blocks.tokenize_long_block).
        self.long_block, self.segment = LONG_BLOCK, BLOCK_SEGMENT
        # The long block being prepared in the background: its text, segments and how
        # many are done.
        self._preparing_block: tuple[str, list[tuple[int, list[str]]], int] | None = None

    def edited(
        self, old_lines: list[str], old_tokens: list[AnyLineTokens | None], new_lines: list[str]
    ) -> Sequence[AnyLineTokens | None]:
        return ()  # blocks are tokenized whole, when needed: an edit may have moved their cuts

    # A model's blocks are tokenized whole, each once in a pass: nothing to keep for one.
    def begin_pass(self) -> None:
        pass

    def end_pass(self) -> None:
        pass

    def is_matched(self, token_id: int) -> bool:
        return self.model.is_matched(token_id)

    def merge_order(self, left: str, right: str) -> tuple[int, float | None] | None:
        return self.model.merge_order(left, right)

    def search(self, chunk: str) -> dict[str, object] | None:
        return self.model.search(chunk)

    def count_block(self, lines: Sequence[str], at_start: bool) -> tuple[int, ...]:
        key = ("".join(lines), at_start)
        cached = self._block_counts.get(key)
        if cached is not None and len(cached) == len(lines):
            return cached
        found = (self._line_counts(*key),) if len(lines) == 1 else self._lines_counts(lines, *key)
        self._block_counts.put(key, found)
        return found

    def _line_counts(self, text: str, at_start: bool) -> int:
        """A block of one line (most are) is counted from its chunks' IDs: no offsets,
        and a first pass merges each new chunk once, as ``encode`` does."""
        chunks = self.model.encode_chunks(text, at_start=at_start)
        tokens = sum(map(len, chunks))
        unknown = 0 if self.unk_id is None else list(chain.from_iterable(chunks)).count(self.unk_id)
        return tokens + (unknown << UNKNOWN_SHIFT) + (len(chunks) << CHUNKS_SHIFT)

    def _lines_counts(self, lines: Sequence[str], text: str, at_start: bool) -> tuple[int, ...]:
        """A block's counts line by line: each token counts on the line where it starts."""
        starts = list(accumulate(map(len, lines), initial=0))
        counts = [0] * len(lines)
        unk = self.unk_id
        last_chunk = -1
        for span in self.model.encode_spans(text, at_start=at_start):
            line = min(bisect_right(starts, span.start) - 1, len(lines) - 1)
            counts[line] += 1 + ((span.id == unk) << UNKNOWN_SHIFT)
            if span.chunk != last_chunk:
                last_chunk = span.chunk
                counts[line] += 1 << CHUNKS_SHIFT
        return tuple(counts)

    def count_range(self, lines: Sequence[str], low: int, high: int, at_start: bool) -> int:
        spans = self.model.encode_spans("".join(lines), at_start=at_start)
        return _packed(_touching(spans, low, high), self.unk_id)

    def chunk_tokens(self, chunk: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
        # The chunk's characters, read as a continuation of a text.
        spans = self.model.encode_spans(chunk.replace(SPACE, " "), at_start=False)
        readable = self.model.readable
        return tuple(readable(span.piece) for span in spans), tuple(span.id for span in spans)

    def explain_chunk(self, text: str, chunk: str) -> ChunkExplanation:
        # The characters of the chunk in use, as a continuation of a text, its own chunks
        # of them joined into one.
        parts = self.model.explain(text, at_start=False)
        joined = ChunkExplanation(
            0,
            text,
            0,
            len(text),
            [symbol for part in parts for symbol in part.characters],
            [step for part in parts for step in part.steps],
            [piece for part in parts for piece in part.pieces],
            [token_id for part in parts for token_id in part.ids],
        )
        return readable_explanation(joined, self.model.readable)

    def block(self, lines: list[str], at_start: bool) -> tuple[AnyLineTokens, ...]:
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
        low = max(position - CUT_WITHIN_CONTEXT, 0)
        key = (text[low : position + CUT_WITHIN_CONTEXT], position - low)
        found = self._cuts_within.get(key)
        if found is None:
            found = self.model.can_cut_within(text, position)
            self._cuts_within.put(key, found)
        return found

    def _segment_block(self, lines: Sequence[str], at_start: bool) -> tuple[ModelLineTokens, ...]:
        # A long line's segments get their columns at once: hints and bands of the part
        # in view read its segments, which are few, after each edit.
        return self._cached_block(self._segments, lines, at_start, columns_now=True)

    def _cached_block(
        self,
        cache: LruCache[tuple[str, bool], tuple[ModelLineTokens, ...]],
        lines: Sequence[str],
        at_start: bool,
        columns_now: bool = False,
    ) -> tuple[ModelLineTokens, ...]:
        """A block's (or a long block's segment's) tokens, from ``cache`` when it holds
        the same text cut into as many lines."""
        key = ("".join(lines), at_start)
        cached = cache.get(key)
        if cached is None or len(cached) != len(lines):
            cached = tokenize_block(self.model, lines, at_start, columns_now)
            cache.put(key, cached)
        return cached

    def prepare(self, lines: list[str], at_start: bool, deadline: float) -> bool:
        if sum(map(len, lines)) <= self.long_block:
            return True
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


class OwnLineTokenizer(LineTokenizer):
    """glassllm's own tokenizer: every line is a block, tokenized chunk by chunk with the
    chunk and line caches."""

    lines_alone = True

    def __init__(self, tokenizer: Tokenizer, name: str) -> None:
        super().__init__(tokenizer, name)
        self.own = tokenizer
        self._chunks: LruCache[str, RawChunk] = LruCache(CHUNK_CACHE_LIMIT)
        self._lines: LruCache[str, AnyLineTokens] = LruCache(LINE_CACHE_CHARACTERS, len)
        self._piece_ids: dict[str, int] = {}
        vocab = tokenizer.vocab
        for index in range(len(SPECIALS), len(vocab)):
            self._piece_ids.setdefault(vocab[index], index)
        # The long line being prepared in the background: its text, segment bounds and
        # how many segments are done.
        self._preparing: tuple[str, list[int], int] | None = None
        # A compared tokenizer's counts: per line, per long line's segment, per chunk (a
        # count, not the pieces and IDs a line's tokens keep: a fifth of the memory on a
        # large document), and the vocabulary's pieces, to tell unknown ones.
        self._line_counts: LruCache[str, int] = LruCache(LINE_CACHE_CHARACTERS, len)
        self._segment_counts: LruCache[str, int] = LruCache(SEGMENT_CACHE_CHARACTERS, len)
        self._chunk_counts: LruCache[str, int] = LruCache(CHUNK_CACHE_LIMIT)
        self._known: frozenset[str] | None = None
        # While documents are tokenized whole (see begin_pass), every chunk met in them:
        # their lines hold the entries anyway, so this costs the dict alone, and a
        # document of more distinct chunks than the cache holds (61,030 in the 7 MB
        # corpus) merges each once, as the library's encode does, instead of 96,406 times.
        self._passes = 0
        self._pass_chunks: dict[str, RawChunk] = {}

    def block(self, lines: list[str], at_start: bool) -> tuple[AnyLineTokens, ...]:
        return (self.line(lines[0]),)

    def begin_pass(self) -> None:
        self._passes += 1

    def end_pass(self) -> None:
        self._passes -= 1
        if not self._passes:
            self._pass_chunks = {}

    def edited(
        self, old_lines: list[str], old_tokens: list[AnyLineTokens | None], new_lines: list[str]
    ) -> list[AnyLineTokens | None]:
        # The lines of a small edit (typing: the edited line and one on each side) are
        # tokenized now, from the tokens of the lines it replaced: an unchanged line
        # keeps its own, an edited one takes the chunks it shares with them. So are the
        # long lines an edit made, around the edit only, from the segments of the long
        # lines it replaced. Others wait for the background or a request.
        unchanged = {line: found for line, found in zip(old_lines, old_tokens, strict=False) if found is not None}
        if not unchanged:
            return []
        kept = set(new_lines)
        previous = [found for line, found in unchanged.items() if line not in kept]
        small = len(new_lines) <= EAGER_LINES
        long_ones = any(isinstance(found, SegmentedLineTokens) for found in previous)
        made: list[AnyLineTokens | None] = []
        for new in new_lines:
            found = unchanged.get(new)
            if found is None and (long_ones if len(new) > LONG_LINE else small):
                found = self.line(new, previous)
            made.append(found)
        return made

    def count_block(self, lines: Sequence[str], at_start: bool) -> tuple[int, ...]:
        # Every line is a block of its own: counted alone, and kept by its text.
        return tuple(map(self.count_line, lines))

    def count_line(self, line: str) -> int:
        """Count one line (packed) and keep the count.

        A long line is counted segment by segment (cut where neither NFC nor the chunk
        rule joins the sides, as a document cuts it), and the segments are kept instead
        of the line: an edit in it recounts the segment it changed, and the cache does
        not fill with copies of the line."""
        count = self._line_counts.get(line)
        if count is not None:
            return count
        if len(line) > LONG_LINE and len(bounds := segment_bounds(line)) > 2:
            return sum(self._count_segment(line[start:stop]) for start, stop in pairwise(bounds))
        count = self._count_text(line)
        self._line_counts.put(line, count)
        return count

    def _count_segment(self, segment: str) -> int:
        count = self._segment_counts.get(segment)
        if count is None:
            count = self._count_text(segment)
            self._segment_counts.put(segment, count)
        return count

    def _count_text(self, text: str) -> int:
        chunks = pre_tokenize(text)
        return sum(map(self._count_chunk, chunks)) + (len(chunks) << CHUNKS_SHIFT)

    def _count_chunk(self, chunk: str) -> int:
        """One chunk's count (packed), through BPE's merges."""
        counts = self._chunk_counts
        count = counts.recent.get(chunk)
        if count is None:
            count = counts.get(chunk)
        if count is None:
            pieces = merge_pieces(chunk, self.own.ranks)
            if self._known is None:
                self._known = frozenset(self.own.vocab[len(SPECIALS) :])
            known = self._known
            count = len(pieces) + (sum(piece not in known for piece in pieces) << UNKNOWN_SHIFT)
            counts.put(chunk, count)
        return count

    def count_range(self, lines: Sequence[str], low: int, high: int, at_start: bool) -> int:
        packed = 0
        offset = 0
        for text in lines:
            if low < offset + len(text) and high > offset:
                spans = _overlapping(self.own, text, max(low - offset, 0), min(high - offset, len(text)))
                packed += _packed(spans, UNK_ID)
            offset += len(text)
        return packed

    def chunk_tokens(self, chunk: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
        # Every glassllm tokenizer shares the chunk rule: the chunk in use is one of its.
        spans = self.own.encode_spans(chunk)
        return tuple(span.piece for span in spans), tuple(span.id for span in spans)

    def explain_chunk(self, text: str, chunk: str) -> ChunkExplanation:
        return self.own.explain(chunk)[0]

    def chunk(self, text: str) -> ChunkTokens:
        """The tokens of one chunk (already normalized and marked)."""
        return ChunkTokens._make(self._chunk(text))

    def _chunk(self, text: str) -> RawChunk:
        cached = self._chunks.get(text) or self._pass_chunks.get(text)
        if cached is not None:
            return cached
        # BPE here, as Tokenizer.encode does it, rather than through encode: the library's
        # chunk cache would keep a second copy of every chunk ever typed. The pieces are
        # the vocabulary's own strings (no copy per chunk), but an unknown character's.
        own = self.own
        merged = merge_pieces(text, own.ranks)
        ids = tuple(map(self._piece_ids.get, merged, repeat(UNK_ID)))
        unknown = ids.count(UNK_ID)
        pieces = tuple(merged) if unknown else tuple(map(own.vocab.__getitem__, ids))
        entry = (text, pieces, ids, unknown)
        self._chunks.put(text, entry)
        if self._passes:
            self._pass_chunks[text] = entry
        return entry

    def line(self, text: str, replaced: Sequence[AnyLineTokens] = ()) -> AnyLineTokens:
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

    def _tokenize(self, text: str, replaced: Sequence[AnyLineTokens] = ()) -> LineTokens:
        chunked = chunk_text(text)
        chunks = chunked.chunks
        # In a pass, every chunk met is there; else the cache's recent half, in one go.
        found = list(map((self._pass_chunks if self._passes else self._chunks.recent).get, chunks))
        if None in found:
            chunk = self._chunk
            known = {
                entry[0]: entry
                for tokens in replaced
                if isinstance(tokens, LineTokens)  # a long line's are its segments'
                for entry in tokens.chunks
            }
            found = [entry or known.get(text) or chunk(text) for entry, text in zip(found, chunks, strict=False)]
        return LineTokens(tuple(found), chunked.origin)  # type: ignore[arg-type]

    def prepare(self, lines: list[str], at_start: bool, deadline: float) -> bool:
        text = lines[0]
        if len(text) <= LONG_LINE:
            return True
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

    def _segment(self, text: str) -> AnyLineTokens:
        # Segments are cached like lines (a long segment, where no cut was safe, is not:
        # the cache must not keep megabytes of old text alive).
        return self.line(text) if len(text) <= LONG_LINE else self._tokenize(text)

    def _long_line(self, text: str, previous: tuple[SegmentedLineTokens, SegmentedLineTokens] | None) -> AnyLineTokens:
        head: list[tuple[str, AnyLineTokens]] = []
        tail: list[tuple[str, AnyLineTokens]] = []
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


def _packed(spans: Iterator[TokenSpan], unk: int | None) -> int:
    """The packed counts of ``spans``: tokens, unknown ones, and the chunks they are in."""
    packed = 0
    seen = set()
    for span in spans:
        packed += 1 + ((span.id == unk) << UNKNOWN_SHIFT)
        seen.add(span.chunk)
    return packed + (len(seen) << CHUNKS_SHIFT)


def _touching(spans: Sequence[TokenSpan], low: int, high: int) -> Iterator[TokenSpan]:
    """The spans that overlap ``[low, high)``; an empty one (a dummy prefix, or a token
    NFC left with no characters of its own) goes with the character it ends, as in the
    document."""
    for span in spans:
        if span.start == span.end:
            if low < span.start <= high:
                yield span
            elif span.start > high:
                return
        elif span.start >= high:
            return
        elif span.end > low:
            yield span


def _overlapping(tokenizer: Tokenizer, text: str, low: int, high: int) -> Iterator[TokenSpan]:
    """Tokens of line ``text`` that overlap columns ``[low, high)``. Of a long line, only
    the segments around the columns are tokenized."""
    offset = 0
    if len(text) > LONG_LINE:
        bounds = segment_bounds(text)
        first = max(bisect_right(bounds, low) - 1, 0)
        last = min(bisect_left(bounds, high), len(bounds) - 1)
        offset, text = bounds[first], text[bounds[first] : bounds[last]]
        low, high = low - offset, high - offset
    for span in _touching(tokenizer.encode_spans(text), low, high):
        yield span._replace(start=span.start + offset, end=span.end + offset)


def readable_explanation(explanation: ChunkExplanation, readable: Callable[[str], str]) -> ChunkExplanation:
    """``explanation`` with its pieces, pairs and results as a person reads them."""
    if readable is str:
        return explanation
    steps = [
        replace(
            step,
            pair=(readable(step.pair[0]), readable(step.pair[1])),
            result=readable(step.result),
            pieces=list(map(readable, step.pieces)),
        )
        for step in explanation.steps
    ]
    return replace(
        explanation,
        characters=list(map(readable, explanation.characters)),
        steps=steps,
        pieces=list(map(readable, explanation.pieces)),
    )
