"""Corpus counting: how often each chunk occurs in texts and files, counted in parallel.

Training needs only chunk counts (see :mod:`glassllm.pipeline.chunks` for the rule that cuts
text into chunks), and counts of parts sum to the count of the whole, so a corpus can be
counted in pieces: a large text in parts cut after a line break, each in a forked
process; files in byte ranges cut after a ``\\n`` byte, a block at a time, so memory
stays small whatever the corpus size.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import signal
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from glassllm.pipeline.chunks import CHUNK_PATTERN, SPACE, mark_spaces
from glassllm.pipeline.normalize import nfc
from glassllm.pipeline.two_cores import fork_is_safe
from glassllm.shown.problems import problem
from glassllm.training.corpus import Part, corpus_files, corpus_parts, file_size, is_url, read_part, reading

__all__ = ["count_chunks", "count_files", "count_part"]


# Text is normalized, marked and chunked this many characters at a time (cut at a line
# break), so counting never holds more than a few copies of one block, whatever the corpus.
_BLOCK = 1 << 20
# Files are counted in parts cut after a line break, about four per process (so that one
# large file spreads over several processes too, and a process that falls behind delays
# little), each at most this many bytes.
_PART_BYTES = 1 << 26
# Below this many characters, starting worker processes costs more than it saves.
_PARALLEL_FROM = 1 << 20


def count_chunks(texts: str | Iterable[str], *, jobs: int | None = None) -> Counter[str]:
    """How often each chunk occurs: ``Counter(pre_tokenize(text))`` for one text, and the
    sum of that over the texts for several.

    Texts are counted one by one, so no chunk spans two of them and NFC never composes
    across the seam: counting ``[a, b]`` equals counting ``a + b`` whenever ``a`` ends
    with a line break (chunks never cross one). Counts of parts can be summed anywhere
    (``Counter.update``, ``+``) and passed to :meth:`Tokenizer.train_from_counts`.

    ``jobs`` is the number of processes to count in; ``None`` means one per core (at
    most 8) for a list of texts, or a text, of a megabyte or more (other iterables are
    counted in place as they come). Worker processes are forked, which is only
    safe while this process has a single thread; otherwise, or without ``fork``, it
    counts in place.
    """
    if isinstance(texts, str):
        texts = [texts]
    elif jobs is not None and jobs > 1:
        texts = list(texts)
    # Texts that come one by one (a generator) are counted as they come, in place,
    # unless ``jobs`` asks for processes.
    size = sum(map(len, texts)) if isinstance(texts, (list, tuple)) else 0
    workers = _workers(jobs, size)
    if workers < 2 or not fork_is_safe():
        tally = _Tally()
        for text in texts:
            _count_into(tally, text)
        return tally.chunks()
    texts = list(texts)
    # Forked workers see ``texts`` without a copy through the pipe: they get offsets.
    global _SHARED
    _SHARED = texts
    try:
        parts = [(index, start, end) for index, text in enumerate(texts) for start, end in _line_parts(text, workers)]
        with multiprocessing.get_context("fork").Pool(workers, initializer=_default_signals) as pool:
            return _sum(pool.imap_unordered(_count_shared, parts))
    finally:
        _SHARED = []


def count_files(
    paths: Iterable[str | Path],
    *,
    jobs: int | None = 1,
    field: str | None = None,
    client: Any = None,
    progress: Progress | None = None,
) -> Counter[str]:
    """Count the chunks of a corpus: files, folders and glob patterns, plain or compressed
    text, JSON Lines or Parquet (see :mod:`glassllm.training.corpus`), each file (or record) a
    text of its own (see :func:`count_chunks`).

    Counts in ``jobs`` processes (``None``: one per core, at most 8), or, when a Dask
    ``client`` (``distributed.Client``) is given, on its cluster's workers instead (see
    :mod:`glassllm.training.cluster`). ``field`` names the
    text of JSON Lines and Parquet records. ``progress(done, total)`` is told of the
    bytes read, every quarter of a second or so.

    Files are read in parts cut after a line break, a block at a time, so memory stays
    small however large the corpus. Raises ``OSError`` for a file that cannot be read and
    ``ValueError``, naming the file and the line or row, for text that is not UTF-8 or a
    record without the field.
    """
    files = corpus_files(paths)
    if client is not None:
        # Workers may run elsewhere: they get absolute paths.
        files = [path if is_url(path) else os.path.abspath(path) for path in files]
    size = 0
    for path in files:
        with reading(path):
            size += file_size(path)
    if client is not None:
        workers = max(1, sum(client.nthreads().values()))  # tasks the cluster runs at once
        # Smaller parts than for processes: a part's end is what Dask reports progress by.
        part_bytes = min(_PART_BYTES, max(_BLOCK, size // (16 * workers)))
    else:
        workers = _workers(jobs, size)
        part_bytes = min(_PART_BYTES, max(_BLOCK, size // (4 * workers)))
    parts = corpus_parts(files, part_bytes, field)
    done = _Done(size, progress)
    if client is not None:
        from glassllm.training.cluster import count_parts_on_dask

        total = count_parts_on_dask(parts, client, count_part, done.add)
    else:
        total = _count_parts(parts, min(workers, len(parts)), done)
    done.finish()
    return total


Progress = Callable[[int, int], None]


class _Done:
    """Bytes read so far, told to ``progress`` at most every quarter of a second."""

    def __init__(self, total: int, progress: Progress | None) -> None:
        self.total, self.progress = total, progress
        self.bytes = 0
        self.told = 0.0

    def add(self, count: int) -> None:
        self.bytes += count
        self.tell()

    def tell(self, shared: int | None = None) -> None:
        if shared is not None:
            self.bytes = shared
        now = time.monotonic()
        if self.progress is not None and now - self.told >= 0.25:
            self.told = now
            self.progress(min(self.bytes, self.total), self.total)

    def finish(self) -> None:
        if self.progress is not None:
            self.progress(self.total, self.total)


def _count_parts(parts: list[Part], workers: int, done: _Done) -> Counter[str]:
    if workers < 2:
        total: Counter[str] = Counter()
        for part in parts:
            total.update(count_part(part, done.add))
        return total
    start_method = "fork" if fork_is_safe() else "spawn"
    context = multiprocessing.get_context(start_method)
    shared = context.Value("q", 0)
    with context.Pool(workers, initializer=_start_worker, initargs=(shared,)) as pool:
        results = pool.imap_unordered(_count_part_telling, parts)
        total = Counter()
        while True:
            try:
                total.update(results.next(timeout=0.25))
            except StopIteration:
                return total
            except multiprocessing.TimeoutError:
                pass
            done.tell(shared.value)


def count_part(part: Part, progress: Callable[[int], None] | None = None) -> Counter[str]:
    """The chunk counts of one part of a corpus (see :func:`glassllm.training.corpus.corpus_parts`).
    ``progress(n)`` is told of each ``n`` bytes read."""
    tally = _Tally()
    joins = 0
    for text, joined in read_part(part, progress):
        tally.add(mark_spaces(nfc(text)))
        joins += joined
    counts = tally.chunks()
    if joins:
        # The line breaks put between records are not the corpus's.
        counts["\n"] -= joins
        if not counts["\n"]:
            del counts["\n"]
    return counts


# In a pool's worker: where it adds the bytes it has read.
_READ: Any = None


def _start_worker(shared: Any) -> None:
    global _READ
    _READ = shared
    _default_signals()


def _count_part_telling(part: Part) -> Counter[str]:
    def tell(count: int) -> None:
        with _READ.get_lock():
            _READ.value += count

    return count_part(part, tell)


def _default_signals() -> None:
    """In a worker: let SIGTERM end it. A forked worker inherits the parent's handlers, and
    one that only sets a flag (the server's training process has one) would keep the
    worker alive when the pool terminates it, and the pool waiting forever."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _workers(jobs: int | None, size: int) -> int:
    if jobs is not None:
        if jobs < 1:
            raise problem(ValueError, "count.jobs", jobs=jobs)
        return jobs
    return min(os.cpu_count() or 1, 8) if size >= _PARALLEL_FROM else 1


def _sum(counters: Iterable[Counter[str]]) -> Counter[str]:
    total: Counter[str] = Counter()
    for counter in counters:
        total.update(counter)
    return total


class _Tally:
    """Counts the chunks of marked texts, with a fifth less work than ``Counter(findall(text))``.

    Prose repeats its words, so each text is cut at every marker (``str.split``, in C),
    the pieces are counted, and only distinct pieces go through the regex, at the end.
    That is exact because the regex never looks behind, and a marker followed by a
    letter, digit or symbol always starts a chunk (no rule takes a marker after anything
    but a marker), while one followed by whitespace or the end is a chunk of its own:
    so ``▁`` + each piece is chunked alone as within the whole text. Only runs of two
    or more markers (rule 5) span pieces; they are found apart and corrected from
    single markers to one run.
    """

    def __init__(self) -> None:
        self.pieces: Counter[str] = Counter()  # pieces that follow a marker
        self.direct: Counter[str] = Counter()  # chunks counted as such
        self.surplus = 0  # single markers among the pieces' chunks that belong to runs

    def add(self, marked: str) -> None:
        pieces = marked.split(SPACE)
        self.pieces.update(pieces)
        first = pieces[0]  # the one piece no marker precedes
        self.pieces[first] -= 1
        direct = self.direct
        direct.update(CHUNK_PATTERN.findall(first))
        if SPACE + SPACE in marked:
            for run in _RUNS.finditer(marked):
                length = run.end() - run.start()
                following = marked[run.end() : run.end() + 1]
                if following and not following.isspace():
                    length -= 1  # the last marker starts the chunk that follows
                if length > 1:
                    self.surplus += length
                    direct[SPACE * length] += 1

    def chunks(self) -> Counter[str]:
        total = self.direct
        findall = CHUNK_PATTERN.findall
        for piece, count in self.pieces.items():
            if count:
                for chunk in findall(SPACE + piece):
                    total[chunk] += count
        if self.surplus:
            total[SPACE] -= self.surplus
            if not total[SPACE]:
                del total[SPACE]
        return total


_RUNS = re.compile(f"{SPACE}{SPACE}+")


def _count_into(tally: _Tally, text: str, start: int = 0, end: int | None = None) -> None:
    """Count the chunks of ``text[start:end]`` into ``tally``, a block (cut after a line
    break) at a time, so that only one block is ever copied."""
    end = len(text) if end is None else end
    for first, last in _line_parts(text, max(1, (end - start) // _BLOCK), start, end):
        tally.add(mark_spaces(nfc(text[first:last])))


def _line_parts(text: str, parts: int, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Cut ``text[start:end]`` into about ``parts`` spans, each ending after a line break
    (but the last)."""
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    size = end - start
    for part in range(1, parts):
        cut = text.find("\n", max(start, end - size + size * part // parts), end)
        if cut < 0:
            break
        spans.append((start, cut + 1))
        start = cut + 1
    spans.append((start, end))
    return spans


_SHARED: list[str] = []


def _count_shared(part: tuple[int, int, int]) -> Counter[str]:
    index, start, end = part
    tally = _Tally()
    _count_into(tally, _SHARED[index], start, end)
    return tally.chunks()
