"""Compared tokenizers: how the other tokenizers split what the user is looking at.

The ``glassllm.compareWith`` setting names tokenizers to show beside the one in use. Their
work is done only when asked, never on an edit: a hover asks for one chunk, ``glassllm/stats``
for the counts of a document or a range, the "Compare tokenizers" page for the chunks a
selection touches. A compared tokenizer (:class:`ComparedTokenizer`, one for every kind)
counts a document by the blocks of lines its :class:`~glassllm_server.line_tokenizer.LineTokenizer`
cuts it into, as a document is tokenized for it (a line each for glassllm's own, whose
chunks never cross a line break), and asks that line tokenizer how it splits and
explains a chunk of the tokenizer in use: what differs between kinds is there.

Blocks' counts are kept by their text, so after an edit only the edited lines are
counted again; and each document's totals follow its edits (see :class:`DocumentCounts`),
so a request after an edit adds up only the edited lines.
Everything works in lines and code-point columns; no pygls here.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from glassllm import PACKAGED, AnyTokenizer, ChunkExplanation, ComparedChunk, by_difference
from glassllm.caches import LruCache
from glassllm_server.document import ReadOnlyDocument
from glassllm_server.explanation import Explanation
from glassllm_server.gaps import Gaps
from glassllm_server.line_tokenizer import CHUNKS_SHIFT, UNKNOWN_SHIFT, line_tokenizer, readable_explanation

__all__ = [
    "CompareSet",
    "ComparedCounts",
    "ComparedTokenizer",
    "CountingElsewhere",
    "DocumentCounts",
    "PlacedChunk",
    "Settling",
    "compare_data",
    "compare_explanation",
    "default_compare_with",
]


# Chunks kept whole for hovers, a few thousand (docs/server.md, "Memory").
HOVER_CHUNK_LIMIT = 1 << 12
_TOKENS_MASK = (1 << UNKNOWN_SHIFT) - 1


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


class Settling(Protocol):
    """A child's count of a document: other versions take the counts of their lines of
    the same text from it."""

    async def settle(self, document: ReadOnlyDocument) -> None: ...


class CountingElsewhere(Protocol):
    """What counts a large part of a document in another process for a compared
    tokenizer (:class:`glassllm_server.compare_process.CountingChild`)."""

    def job(
        self,
        tokenizer: ComparedTokenizer,
        document: ReadOnlyDocument,
        live: Callable[[str], ReadOnlyDocument | None] | None = None,
    ) -> asyncio.Task[Settling | None] | None: ...

    def close(self) -> None: ...


class ComparedTokenizer:
    """A tokenizer to compare with, whatever its kind (see the module's docstring): what
    the hover, ``glassllm/stats`` and the "Compare tokenizers" page ask of it."""

    def __init__(self, tokenizer: AnyTokenizer, name: str, child: CountingElsewhere | None = None) -> None:
        self.tokenizer = tokenizer
        self.name = name  # "pt", "en" or a resolved path, as in glassllm/stats
        self.lines = line_tokenizer(tokenizer, name)
        # Counts a large pending part of a document in another process (None: never).
        self.child = child
        self._chunks: LruCache[str, tuple[tuple[str, ...], tuple[int, ...]]] = LruCache(HOVER_CHUNK_LIMIT)

    def document(self, document: ReadOnlyDocument) -> DocumentCounts:
        """This tokenizer's counts for ``document`` as it is (a snapshot keeps its own),
        carried through the document's edits from now on."""
        return document.line_state(self, self._new_counts)

    def _new_counts(self, line_count: int) -> DocumentCounts:
        return DocumentCounts(line_count, self.lines.lines_alone)

    def chunk(self, chunk: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """Readable pieces and IDs of a chunk of the tokenizer in use (normalized, spaces
        as ``▁``)."""
        cached = self._chunks.get(chunk)
        if cached is None:
            cached = self.lines.chunk_tokens(chunk)
            self._chunks.put(chunk, cached)
        return cached

    def explain_chunk(self, text: str, chunk: str) -> ChunkExplanation:
        """The explanation of a chunk of the tokenizer in use: its original ``text``, and
        ``chunk`` as that tokenizer merged it (normalized, spaces as ``▁``)."""
        return self.lines.explain_chunk(text, chunk)

    def count_from(self, counts: DocumentCounts, lines: Sequence[str], line: int) -> int:
        """Count the block that holds line ``line`` of ``lines`` into ``counts`` unless
        it is; the line after the last one counted."""
        return line + 1 if counts.in_block(line) else counts.count_block(self, lines, line)

    def block_of(self, lines: Sequence[str], line: int) -> tuple[int, int]:
        """The first line of the block that holds line ``line`` and the line after it."""
        can_cut = self.lines.can_cut
        first = line
        while first > 0 and not can_cut(lines[first - 1], lines[first]):
            first -= 1
        stop = line + 1
        while stop < len(lines) and not can_cut(lines[stop - 1], lines[stop]):
            stop += 1
        return first, stop

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
        ``counted``: the document's per-line counts, which the blocks wholly inside the
        range are taken from (and kept in); only the blocks at its edges are tokenized.
        ``chunks`` (the tokenizer in use's) is unused: each tokenizer counts its own."""
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
        block by block."""
        packed = 0
        line = start[0]
        while line <= end[0]:
            first, stop = self.block_of(lines, line)
            block = lines[first:stop]
            starts = list(itertools.accumulate(map(len, block), initial=0))
            low = starts[start[0] - first] + start[1] if start[0] >= first else 0
            high = starts[end[0] - first] + end[1] if end[0] < stop else starts[-1]
            packed += self.lines.count_range(block, low, high, first == 0)
            line = stop
        return packed

    def counts(self, lines: Sequence[str], chunks: int = 0) -> ComparedCounts:
        """Counts for the whole text ``lines`` (``chunks``, unused, as :meth:`counts_in`)."""
        counts = DocumentCounts(len(lines))
        counts.count_pending(self, lines, len(lines))
        return counts.totals(self.name)


class DocumentCounts:
    """A compared tokenizer's per-line counts for one version of a document, and their sum.

    Like the document's own totals: an edit's next version forgets the counts of the lines
    it replaced (:meth:`replaced`, called by the document), and :meth:`count_pending`
    counts the lines without one when a request needs the totals. So a request after an
    edit costs the edited lines, not a pass over the whole document.
    """

    def __init__(self, line_count: int, lines_alone: bool = False) -> None:
        # Whether a line's counts depend on its own text alone (see LineTokenizer.lines_alone).
        self._lines_alone = lines_alone
        self._counts: list[int | None] = [None] * line_count
        # The block each counted line was counted in; None where every line is a block
        # of its own (nothing to record: a list as long as the document, copied at each
        # edit a snapshot saw, would cost the typing).
        blocks: list[object | None] = [None] * (0 if lines_alone else line_count)
        self._blocks = None if lines_alone else blocks
        self._total = 0  # of the lines that have a count
        self._gaps = Gaps.everywhere(line_count)  # the lines without a count

    def replaced(self, first: int, old_lines: list[str], new_lines: list[str], in_place: bool) -> DocumentCounts:
        """The counts of the next version, where the lines from ``first`` on, ``old_lines``,
        were replaced by ``new_lines`` (and the whole blocks that held them: the edit can
        cut them); ``in_place``, this one's lists become its, edited.
        A block next to the edit is kept: cuts are decided by the two lines around them,
        so if the edit joins it to its lines, counting the edited lines' block counts it
        again."""
        counts = self._counts
        stop, new_count = first + len(old_lines), len(new_lines)
        replaced = counts[first:stop]
        following = DocumentCounts(0, self._lines_alone)
        following._counts = counts if in_place else counts.copy()
        following._total = self._total - sum(filter(None, replaced))
        following._gaps = self._gaps.replaced(replaced.count(None), first, stop, new_count)
        following._counts[first:stop] = [None] * new_count
        if self._blocks is None:
            # Every line is a block: one the edit left as it was (the lines around a
            # keystroke) keeps its count.
            kept = {line: count for line, count in zip(old_lines, replaced, strict=False) if count is not None}
            for number, line in enumerate(new_lines, first):
                count = following._counts[number] = kept.get(line)
                if count is not None:
                    following._total += count
                    following._gaps.filled()
            return following
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

    def count_pending(self, tokenizer: ComparedTokenizer, lines: Sequence[str], max_lines: int) -> bool:
        """Count up to ``max_lines`` lines of ``lines`` (this version's) that have no
        count (a whole block at a time); True when every line has one."""
        counts = self._counts
        counted = 0
        while True:
            line = self._gaps.first(counts)
            if line >= len(counts):
                return True
            if counted >= max_lines:
                return False
            counted += tokenizer.count_from(self, lines, line) - line

    def count_block(self, tokenizer: ComparedTokenizer, lines: Sequence[str], line: int) -> int:
        """Count the block that holds line ``line``; the line after it."""
        first, stop = tokenizer.block_of(lines, line)
        self._put_block(first, tokenizer.lines.count_block(lines[first:stop], first == 0))
        return stop

    def _put_block(self, first: int, block: Sequence[int]) -> None:
        """Give the lines of the block that starts at line ``first`` their counts ``block``."""
        counts = self._counts
        for number, count in enumerate(block, first):
            known = counts[number]
            if known is None:
                self._gaps.filled()
            self._total += count - (known or 0)
            counts[number] = count
        if self._blocks is not None:
            self._blocks[first : first + len(block)] = [object()] * len(block)

    def pending_run(self) -> tuple[int, int]:
        """The first line without a count and the line after the last one (both the
        number of lines when every line has one)."""
        counts = self._counts
        first = self._gaps.first(counts)
        if first >= len(counts):
            return first, first
        return first, self._gaps.last(counts) + 1

    def next_pending(self, line: int) -> int:
        """The first line from ``line`` on without a count (the number of lines when none)."""
        try:
            return self._counts.index(None, line)
        except ValueError:
            return len(self._counts)

    def put_counted(self, first: int, counts: Sequence[int], cuts: Sequence[int] | None) -> None:
        """Take the counts of the lines from ``first`` on counted elsewhere (in a child
        process) for this version: ``counts``, one a line, in blocks that start at the
        lines ``cuts`` (from ``first``; None: a line each)."""
        if cuts is None:
            own = self._counts
            stop = first + len(counts)
            replaced = own[first:stop]
            self._gaps.filled(replaced.count(None))
            self._total += sum(counts) - sum(filter(None, replaced))
            own[first:stop] = counts
            return
        bounds = [*cuts, len(counts)]
        for start, stop in itertools.pairwise(bounds):
            self._put_block(first + start, counts[start:stop])

    def put_known(self, tokenizer: ComparedTokenizer, lines: Sequence[str], line: int, known: dict[Any, Any]) -> int:
        """Give the block that holds line ``line`` of ``lines`` the counts ``known`` has
        for its text (see :meth:`Counted.known <glassllm_server.compare_process.Counted.known>`),
        if any; the line after it."""
        if self._blocks is None:
            count = known.get(lines[line])
            if count is not None:
                self._put_block(line, (count,))
            return line + 1
        first, stop = tokenizer.block_of(lines, line)
        found = known.get(("".join(lines[first:stop]), first == 0))
        if found is not None and len(found) == stop - first:
            self._put_block(first, found)
        return stop

    def whole_blocks(
        self, tokenizer: ComparedTokenizer, lines: Sequence[str], first: int, stop: int
    ) -> tuple[int, int, int]:
        """Of lines ``first..stop-1``, the run made of whole blocks, and
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
            else:
                line += 1

        def same(one: int, other: int) -> bool:
            return one == other if blocks is None else blocks[one] is blocks[other]

        low, high = first, stop
        if low == 0 or same(low - 1, low):
            edge = low
            while low < high and same(low, edge):
                low += 1
        if high < len(counts) and same(high, high - 1):
            edge = high - 1
            while high > low and same(high - 1, edge):
                high -= 1
        return low, high, sum(filter(None, counts[low:high]))

    def line_of_token(self, index: int) -> tuple[int, int]:
        """The line token number ``index`` (0-based) of the document starts on, and how
        many tokens start before that line, once :meth:`count_pending` is done."""
        before = 0
        for line, packed in enumerate(self._counts):
            tokens = (packed or 0) & _TOKENS_MASK
            if before + tokens > index:
                return line, before
            before += tokens
        raise IndexError(index)

    def in_block(self, line: int) -> bool:
        """Whether line ``line`` has a count, counted in its block."""
        return self._counts[line] is not None and (self._blocks is None or self._blocks[line] is not None)

    def totals(self, name: str) -> ComparedCounts:
        """The document's counts, once :meth:`count_pending` is done."""
        return _unpacked(name, self._total)


def _unpacked(name: str, total: int) -> ComparedCounts:
    """Counts packed as a line's are (see :data:`~glassllm_server.line_tokenizer.UNKNOWN_SHIFT`)."""
    return ComparedCounts(name, total & _TOKENS_MASK, total >> CHUNKS_SHIFT, (total >> UNKNOWN_SHIFT) & _TOKENS_MASK)


class CompareSet:
    """The compared tokenizers, kept while the setting names them, and those that failed
    to load. Loading is the caller's (the server loads files off the event loop)."""

    def __init__(self, elsewhere: Callable[[str, bool], CountingElsewhere] | None = None) -> None:
        # (name, whether a real model matches special-token text) → its compared tokenizer
        self._loaded: dict[tuple[str, bool], ComparedTokenizer] = {}
        self._failed: set[str] = set()
        # Given, ``elsewhere(name, match_specials)`` counts large parts of documents for
        # a compared tokenizer in another process.
        self._elsewhere = elsewhere

    def forget_failures(self) -> None:
        """Try files that failed to load again (the settings changed: they may be fixed)."""
        self._failed.clear()

    def add(self, name: str, tokenizer: AnyTokenizer, match_specials: bool = False) -> None:
        """``name``'s tokenizer, loaded for the setting ``match_specials`` (which only a
        real model's heeds)."""
        child = None if self._elsewhere is None else self._elsewhere(name, match_specials)
        previous = self._loaded.get((name, match_specials))
        if previous is not None and previous.child is not None:
            previous.child.close()
        self._loaded[(name, match_specials)] = ComparedTokenizer(tokenizer, name, child)

    def fail(self, name: str) -> None:
        """``name`` did not load: left out until :meth:`forget_failures`."""
        self._failed.add(name)

    def get(
        self,
        names: Sequence[str],
        current: str,
        load: Callable[[str, bool], AnyTokenizer | None],
        match_specials: bool = False,
    ) -> list[ComparedTokenizer]:
        """The tokenizers ``names`` (resolved: "pt", "en", "hf:…" or absolute paths),
        without ``current`` (the one in use) or repeats, real models reading special-token
        text as ``match_specials`` says. One neither loaded nor failed is asked of
        ``load(name, match_specials)``: its tokenizer, or None while it is not ready (left
        out for now). Tokenizers no longer named are let go."""
        wanted = [(name, match_specials) for name in dict.fromkeys(names) if name != current]
        compared: list[ComparedTokenizer] = []
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
            child = self._loaded.pop(key).child
            if child is not None:
                child.close()
        return compared

    def close(self) -> None:
        """Stop the compared tokenizers' child processes (the server stops)."""
        for compared in self._loaded.values():
            if compared.child is not None:
                compared.child.close()


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
    explanation: Explanation, compared: Sequence[ComparedTokenizer], readable: Callable[[str], str] = str
) -> list[PlacedChunk]:
    """The chunks of a merge explanation (by the tokenizer in use, whose pieces
    ``readable`` shows as a person reads them), each explained by every compared
    tokenizer too (see :meth:`LineTokenizer.explain_chunk
    <glassllm_server.line_tokenizer.LineTokenizer.explain_chunk>`)."""
    chunks = []
    for index, item in enumerate(explanation.chunks):
        others = [tok.explain_chunk(item.text, item.explanation.chunk) for tok in compared]
        own = readable_explanation(item.explanation, readable)
        explained = ComparedChunk.from_explanations(index, item.start, item.end, [own, *others])
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
