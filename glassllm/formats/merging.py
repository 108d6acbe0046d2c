"""Stage 3 for real models: merge adjacent symbols, the best pair first, until none merges.

The three formats differ only in how they rank a pair of adjacent symbols:

- Hugging Face BPE: the index of the pair in the file's ``merges`` (lower first);
- tiktoken-style ranks (Tekken): the rank of the merged bytes as a token (lower first);
- SentencePiece BPE: the score of the merged piece (higher first), when it is a piece.

Each applies one merge at a time: the best-ranked adjacent pair, the leftmost one among
equals, as ``tokenizers``' word merge, tiktoken's ``_byte_pair_merge`` and SentencePiece's
agenda do. :func:`merge_symbols` keeps the symbols in a linked list and the candidate
pairs in a heap, so a long chunk (a run of 100,000 letters) costs ``n log n``, not ``n²``.
Where a pair's priority is a table's entry for ``left + separator + right`` (every format
here), :func:`merge_by_table` finds the same merges in the way tiktoken does: the
priorities in a list, the best found by ``min`` in C, only the two pairs beside a merge
looked up again. Quadratic, but three times faster on the short chunks that make up text.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping
from itertools import pairwise, repeat
from math import inf
from operator import add
from typing import NamedTuple

__all__ = ["Merge", "PairRank", "merge_by_table", "merge_symbols"]

# The priority of merging ``left`` and ``right`` (lower first), or ``None`` when they do not merge.
PairRank = Callable[[str, str], "float | None"]


class Merge(NamedTuple):
    """One merge of :func:`merge_symbols`: ``left + right`` at symbol ``position`` (an
    index into the initial symbols) became ``left + right``, with this ``priority``."""

    priority: float
    position: int
    left: str
    right: str


def merge_symbols(
    symbols: list[str], rank: PairRank, record: bool = False, join: Callable[[str, str], str] = add
) -> tuple[list[str], list[Merge]]:
    """Merge ``symbols`` by ``rank`` until no adjacent pair has one; the final symbols,
    and each merge in order when ``record`` is set (``[]`` otherwise). ``join``: the
    symbol two make (HF's BPE with a ``continuing_subword_prefix`` drops the right one's)."""
    count = len(symbols)
    if count < 2:
        return list(symbols), []
    current: list[str | None] = list(symbols)
    following = list(range(1, count + 1))
    preceding = list(range(-1, count - 1))
    heap: list[tuple[float, int, str, str]] = []
    for index in range(count - 1):
        left, right = symbols[index], symbols[index + 1]
        priority = rank(left, right)
        if priority is not None:
            heap.append((priority, index, left, right))
    heapq.heapify(heap)
    merges: list[Merge] = []
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        priority, index, left, right = pop(heap)
        after = following[index]
        # An entry is stale when either side has merged since it was pushed: a symbol
        # only grows, or is absorbed (None), so comparing the strings tells.
        if current[index] != left or after >= count or current[after] != right:
            continue
        joined = join(left, right)
        current[index] = joined
        current[after] = None
        following[index] = beyond = following[after]
        if beyond < count:
            preceding[beyond] = index
        if record:
            merges.append(Merge(priority, index, left, right))
        before = preceding[index]
        if before >= 0:
            neighbour = current[before]
            assert neighbour is not None
            found = rank(neighbour, joined)
            if found is not None:
                push(heap, (found, before, neighbour, joined))
        if beyond < count:
            neighbour = current[beyond]
            assert neighbour is not None
            found = rank(joined, neighbour)
            if found is not None:
                push(heap, (found, index, joined, neighbour))
    return [symbol for symbol in current if symbol is not None], merges


def merge_by_table(symbols: list[str], priorities: Mapping[str, float], separator: str) -> list[str]:
    """:func:`merge_symbols`'s final symbols where the priority of merging ``left`` and
    ``right`` is ``priorities[left + separator + right]`` (no entry: they do not merge).

    Each step merges the leftmost pair of the best priority, as the heap does."""
    parts = list(symbols)
    get = priorities.get
    found = list(map(get, map(separator.join, pairwise(parts)), repeat(inf)))
    while found:
        best = min(found)
        if best == inf:
            break
        at = found.index(best)
        parts[at : at + 2] = (parts[at] + parts[at + 1],)
        del found[at]
        if at:
            found[at - 1] = get(parts[at - 1] + separator + parts[at], inf)
        if at < len(found):
            found[at] = get(parts[at] + separator + parts[at + 1], inf)
    return parts
