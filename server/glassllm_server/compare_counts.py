"""Each compared tokenizer's counts for a document or a range, as ``glassllm/stats``
and "Compare tokenizers" give them: counted a slice at a time, the event loop given back
in between, into the document's per-line counts (:class:`~glassllm_server.compare.DocumentCounts`).
No pygls here.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

from glassllm_server.compare import ComparedCounts, ComparedTokenizer
from glassllm_server.document import ReadOnlyDocument
from glassllm_server.positions import Point

__all__ = ["compare_stats", "range_counts"]

# Counting a large document for a compared tokenizer gives the event loop back after
# this long, so that hovers and edits meanwhile wait at most about that much.
_SLICE_SECONDS = 0.002


async def compare_stats(
    compared: Sequence[ComparedTokenizer],
    document: ReadOnlyDocument,
    span: tuple[Point, Point] | None,
    chunks: int,
    live: Callable[[str], ReadOnlyDocument | None] | None = None,
) -> list[dict[str, Any]]:
    """``glassllm/stats``' ``compare`` list: each of ``compared``'s counts for the
    document (``span`` None) or the range ``span``; ``chunks`` is the document's count.
    ``live(uri)``: the open document, which a child's count also settles (see
    :mod:`glassllm_server.compare_process`)."""
    if span is None:
        counts = await _document_counts(compared, document, chunks, live)
    else:
        counts = await range_counts(compared, document, span, chunks)
    return [{"tokenizer": c.tokenizer, "tokens": c.tokens, "chunks": c.chunks, "unknown": c.unknown} for c in counts]


async def range_counts(
    compared: Sequence[ComparedTokenizer], document: ReadOnlyDocument, span: tuple[Point, Point], chunks: int
) -> list[ComparedCounts]:
    """Each compared tokenizer's counts for the range ``span``. Whole lines (a real
    model's whole blocks) are counted into the document's per-line counts, which outlive
    the caches of lines' texts, so a range mostly adds up counts already there."""
    start, end = span
    lines = document.lines
    counts = []
    for tok in compared:
        counted = tok.document(document)
        deadline = time.perf_counter() + _SLICE_SECONDS
        line = start.line
        while line <= end.line:
            line = tok.count_from(counted, lines, line)
            if time.perf_counter() > deadline:
                await asyncio.sleep(0)
                deadline = time.perf_counter() + _SLICE_SECONDS
        counts.append(tok.counts_in(lines, start, end, chunks, counted))
    return counts


async def _document_counts(
    compared: Sequence[ComparedTokenizer],
    document: ReadOnlyDocument,
    chunks: int,
    live: Callable[[str], ReadOnlyDocument | None] | None,
) -> list[ComparedCounts]:
    """Each compared tokenizer's totals for the whole document (the request's snapshot):
    a large uncounted part in the tokenizer's child process, what is left (an edit's
    lines) here, a slice at a time."""
    totals = []
    for tok in compared:
        # At most a job running for an earlier version, then one for this one: what is
        # left after them is counted here (a job already done is awaited without giving
        # the loop a turn, and one asked for again spun the loop for ever).
        for _ in range(2):
            job = None if tok.child is None else tok.child.job(tok, document, live)
            if job is None:
                break
            # The job outlives a cancelled request: its counts serve the next one.
            counted = await asyncio.shield(job)
            if counted is None:
                break  # the child failed: counted here
            if tok.document(document).pending_run()[0] < len(document.lines):
                await counted.settle(document)  # the job counted an earlier version
            await asyncio.sleep(0)  # the job's done callbacks run: it leaves the running jobs
        counts = tok.document(document)
        while not counts.count_pending(tok, document.lines, 0):
            deadline = time.perf_counter() + _SLICE_SECONDS
            while time.perf_counter() < deadline and not counts.count_pending(tok, document.lines, 1):
                pass
            await asyncio.sleep(0)
        totals.append(counts.totals(tok.name))
    return totals
