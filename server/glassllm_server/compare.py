"""Compared tokenizers: how the other tokenizers split what the user is looking at.

The ``glassllm.compareWith`` setting names tokenizers to show beside the one in use. Their
work is done only when asked, never on an edit: a hover asks for one chunk, ``glassllm/stats``
for the counts of a document or a range, the "Compare tokenizers" page for the chunks a
selection touches. Every glassllm tokenizer shares the chunk rule, so beside one of them
the chunks of the tokenizer in use are the chunks of every compared one and only the
merges differ. A real model's tokenizer (:class:`ComparedModel`) chunks in its own way,
across line breaks too: it counts a document by blocks of lines, as the document itself
is tokenized for one (:mod:`glassllm_server.blocks`), and explains the characters of the
chunk in use.

Whole lines are counted once per distinct line text and kept, so after an edit only the
edited lines are tokenized again; and each document's totals follow its edits (see
:class:`DocumentCounts`), so a request after an edit adds up only the edited lines.
Everything works in lines and code-point columns; no pygls here.
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from glassllm import PACKAGED, AnyTokenizer, ChunkExplanation, ComparedChunk, Tokenizer, by_difference
from glassllm.caches import LruCache
from glassllm.formats.model_tokenizer import ModelTokenizer
from glassllm.pipeline.bpe import apply_merges
from glassllm.pipeline.chunks import SPACE, pre_tokenize
from glassllm.pipeline.tokens import TokenSpan
from glassllm.tokenizer import SPECIALS, UNK_ID
from glassllm_server.document import ReadOnlyDocument
from glassllm_server.explanation import Explanation
from glassllm_server.gaps import Gaps
from glassllm_server.line_tokenizer import by_family
from glassllm_server.line_tokens import LONG_LINE, segment_bounds

__all__ = [
    "AnyCompared",
    "CompareSet",
    "ComparedCounts",
    "ComparedModel",
    "ComparedTokenizer",
    "DocumentCounts",
    "PlacedChunk",
    "compare_data",
    "compare_explanation",
    "default_compare_with",
]


# The caches' bounds (docs/server.md, "Memory"): lines' counts by the lines'
# characters, as the document's line cache; chunks' counts (about 90 bytes each) as many
# as the document's chunk cache; chunks kept whole for hovers, a few thousand.
LINE_CACHE_CHARACTERS = 1 << 20
# A long line's segments apart, by characters too: one cache for the few long lines a
# document has, big enough that a line of millions of characters keeps every segment
# (an edit then recounts one), with no effect on ordinary lines' cache.
SEGMENT_CACHE_CHARACTERS = 1 << 23
CHUNK_COUNT_LIMIT = 1 << 15
HOVER_CHUNK_LIMIT = 1 << 12
# A line's counts are one int, ``tokens + (unknown << 32) + (chunks << 64)``, so a
# document's totals are one ``sum`` over the cached values, in C: a few milliseconds for
# 30,000 lines.
_UNKNOWN_SHIFT = 32
_CHUNKS_SHIFT = 64
_TOKENS_MASK = (1 << _UNKNOWN_SHIFT) - 1


def default_compare_with(tokenizer: str) -> list[str]:
    """What to compare with when the setting is absent: the other packaged tokenizer
    (``en`` beside ``pt`` and the other way round); beside a file, both packaged ones."""
    return [name for name in PACKAGED if name != tokenizer]


@dataclass(frozen=True)
class ComparedCounts:
    """A compared tokenizer's counts for a document or a range."""

    tokenizer: str
    tokens: int
    chunks: int
    unknown: int


class AnyCompared(ABC):
    """A tokenizer to compare with, whatever its kind, and what it has already counted:
    what the hover, ``glassllm/stats`` and the "Compare tokenizers" page ask of it."""

    def __init__(self, tokenizer: AnyTokenizer, name: str) -> None:
        self.tokenizer = tokenizer
        self.name = name  # "pt", "en" or a resolved path, as in glassllm/stats

    def document(self, document: ReadOnlyDocument) -> DocumentCounts:
        """This tokenizer's counts for ``document`` as it is (a snapshot keeps its own),
        carried through the document's edits from now on."""
        return document.line_state(self, DocumentCounts)

    @abstractmethod
    def chunk(self, chunk: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """Readable pieces and IDs of a chunk of the tokenizer in use (normalized, spaces
        as ``▁``)."""

    @abstractmethod
    def count_from(self, counts: DocumentCounts, lines: Sequence[str], line: int) -> int:
        """Count line ``line`` of ``lines`` (with what it is tokenized with) into
        ``counts``; the line after the last one counted."""

    @abstractmethod
    def counts(self, lines: Sequence[str], chunks: int) -> ComparedCounts:
        """Counts for the whole text ``lines`` (``chunks``: the tokenizer in use's)."""

    @abstractmethod
    def counts_in(
        self,
        lines: Sequence[str],
        start: tuple[int, int],
        end: tuple[int, int],
        chunks: int,
        counted: DocumentCounts | None = None,
    ) -> ComparedCounts:
        """Counts of the tokens that overlap ``[start, end)`` (line, column) of ``lines``,
        as ``glassllm/stats`` counts a range: a token cut by the range's edge counts.
        ``counted``: the document's per-line counts, which whole lines are taken from
        (and kept in) rather than tokenized again."""

    @abstractmethod
    def explain_chunk(self, text: str, chunk: str) -> ChunkExplanation:
        """The explanation of a chunk of the tokenizer in use: its original ``text``, and
        ``chunk`` as that tokenizer merged it (normalized, spaces as ``▁``)."""


class ComparedTokenizer(AnyCompared):
    """A glassllm tokenizer to compare with: it shares the chunk rule of every glassllm
    tokenizer, so it counts line by line and explains the chunk in use alone."""

    tokenizer: Tokenizer

    def __init__(self, tokenizer: Tokenizer, name: str) -> None:
        super().__init__(tokenizer, name)
        self._lines: LruCache[str, int] = LruCache(LINE_CACHE_CHARACTERS, len)
        self._segments: LruCache[str, int] = LruCache(SEGMENT_CACHE_CHARACTERS, len)
        self._chunks: LruCache[str, tuple[tuple[str, ...], tuple[int, ...]]] = LruCache(HOVER_CHUNK_LIMIT)
        # Counting keeps a count per chunk, not its pieces and IDs as encoding would (a
        # fifth of the memory on a large document): what BPE makes of a chunk is in
        # the vocabulary, or an unknown character.
        self._chunk_counts: LruCache[str, int] = LruCache(CHUNK_COUNT_LIMIT)
        self._known = frozenset(tokenizer.vocab[len(SPECIALS) :])

    def chunk(self, chunk: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
        cached = self._chunks.get(chunk)
        if cached is None:
            spans = self.tokenizer.encode_spans(chunk)
            cached = (tuple(span.piece for span in spans), tuple(span.id for span in spans))
            self._chunks.put(chunk, cached)
        return cached

    def count_line(self, line: str) -> int:
        """Count one line (packed as ``tokens + (unknown << 32) + (chunks << 64)``) and
        keep the count.

        A long line is counted segment by segment (cut where neither NFC nor the chunk
        rule joins the sides, as the document cuts it), and the segments are kept
        instead of the line: an edit in it recounts the segment it changed, and the
        cache does not fill with copies of the line."""
        count = self._lines.get(line)
        if count is not None:
            return count
        if len(line) > LONG_LINE and len(bounds := segment_bounds(line)) > 2:
            return sum(self._count_segment(line[start:stop]) for start, stop in itertools.pairwise(bounds))
        count = self._count_text(line)
        self._lines.put(line, count)
        return count

    def count_from(self, counts: DocumentCounts, lines: Sequence[str], line: int) -> int:
        counts.count_of(self, lines, line)
        return line + 1

    def explain_chunk(self, text: str, chunk: str) -> ChunkExplanation:
        return self.tokenizer.explain(chunk)[0]

    def _count_segment(self, segment: str) -> int:
        count = self._segments.get(segment)
        if count is None:
            count = self._count_text(segment)
            self._segments.put(segment, count)
        return count

    def _count_text(self, text: str) -> int:
        chunks = pre_tokenize(text)
        return sum(map(self._count_chunk, chunks)) + (len(chunks) << _CHUNKS_SHIFT)

    def _count_chunk(self, chunk: str) -> int:
        """One chunk's count (packed as in :meth:`count_line`), through BPE's merges."""
        counts = self._chunk_counts
        count = counts.recent.get(chunk)
        if count is None:
            count = counts.get(chunk)
        if count is None:
            pieces, _ = apply_merges(chunk, self.tokenizer.ranks)
            known = self._known
            count = len(pieces) + (sum(piece not in known for piece in pieces) << _UNKNOWN_SHIFT)
            counts.put(chunk, count)
        return count

    def counts(self, lines: Sequence[str], chunks: int = 0) -> ComparedCounts:
        """Counts for whole lines (``chunks``, unused, as the model's counts take it).
        Lines not counted yet are counted now, and kept."""
        found = [count for count in map(self._lines.recent.get, lines) if count is not None]
        if len(found) < len(lines):
            found = list(map(self.count_line, lines))
        return _unpacked(self.name, sum(found))

    def counts_in(
        self,
        lines: Sequence[str],
        start: tuple[int, int],
        end: tuple[int, int],
        chunks: int,
        counted: DocumentCounts | None = None,
    ) -> ComparedCounts:
        tokens = unknown = found_chunks = 0
        whole: list[str] = []
        packed = 0
        for line in range(start[0], end[0] + 1):
            text = lines[line]
            low = start[1] if line == start[0] else 0
            high = end[1] if line == end[0] else len(text)
            if low >= high:
                continue
            if low == 0 and high >= len(text):
                if counted is None:
                    whole.append(text)
                else:
                    packed += counted.count_of(self, lines, line)
                continue
            seen = set()
            for span in _overlapping(self.tokenizer, text, low, high):
                tokens += 1
                unknown += span.id == UNK_ID
                seen.add(span.chunk)
            found_chunks += len(seen)
        texts, known = self.counts(whole), _unpacked(self.name, packed)
        return ComparedCounts(
            self.name,
            tokens + texts.tokens + known.tokens,
            found_chunks + texts.chunks + known.chunks,
            unknown + texts.unknown + known.unknown,
        )


class ComparedModel(AnyCompared):
    """A real model's tokenizer to compare with (see the module's docstring): it counts
    by blocks of lines and explains the characters of the chunk in use."""

    tokenizer: ModelTokenizer

    def __init__(self, tokenizer: ModelTokenizer, name: str) -> None:
        super().__init__(tokenizer, name)
        # Each block's counts per line (packed: tokens, unknown, chunks that start there).
        self._blocks: LruCache[tuple[str, bool], tuple[int, ...]] = LruCache(LINE_CACHE_CHARACTERS, _block_weight)
        self._chunks: LruCache[str, tuple[tuple[str, ...], tuple[int, ...]]] = LruCache(HOVER_CHUNK_LIMIT)

    def chunk(self, chunk: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
        # The chunk's characters, read as a continuation of a text.
        cached = self._chunks.get(chunk)
        if cached is None:
            spans = self.tokenizer.encode_spans(chunk.replace(SPACE, " "), at_start=False)
            readable = self.tokenizer.readable
            cached = (tuple(readable(span.piece) for span in spans), tuple(span.id for span in spans))
            self._chunks.put(chunk, cached)
        return cached

    def count_from(self, counts: DocumentCounts, lines: Sequence[str], line: int) -> int:
        return line + 1 if counts.in_block(line) else counts.count_block(self, lines, line)

    def explain_chunk(self, text: str, chunk: str) -> ChunkExplanation:
        return _explained_as_one(self.tokenizer, text)

    def block_of(self, lines: Sequence[str], line: int) -> tuple[int, int]:
        """The first line of the block that holds line ``line`` and the line after it."""
        can_cut = self.tokenizer.can_cut
        first = line
        while first > 0 and not can_cut(lines[first - 1], lines[first]):
            first -= 1
        stop = line + 1
        while stop < len(lines) and not can_cut(lines[stop - 1], lines[stop]):
            stop += 1
        return first, stop

    def count_block(self, lines: Sequence[str], at_start: bool) -> tuple[int, ...]:
        """Each line's packed counts in the block ``lines``: the tokens and chunks that
        start on it."""
        key = ("".join(lines), at_start)
        cached = self._blocks.get(key)
        if cached is not None and len(cached) == len(lines):
            return cached
        starts = list(itertools.accumulate(map(len, lines), initial=0))
        counts = [0] * len(lines)
        unk = self.tokenizer.unk_id
        last_chunk = -1
        for span in self.tokenizer.encode_spans(key[0], at_start=at_start):
            line = min(bisect_right(starts, span.start) - 1, len(lines) - 1)
            counts[line] += 1 + ((span.id == unk) << _UNKNOWN_SHIFT)
            if span.chunk != last_chunk:
                last_chunk = span.chunk
                counts[line] += 1 << _CHUNKS_SHIFT
        found = tuple(counts)
        self._blocks.put(key, found)
        return found

    def counts_in(
        self,
        lines: Sequence[str],
        start: tuple[int, int],
        end: tuple[int, int],
        chunks: int,
        counted: DocumentCounts | None = None,
    ) -> ComparedCounts:
        # ``chunks`` is unused (a model counts its own); the blocks wholly inside the
        # range are taken from ``counted``, only the blocks at its edges are tokenized.
        if start >= end:
            return ComparedCounts(self.name, 0, 0, 0)
        inner = (start[0], start[0], 0)
        if counted is not None:
            inner = counted.whole_blocks(self, lines, start[0] + (start[1] > 0), end[0])
        first, stop, packed = inner
        if first == stop:
            return _unpacked(self.name, self._counts_between(lines, start, end))
        before = self._counts_between(lines, start, (first - 1, len(lines[first - 1]))) if first > start[0] else 0
        after = self._counts_between(lines, (stop, 0), end) if (stop, 0) < end else 0
        return _unpacked(self.name, before + packed + after)

    def _counts_between(self, lines: Sequence[str], start: tuple[int, int], end: tuple[int, int]) -> int:
        """The packed counts of the tokens and chunks that overlap ``[start, end)``,
        tokenizing each block the range touches."""
        packed = 0
        unk = self.tokenizer.unk_id
        line = start[0]
        while line <= end[0]:
            first, stop = self.block_of(lines, line)
            block = lines[first:stop]
            starts = list(itertools.accumulate(map(len, block), initial=0))
            low = starts[start[0] - first] + start[1] if start[0] >= first else 0
            high = starts[end[0] - first] + end[1] if end[0] < stop else starts[-1]
            seen = set()
            for span in _touching(self.tokenizer.encode_spans("".join(block), at_start=first == 0), low, high):
                packed += 1 + ((span.id == unk) << _UNKNOWN_SHIFT)
                seen.add(span.chunk)
            packed += len(seen) << _CHUNKS_SHIFT
            line = stop
        return packed

    def counts(self, lines: Sequence[str], chunks: int) -> ComparedCounts:
        counts = DocumentCounts(len(lines))
        counts.count_pending(self, lines, len(lines))
        return counts.totals(self.name)


def _block_weight(key: tuple[str, bool]) -> int:
    return len(key[0])


def _touching(spans: Sequence[TokenSpan], low: int, high: int) -> Iterator[TokenSpan]:
    """The spans that overlap ``[low, high)``; an empty one (a dummy prefix) goes with
    the character it ends, as in the document."""
    for span in spans:
        if span.start == span.end:
            if low < span.start <= high:
                yield span
        elif span.start >= high:
            return
        elif span.end > low:
            yield span


class DocumentCounts:
    """A compared tokenizer's per-line counts for one version of a document, and their sum.

    Like the document's own totals: an edit's next version forgets the counts of the lines
    it replaced (:meth:`replaced`, called by the document), and :meth:`count_pending`
    counts the lines without one when a request needs the totals. So a request after an
    edit costs the edited lines, not a pass over the whole document.
    """

    def __init__(self, line_count: int) -> None:
        self._counts: list[int | None] = [None] * line_count
        # A real model's: the block each counted line was counted in (see ComparedModel).
        self._blocks: list[object | None] = []
        self._total = 0  # of the lines that have a count
        self._gaps = Gaps.everywhere(line_count)  # the lines without a count

    def replaced(self, first: int, old_lines: list[str], new_lines: list[str], in_place: bool) -> DocumentCounts:
        """The counts of the next version, where the lines from ``first`` on, ``old_lines``,
        were replaced by ``new_lines`` (and, for a real model, the whole blocks that held
        them: the edit can cut them); ``in_place``, this one's lists become its, edited.
        A block next to the edit is kept: cuts are decided by the two lines around them,
        so if the edit joins it to its lines, counting the edited lines' block counts it
        again."""
        counts = self._counts
        stop, new_count = first + len(old_lines), len(new_lines)
        replaced = counts[first:stop]
        following = DocumentCounts(0)
        following._counts = counts if in_place else counts.copy()
        following._total = self._total - sum(filter(None, replaced))
        following._gaps = self._gaps.replaced(replaced.count(None), first, stop, new_count)
        if not self._blocks:
            # glassllm's own lines count alone: one the edit left as it was (the lines
            # around a keystroke) keeps its count.
            kept = {line: count for line, count in zip(old_lines, replaced, strict=False) if count is not None}
            new_counts = [kept.get(line) for line in new_lines]
            following._counts[first:stop] = new_counts
            for count in new_counts:
                if count is not None:
                    following._total += count
                    following._gaps.filled()
            return following
        following._counts[first:stop] = [None] * new_count
        # The blocks of the first and the last replaced line, and the lines next to them
        # (after the edit, upward and downward) that shared them.
        edges = ((self._blocks[first], first - 1, -1), (self._blocks[stop - 1], first + new_count, 1))
        blocks = following._blocks = self._blocks if in_place else self._blocks.copy()
        blocks[first:stop] = [None] * new_count
        for edited, line, step in edges:
            block = edited if 0 <= line < len(blocks) and blocks[line] is edited else None
            while block is not None and 0 <= line < len(blocks) and blocks[line] is block:
                forgotten = following._counts[line]
                if forgotten is not None:
                    following._total -= forgotten
                    following._gaps.emptied(line)
                following._counts[line] = blocks[line] = None
                line += step
        return following

    def count_pending(self, tokenizer: AnyCompared, lines: Sequence[str], max_lines: int) -> bool:
        """Count up to ``max_lines`` lines of ``lines`` (this version's) that have no
        count (a real model's whole block at a time); True when every line has one."""
        counts = self._counts
        counted = 0
        while True:
            line = self._gaps.first(counts)
            if line >= len(counts):
                return True
            if counted >= max_lines:
                return False
            counted += tokenizer.count_from(self, lines, line) - line

    def count_block(self, tokenizer: ComparedModel, lines: Sequence[str], line: int) -> int:
        """Count the block of a real model's that holds line ``line``; the line after it."""
        if not self._blocks:
            self._blocks = [None] * len(self._counts)
        counts = self._counts
        first, stop = tokenizer.block_of(lines, line)
        block = object()
        for number, count in enumerate(tokenizer.count_block(lines[first:stop], first == 0), first):
            known = counts[number]
            if known is None:
                self._gaps.filled()
            self._total += count - (known or 0)
            counts[number] = count
            self._blocks[number] = block
        return stop

    def whole_blocks(
        self, tokenizer: ComparedModel, lines: Sequence[str], first: int, stop: int
    ) -> tuple[int, int, int]:
        """Of lines ``first..stop-1``, the run made of a real model's whole blocks, and
        their packed counts: ``(first line, line after, counts)``. The lines are counted
        if they have no count yet. The document's first block is left out: a range
        leaves out its dummy prefix, which its counts hold."""
        if first >= stop:
            return first, first, 0
        counts, blocks = self._counts, self._blocks
        line = first
        while line < stop:
            if not self.in_block(line):
                line = self.count_block(tokenizer, lines, line)
                blocks = self._blocks
            else:
                line += 1
        low, high = first, stop
        if low == 0 or blocks[low - 1] is blocks[low]:
            edge = blocks[low]
            while low < high and blocks[low] is edge:
                low += 1
        if high < len(blocks) and blocks[high] is blocks[high - 1]:
            edge = blocks[high - 1]
            while high > low and blocks[high - 1] is edge:
                high -= 1
        return low, high, sum(filter(None, counts[low:high]))

    def in_block(self, line: int) -> bool:
        """Whether line ``line`` has a count, counted in a real model's block."""
        return self._counts[line] is not None and bool(self._blocks) and self._blocks[line] is not None

    def count_of(self, tokenizer: ComparedTokenizer, lines: Sequence[str], line: int) -> int:
        """Line ``line``'s count (packed), counted now and kept if it has none yet."""
        count = self._counts[line]
        if count is None:
            count = self._counts[line] = tokenizer.count_line(lines[line])
            self._total += count
            self._gaps.filled()
        return count

    def totals(self, name: str) -> ComparedCounts:
        """The document's counts, once :meth:`count_pending` is done."""
        return _unpacked(name, self._total)


def _unpacked(name: str, total: int) -> ComparedCounts:
    """Counts packed as a line's are (see ``_UNKNOWN_SHIFT``)."""
    return ComparedCounts(name, total & _TOKENS_MASK, total >> _CHUNKS_SHIFT, (total >> _UNKNOWN_SHIFT) & _TOKENS_MASK)


def _overlapping(tok: Tokenizer, text: str, low: int, high: int) -> Iterator[Any]:
    """Tokens of line ``text`` that overlap columns ``[low, high)``. A token that NFC left
    with no characters of its own goes with the character it ends, as in the document.
    Of a long line, only the segments around the columns are tokenized."""
    offset = 0
    if len(text) > LONG_LINE:
        bounds = segment_bounds(text)
        first = max(bisect_right(bounds, low) - 1, 0)
        last = min(bisect_left(bounds, high), len(bounds) - 1)
        offset, text = bounds[first], text[bounds[first] : bounds[last]]
        low, high = low - offset, high - offset
    for span in tok.encode_spans(text):
        if span.start == span.end:
            if low < span.start <= high:
                yield span._replace(start=span.start + offset, end=span.end + offset)
            elif span.start > high:
                return
        elif span.start >= high:
            return
        elif span.end > low:
            yield span._replace(start=span.start + offset, end=span.end + offset)


class CompareSet:
    """The compared tokenizers, kept while the setting names them, and those that failed
    to load. Loading is the caller's (the server loads files off the event loop)."""

    def __init__(self) -> None:
        # (name, whether a real model matches special-token text) → its compared tokenizer
        self._loaded: dict[tuple[str, bool], AnyCompared] = {}
        self._failed: set[str] = set()

    def forget_failures(self) -> None:
        """Try files that failed to load again (the settings changed: they may be fixed)."""
        self._failed.clear()

    def add(self, name: str, tokenizer: AnyTokenizer, match_specials: bool = False) -> None:
        """``name``'s tokenizer, loaded for the setting ``match_specials`` (which only a
        real model's heeds)."""
        self._loaded[(name, match_specials)] = by_family(
            tokenizer, lambda own: ComparedTokenizer(own, name), lambda model: ComparedModel(model, name)
        )

    def fail(self, name: str) -> None:
        """``name`` did not load: left out until :meth:`forget_failures`."""
        self._failed.add(name)

    def get(
        self,
        names: Sequence[str],
        current: str,
        load: Callable[[str, bool], AnyTokenizer | None],
        match_specials: bool = False,
    ) -> list[AnyCompared]:
        """The tokenizers ``names`` (resolved: "pt", "en", "hf:…" or absolute paths),
        without ``current`` (the one in use) or repeats, real models reading special-token
        text as ``match_specials`` says. One neither loaded nor failed is asked of
        ``load(name, match_specials)``: its tokenizer, or None while it is not ready (left
        out for now). Tokenizers no longer named are let go."""
        wanted = [(name, match_specials) for name in dict.fromkeys(names) if name != current]
        compared: list[AnyCompared] = []
        for key in wanted:
            if key[0] in self._failed:
                continue
            if key not in self._loaded:
                tokenizer = load(*key)
                if tokenizer is None:
                    continue
                self.add(key[0], tokenizer, key[1])
            compared.append(self._loaded[key])
        for key in set(self._loaded) - set(wanted):
            del self._loaded[key]
        return compared


# The "Compare tokenizers" page


@dataclass(frozen=True)
class PlacedChunk:
    """A chunk the selection touches, compared, and where it is in the document.

    ``compared`` is the library's :class:`~glassllm.ComparedChunk` (the tokenizer in use
    first): its ``start`` and ``end`` are columns of ``line``, its ``index`` the chunk's
    place in the selection, so the library's :func:`~glassllm.by_difference` orders the
    page as ``glassllm compare`` orders its chunks."""

    line: int
    text: str  # the chunk's original text
    compared: ComparedChunk


def compare_explanation(
    explanation: Explanation, compared: Sequence[AnyCompared], readable: Callable[[str], str] = str
) -> list[PlacedChunk]:
    """The chunks of a merge explanation (by the tokenizer in use, whose pieces
    ``readable`` shows as a person reads them), each explained by every compared
    tokenizer too. A chunk of glassllm's is a chunk for each of its tokenizers, so each
    explains the chunk alone; a real model explains the chunk's characters (as a
    continuation of a text), its own chunks of them as one."""
    chunks = []
    for index, item in enumerate(explanation.chunks):
        others = [tok.explain_chunk(item.text, item.explanation.chunk) for tok in compared]
        own = _readable(item.explanation, readable)
        explained = ComparedChunk.from_explanations(index, item.start, item.end, [own, *others])
        chunks.append(PlacedChunk(item.line, item.text, explained))
    return chunks


def _explained_as_one(tokenizer: ModelTokenizer, text: str) -> ChunkExplanation:
    """A real model's explanation of ``text``, its chunks joined into one, readable."""
    parts = tokenizer.explain(text, at_start=False)
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
    return _readable(joined, tokenizer.readable)


def _readable(explanation: ChunkExplanation, readable: Callable[[str], str]) -> ChunkExplanation:
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


def compare_data(
    chunks: Sequence[PlacedChunk],
    totals: Sequence[ComparedCounts],
    position: Callable[[int, int], dict[str, int]],
) -> dict[str, Any]:
    """The comparison as JSON for editor integrations: ``totals`` (the tokenizer in use
    first), ``chunks`` in document order with each tokenizer's steps, and
    ``mostDifferent``, the chunk indices ordered by how differently they tokenize."""
    return {
        "totals": [
            {"tokenizer": t.tokenizer, "tokens": t.tokens, "chunks": t.chunks, "unknown": t.unknown} for t in totals
        ],
        "chunks": [
            {
                "chunk": chunk.chunk,
                "text": placed.text,
                "range": {"start": position(placed.line, chunk.start), "end": position(placed.line, chunk.end)},
                "spread": chunk.spread,
                "tokenizers": [
                    {
                        "tokenizer": total.tokenizer,
                        "pieces": list(pieces),
                        "ids": list(ids),
                        "steps": [
                            {"rank": s.rank, "pair": list(s.pair), "result": s.result, "count": s.count} for s in steps
                        ],
                    }
                    for total, pieces, ids, steps in zip(totals, chunk.pieces, chunk.ids, chunk.steps, strict=False)
                ],
            }
            for placed in chunks
            for chunk in [placed.compared]
        ],
        "mostDifferent": [chunk.index for chunk in by_difference([placed.compared for placed in chunks])],
    }
