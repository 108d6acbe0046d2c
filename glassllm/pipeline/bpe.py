"""Stage 3 of the pipeline: byte-pair-encoding merges over Unicode characters.

Learning (Sennrich et al., 2015, over characters instead of bytes): start with every
chunk split into characters. Count every adjacent pair of symbols, weighted by how often
the chunk occurs. Take the most frequent pair (ties: the alphabetically smallest pair),
replace its occurrences in every chunk left to right without overlap, and repeat.

    while a pair remains and the vocabulary has room:
        counts = Counter()  # each adjacent pair of each chunk, times the chunk's count
        for symbols, count in chunks:
            for pair in pairwise(symbols):
                counts[pair] += count
        pair = min(counts, key=lambda p: (-counts[p], p))
        chunks = [(merge(symbols, pair), count) for symbols, count in chunks]

That loop recounts everything for each of ~1,000 merges. :func:`learn_merges` computes
exactly the same merges incrementally: a pair index says which chunks hold each pair,
only those chunks are re-merged and recounted, and a heap with lazy deletion finds the
best pair. The tests keep the loop above as the reference and compare on random corpora.

Applying (:func:`apply_merges`): split a chunk into characters, then repeatedly merge every
occurrence of the adjacent pair with the lowest rank (the earliest learned), until no
learned pair is left. Each such round is one *step* of the explanation.
"""

from __future__ import annotations

import gc
import heapq
import sys
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from itertools import pairwise, repeat

__all__ = ["Pair", "apply_merges", "collector_paused", "learn_merges", "merge", "merge_pieces"]

Pair = tuple[str, str]


def merge(symbols: list[str], pair: Pair) -> list[str]:
    """Replace each occurrence of ``pair`` in ``symbols``, left to right, without overlap."""
    first, second = pair
    merged: list[str] = []
    index, last = 0, len(symbols) - 1
    while index <= last:
        if index < last and symbols[index] == first and symbols[index + 1] == second:
            merged.append(first + second)
            index += 2
        else:
            merged.append(symbols[index])
            index += 1
    return merged


def apply_merges(chunk: str, ranks: Mapping[Pair, int]) -> tuple[list[str], list[Pair]]:
    """Split ``chunk`` into pieces with the learned ``ranks``.

    Returns the final pieces and the pair merged at each step, in order (so the states
    of the explanation can be replayed with :func:`merge`).
    """
    applied: list[Pair] = []
    return merge_pieces(chunk, ranks, applied), applied


def merge_pieces(chunk: str, ranks: Mapping[Pair, int], applied: list[Pair] | None = None) -> list[str]:
    """:func:`apply_merges`' pieces alone (what encoding needs), each step's pair appended
    to ``applied`` if given."""
    symbols = list(chunk)
    get = ranks.get
    pair_ranks = list(map(get, pairwise(symbols), repeat(_NEVER)))
    while pair_ranks:
        best = min(pair_ranks)
        if best == _NEVER:
            break
        at = pair_ranks.index(best)
        if applied is not None:
            applied.append((symbols[at], symbols[at + 1]))
        if pair_ranks.count(best) > 1:  # the pair may occur again: merge it everywhere
            symbols = merge(symbols, (symbols[at], symbols[at + 1]))
            pair_ranks = list(map(get, pairwise(symbols), repeat(_NEVER)))
            continue
        # Its only occurrence: only the pairs on either side change (the common case,
        # where a step costs two lookups instead of a pass over the chunk).
        symbols[at : at + 2] = (symbols[at] + symbols[at + 1],)
        del pair_ranks[at]
        if at:
            pair_ranks[at - 1] = get((symbols[at - 1], symbols[at]), _NEVER)
        if at < len(pair_ranks):
            pair_ranks[at] = get((symbols[at], symbols[at + 1]), _NEVER)
    return symbols


_NEVER = sys.maxsize  # the rank of a pair that was never learned

Progress = Callable[[int, int], None]


# How many pauses are open, and whether the collector ran before the first: threads that
# pause at once (the server encodes on its loop and in a worker) must not leave it off.
_pause_lock = threading.Lock()
_pauses = 0
_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while allocating many acyclic containers.

    Learning merges (lists of symbols, pair tuples) and building token records hold only
    strings and ints, so they never form a cycle and reference counting frees all of it;
    yet the collections that allocating millions of them triggers walk every live
    container again and again: a third of the time of learning merges on a large corpus,
    more than half of that of ``encode_spans``. Pauses may overlap, in one thread or
    several: the collector runs again when the last one ends, if it ran before the first.
    """
    global _pauses, _was_enabled
    with _pause_lock:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _was_enabled:
                gc.enable()


def learn_merges(
    chunk_counts: Mapping[str, int], max_merges: int, progress: Progress | None = None
) -> tuple[list[Pair], list[int]]:
    """Learn up to ``max_merges`` merges from chunk frequencies.

    Returns the merges in order and, for each, the pair's count when it was chosen.
    ``progress(done, max_merges)`` is called after each merge (and ``(done, done)`` when
    the pairs run out first); an exception raised by it stops training and propagates.
    """
    with collector_paused():
        return _learn(chunk_counts, max_merges, progress)


def _learn(chunk_counts: Mapping[str, int], max_merges: int, progress: Progress | None) -> tuple[list[Pair], list[int]]:
    words: list[list[str]] = []
    freqs: list[int] = []
    for chunk, freq in chunk_counts.items():
        if len(chunk) > 1:
            words.append(list(chunk))
            freqs.append(freq)

    counts: defaultdict[Pair, int] = defaultdict(int)
    where: defaultdict[Pair, list[int]] = defaultdict(list)
    for index, symbols in enumerate(words):
        freq = freqs[index]
        for pair in pairwise(symbols):
            counts[pair] += freq
            where[pair].append(index)
    # Every pair with a count has a heap entry at least as large as its count; entries
    # that have fallen behind are re-pushed when they surface (lazy deletion).
    heap = [(-count, pair) for pair, count in counts.items()]
    heapq.heapify(heap)

    merges: list[Pair] = []
    merge_counts: list[int] = []
    while len(merges) < max_merges and heap:
        negative, pair = heapq.heappop(heap)
        current = counts.get(pair, 0)
        if current != -negative:
            if 0 < current < -negative:
                heapq.heappush(heap, (-current, pair))
            continue
        merges.append(pair)
        merge_counts.append(current)
        for grown in _merge_everywhere(pair, words, freqs, counts, where):
            heapq.heappush(heap, (-counts[grown], grown))
        if progress is not None:
            progress(len(merges), max_merges)
    if progress is not None and len(merges) < max_merges:
        progress(len(merges), len(merges))  # ran out of pairs: this is 100%
    return merges, merge_counts


def _merge_everywhere(
    pair: Pair,
    words: list[list[str]],
    freqs: list[int],
    counts: defaultdict[Pair, int],
    where: defaultdict[Pair, list[int]],
) -> set[Pair]:
    """Merge ``pair`` in every chunk that holds it, updating pair counts and the index.

    This is :func:`merge` plus bookkeeping: at each occurrence ``a b`` (between ``x`` and
    ``y``) the pairs ``(x, a)`` and ``(b, y)`` lose the chunk's frequency and ``(x, ab)``
    and ``(ab, y)`` gain it; when two occurrences touch (``a b a b``), the pair between
    them becomes ``(ab, ab)`` once. Returns the pairs whose counts grew.
    """
    first, second = pair
    joined = first + second
    grown: set[Pair] = set()
    for index in where.pop(pair, ()):
        symbols = words[index]
        last = len(symbols) - 1
        freq = freqs[index]
        merged: list[str] = []
        copied = 0  # symbols before this index are already in ``merged``
        at = 0
        while at < last:
            if symbols[at] != first or symbols[at + 1] != second:
                at += 1
                continue
            merged.extend(symbols[copied:at])
            if at > 0:
                counts[(symbols[at - 1], first)] -= freq
                left = (joined, joined) if at == copied and merged else (symbols[at - 1], joined)
                counts[left] += freq
                where[left].append(index)
                grown.add(left)
            merged.append(joined)
            copied = at = at + 2
            # The pair to the right is handled here unless another occurrence starts
            # there, whose left side then turns ``(b, a)`` into ``(ab, ab)``.
            if copied <= last and not (copied < last and symbols[copied] == first and symbols[copied + 1] == second):
                following = symbols[copied]
                counts[(second, following)] -= freq
                right = (joined, following)
                counts[right] += freq
                where[right].append(index)
                grown.add(right)
        if copied:
            merged.extend(symbols[copied:])
            words[index] = merged
    counts.pop(pair, None)
    return grown
