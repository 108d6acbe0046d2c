"""Compare tokenizers: the ``glassllm.compareTokenizers`` command, whose page is shown
like the merge explanation (offered on any selection by the code actions).

The logic is in :mod:`glassllm_server.compare` and :mod:`glassllm_server.compare_counts`
(which ``glassllm/stats`` counts with too), the words in
:mod:`glassllm_server.render.comparison` (which the hover's lines come from too); this
module only reads the snapshot and converts positions.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from glassllm_server.commands import Command
from glassllm_server.compare import ComparedCounts, compare_data, compare_explanation
from glassllm_server.compare_counts import range_counts
from glassllm_server.explanation import explain_document
from glassllm_server.feature import Feature, on_command
from glassllm_server.pages import document_name, show_page
from glassllm_server.positions import Point
from glassllm_server.render.comparison import render_compare_markdown

__all__ = ["CompareTokenizers"]


class CompareTokenizers(Feature):
    @on_command(Command.COMPARE_TOKENIZERS)
    async def compare_tokenizers(self, uri: str, selection: types.Range) -> dict[str, Any]:
        snapshot = self.session.snapshot(uri)
        document = snapshot.document
        explanation = explain_document(document, *snapshot.points(selection))
        first, last = Point(*explanation.start), Point(*explanation.end)
        own = document.stats(first, last)
        compared = self.tokenizers.compared()
        totals = [ComparedCounts(document.tokenizer.name, own.tokens, own.chunks, own.unknown)]
        totals += await range_counts(compared, document, (first, last), own.chunks)
        chunks = compare_explanation(explanation, compared, document.tokenizer.tokenizer.readable)
        messages = self.session.messages
        position = snapshot.position_json
        name = document_name(uri)
        markdown = render_compare_markdown(
            explanation,
            chunks,
            totals,
            own.characters,
            self.tokenizers.label,
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
            "page": show_page(self.client, markdown, name, kind="compare"),
        }
