"""Compared tokenizers: how the other tokenizers split what the user is looking at.

The ``glassllm.compareWith`` setting names tokenizers to show beside the one in use. Their
work is done only when asked, never on an edit: a hover asks for one chunk, ``glassllm/stats``
for the counts of a document or a range, the "Compare tokenizers" page for the chunks a
selection touches. Every glassllm tokenizer shares the chunk rule, so the chunks of the
tokenizer in use are the chunks of every compared one and only the merges differ.

Whole lines are counted once per distinct line text and kept, so after an edit only the
edited lines are tokenized again; and each document's totals follow its edits (see
:class:`DocumentCounts`), so a request after an edit adds up only the edited lines.
Everything works in lines and code-point columns; no pygls here.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from glassllm import PACKAGED, ComparedChunk, Tokenizer, by_difference
from glassllm.bpe import apply_merges
from glassllm.caches import LruCache
from glassllm.chunks import pre_tokenize
from glassllm.tokenizer import SPECIALS, UNK_ID
from glassllm_server.document import LONG_LINE, Document, segment_bounds
from glassllm_server.explanation import Explanation

__all__ = [
    "COMPARE_TOKENIZERS",
    "CompareSet",
    "ComparedCounts",
    "ComparedTokenizer",
    "DocumentCounts",
    "PlacedChunk",
    "compare_data",
    "compare_explanation",
    "default_compare_with",
]

COMPARE_TOKENIZERS = "glassllm.compareTokenizers"

# The caches' bounds (docs/server.md, "Memory"): lines' counts by the lines'
# characters, as the document's line cache; chunks' counts (about 90 bytes each) as many
# as the document's chunk cache; chunks kept whole for hovers, a few thousand.
LINE_CACHE_CHARACTERS = 1 << 20
CHUNK_COUNT_LIMIT = 1 << 15
HOVER_CHUNK_LIMIT = 1 << 12
# A line's counts are one int, ``tokens + (unknown << 32)``, so a document's totals are
# one ``sum`` over the cached values, in C: a few milliseconds for 30,000 lines.
_UNKNOWN_SHIFT = 32
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


class ComparedTokenizer:
    """A tokenizer to compare with, and what it has already counted."""

    def __init__(self, tokenizer: Tokenizer, name: str) -> None:
        self.tokenizer = tokenizer
        self.name = name  # "pt", "en" or a resolved path, as in glassllm/stats
        self._lines: LruCache[str, int] = LruCache(LINE_CACHE_CHARACTERS, len)
        self._chunks: LruCache[str, tuple[tuple[str, ...], tuple[int, ...]]] = LruCache(HOVER_CHUNK_LIMIT)
        # Counting keeps a count per chunk, not its pieces and IDs as encoding would (a
        # fifth of the memory on a large document): what BPE makes of a chunk is in
        # the vocabulary, or an unknown character.
        self._chunk_counts: LruCache[str, int] = LruCache(CHUNK_COUNT_LIMIT)
        self._known = frozenset(tokenizer.vocab[len(SPECIALS) :])

    def document(self, document: Document) -> DocumentCounts:
        """This tokenizer's counts for ``document`` as it is (a snapshot keeps its own),
        carried through the document's edits from now on."""
        return document.line_state(self, DocumentCounts)

    def chunk(self, chunk: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """Pieces and IDs of one chunk (already normalized, spaces as ``▁``)."""
        cached = self._chunks.get(chunk)
        if cached is None:
            spans = self.tokenizer.encode_spans(chunk)
            cached = (tuple(span.piece for span in spans), tuple(span.id for span in spans))
            self._chunks.put(chunk, cached)
        return cached

    def missing(self, lines: Sequence[str]) -> list[str]:
        """The lines of ``lines`` not counted yet (each distinct text once)."""
        found = list(map(self._lines.recent.get, lines))
        if None not in found:
            return []
        get = self._lines.get
        return list(
            dict.fromkeys(
                line for line, count in zip(lines, found, strict=False) if count is None and get(line) is None
            )
        )

    def count_line(self, line: str) -> int:
        """Count one line (packed as ``tokens + (unknown << 32)``) and keep the count.

        A long line is counted segment by segment (cut where neither NFC nor the chunk
        rule joins the sides, as the document cuts it), and the segments are kept
        instead of the line: an edit in it recounts the segment it changed, and the
        cache does not fill with copies of the line."""
        count = self._lines.get(line)
        if count is not None:
            return count
        if len(line) > LONG_LINE and len(bounds := segment_bounds(line)) > 2:
            return sum(self.count_line(line[start:stop]) for start, stop in itertools.pairwise(bounds))
        count = sum(map(self._count_chunk, pre_tokenize(line)))
        self._lines.put(line, count)
        return count

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

    def counts(self, lines: Sequence[str], chunks: int) -> ComparedCounts:
        """Counts for whole lines; ``chunks`` is their chunk count (the same for every
        tokenizer). Lines not counted yet are counted now: see :meth:`missing`."""
        found = [count for count in map(self._lines.recent.get, lines) if count is not None]
        if len(found) < len(lines):
            found = list(map(self.count_line, lines))
        total = sum(found)
        return ComparedCounts(self.name, total & _TOKENS_MASK, chunks, total >> _UNKNOWN_SHIFT)

    def counts_in(
        self, line_text: Callable[[int], str], start: tuple[int, int], end: tuple[int, int], chunks: int
    ) -> ComparedCounts:
        """Counts of the tokens that overlap ``[start, end)`` (line, column), as
        ``glassllm/stats`` counts a range: a token cut by the range's edge counts."""
        tokens = unknown = 0
        whole: list[str] = []
        for line in range(start[0], end[0] + 1):
            text = line_text(line)
            low = start[1] if line == start[0] else 0
            high = end[1] if line == end[0] else len(text)
            if low >= high:
                continue
            if low == 0 and high >= len(text):
                whole.append(text)
                continue
            for span in _overlapping(self.tokenizer, text, low, high):
                tokens += 1
                unknown += span.id == UNK_ID
        counted = self.counts(whole, 0)
        return ComparedCounts(self.name, tokens + counted.tokens, chunks, unknown + counted.unknown)


class DocumentCounts:
    """A compared tokenizer's per-line counts for one version of a document, and their sum.

    Like the document's own totals: an edit's next version forgets the counts of the lines
    it replaced (:meth:`replaced`, called by the document), and :meth:`count_pending`
    counts the lines without one when a request needs the totals. So a request after an
    edit costs the edited lines, not a pass over the whole document.
    """

    def __init__(self, line_count: int) -> None:
        self._counts: list[int | None] = [None] * line_count
        self._total = 0  # of the lines that have a count
        self._pending = 0  # no line before this one lacks its count

    def replaced(self, first: int, stop: int, new_count: int) -> DocumentCounts:
        """The counts of the next version, where lines ``first..stop-1`` were replaced by
        ``new_count`` lines."""
        counts = self._counts
        following = DocumentCounts(0)
        following._counts = [*counts[:first], *([None] * new_count), *counts[stop:]]
        following._total = self._total - sum(count for count in counts[first:stop] if count is not None)
        following._pending = min(self._pending, first)
        return following

    def count_pending(self, tokenizer: ComparedTokenizer, lines: Sequence[str], max_lines: int) -> bool:
        """Count up to ``max_lines`` lines of ``lines`` (this version's) that have no
        count; True when every line has one."""
        counts = self._counts
        counted = 0
        while True:
            try:
                # list.index runs in C: finding the few uncounted lines skips the rest fast.
                self._pending = counts.index(None, self._pending)
            except ValueError:
                self._pending = len(counts)
                return True
            if counted == max_lines:
                return False
            count = tokenizer.count_line(lines[self._pending])
            counts[self._pending] = count
            self._total += count
            counted += 1

    def totals(self, name: str, chunks: int) -> ComparedCounts:
        """The document's counts, once :meth:`count_pending` is done."""
        total = self._total
        return ComparedCounts(name, total & _TOKENS_MASK, chunks, total >> _UNKNOWN_SHIFT)


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
        self._loaded: dict[str, ComparedTokenizer] = {}
        self._failed: set[str] = set()

    def forget_failures(self) -> None:
        """Try files that failed to load again (the settings changed: they may be fixed)."""
        self._failed.clear()

    def add(self, name: str, tokenizer: Tokenizer) -> None:
        """``name``'s tokenizer, loaded."""
        self._loaded[name] = ComparedTokenizer(tokenizer, name)

    def fail(self, name: str) -> None:
        """``name`` did not load: left out until :meth:`forget_failures`."""
        self._failed.add(name)

    def get(
        self, names: Sequence[str], current: str, load: Callable[[str], Tokenizer | None]
    ) -> list[ComparedTokenizer]:
        """The tokenizers ``names`` (resolved: "pt", "en" or absolute paths), without
        ``current`` (the one in use) or repeats. One neither loaded nor failed is asked of
        ``load``: its tokenizer, or None while it is not ready (left out for now).
        Tokenizers no longer named are let go."""
        wanted = [name for name in dict.fromkeys(names) if name != current]
        compared: list[ComparedTokenizer] = []
        for name in wanted:
            if name in self._failed:
                continue
            if name not in self._loaded:
                tokenizer = load(name)
                if tokenizer is None:
                    continue
                self.add(name, tokenizer)
            compared.append(self._loaded[name])
        for name in set(self._loaded) - set(wanted):
            del self._loaded[name]
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


def compare_explanation(explanation: Explanation, compared: Sequence[ComparedTokenizer]) -> list[PlacedChunk]:
    """The chunks of a merge explanation (by the tokenizer in use), each explained by
    every compared tokenizer too. A chunk is a chunk for every tokenizer, so each
    compared tokenizer explains the chunk's text alone."""
    chunks = []
    for index, item in enumerate(explanation.chunks):
        others = [tok.tokenizer.explain(item.explanation.chunk)[0] for tok in compared]
        explained = ComparedChunk.from_explanations(index, item.start, item.end, [item.explanation, *others])
        chunks.append(PlacedChunk(item.line, item.text, explained))
    return chunks


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
