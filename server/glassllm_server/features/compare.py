"""Compare tokenizers: the hover lines, the ``compare`` list of ``glassllm/stats`` and the
``glassllm.compareTokenizers`` command, whose page is shown like the merge explanation.

The logic is in :mod:`glassllm_server.compare`; this module only reads the snapshot and
converts positions. The code action that offers the command is the explain feature's
(one code-action handler offers both).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from lsprotocol import types

from glassllm_server.compare import (
    COMPARE_TOKENIZERS,
    AnyCompared,
    ComparedCounts,
    ComparedModel,
    compare_data,
    compare_explanation,
)
from glassllm_server.document import Document, DocumentToken
from glassllm_server.features.explain import explain_range
from glassllm_server.features.feature import Feature, on_command
from glassllm_server.features.pages import document_name, show_page
from glassllm_server.positions import Point
from glassllm_server.render.comparison import hover_lines, render_compare_markdown
from glassllm_server.render.markdown import code
from glassllm_server.server import GlassServer

__all__ = ["COMPARE_TOKENIZERS", "CompareTokenizers", "compare_hover_lines", "compare_stats", "compared_summary"]

# Counting a large document for a compared tokenizer gives the event loop back after
# this long, so that hovers and edits meanwhile wait at most about that much.
_SLICE_SECONDS = 0.002


class CompareTokenizers(Feature):
    @on_command(COMPARE_TOKENIZERS)
    async def compare_tokenizers(self, uri: str, selection: types.Range) -> dict[str, Any]:
        server = self.server
        snapshot = server.snapshot(uri)
        document = snapshot.document
        explanation = explain_range(snapshot, selection)
        first, last = Point(*explanation.start), Point(*explanation.end)
        own = document.stats(first, last)
        compared = server.compared()
        totals = [ComparedCounts(document.tokenizer.name, own.tokens, own.chunks, own.unknown)]
        totals += await _range_counts(compared, document, (first, last), own.chunks)
        chunks = compare_explanation(explanation, compared, document.tokenizer.tokenizer.readable)
        messages = server.messages
        position = snapshot.position_json
        name = document_name(uri)
        markdown = render_compare_markdown(
            explanation,
            chunks,
            totals,
            own.characters,
            server.tokenizer_label,
            messages,
            messages.integer,
            messages.decimal,
            name,
        )
        return {
            **compare_data(chunks, totals, position),
            "uri": uri,
            "selection": {"start": position(*explanation.start), "end": position(*explanation.end)},
            "truncated": explanation.truncated,
            "totalChunks": explanation.total,
            "markdown": markdown,
            "page": show_page(server, markdown, name, kind="compare"),
        }


def compare_hover_lines(server: GlassServer, token: DocumentToken) -> list[str]:
    """The hover's lines for the compared tokenizers: each one's split of the token's chunk."""
    return hover_lines(token.chunk.text, server.compared(), server.tokenizer_label, server.messages, code)


async def compare_stats(
    server: GlassServer, document: Document, span: tuple[Point, Point] | None, chunks: int
) -> list[dict[str, Any]]:
    """``glassllm/stats``' ``compare`` list: each compared tokenizer's counts for the
    document (``span`` None) or the range ``span``; ``chunks`` is the document's count."""
    if span is None:
        counts = await _document_counts(server.compared(), document, chunks)
    else:
        counts = await _range_counts(server.compared(), document, span, chunks)
    return [{"tokenizer": c.tokenizer, "tokens": c.tokens, "chunks": c.chunks, "unknown": c.unknown} for c in counts]


def compared_summary(server: GlassServer, compare: list[dict[str, Any]]) -> str:
    """The compared tokenizers' counts for the stats message: "; English (en): 16 tokens, 0 unknown"."""
    messages = server.messages
    return "".join(
        "; "
        + messages(
            "compare.stats",
            tokenizer=server.tokenizer_label(item["tokenizer"]),
            tokens=messages.integer(item["tokens"]),
            unknown=messages.integer(item["unknown"]),
        )
        for item in compare
    )


async def _range_counts(
    compared: Sequence[AnyCompared], document: Document, span: tuple[Point, Point], chunks: int
) -> list[ComparedCounts]:
    """Each compared tokenizer's counts for the range ``span``. Whole lines (a real
    model's whole blocks) are counted into the document's per-line counts, which outlive
    the caches of lines' texts, so a range mostly adds up counts already there."""
    start, end = span
    lines = document.lines
    counts = []
    for tok in compared:
        if isinstance(tok, ComparedModel):
            counts.append(tok.counts_in(lines, start, end, chunks, tok.document(document)))
            continue
        counted = tok.document(document)
        deadline = time.perf_counter() + _SLICE_SECONDS
        for line in range(start.line, end.line + 1):
            counted.count_of(tok, lines, line)
            if time.perf_counter() > deadline:
                await asyncio.sleep(0)
                deadline = time.perf_counter() + _SLICE_SECONDS
        counts.append(tok.counts_in(lines, start, end, chunks, counted))
    return counts


async def _document_counts(compared: Sequence[AnyCompared], document: Document, chunks: int) -> list[ComparedCounts]:
    """Each compared tokenizer's totals for the whole document (the request's snapshot),
    counting what an edit left uncounted a slice at a time."""
    totals = []
    for tok in compared:
        counts = tok.document(document)
        while not counts.count_pending(tok, document.lines, 0):
            deadline = time.perf_counter() + _SLICE_SECONDS
            while time.perf_counter() < deadline and not counts.count_pending(tok, document.lines, 1):
                pass
            await asyncio.sleep(0)
        totals.append(counts.totals(tok.name))
    return totals
