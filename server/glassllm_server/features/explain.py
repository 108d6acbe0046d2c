"""Explain BPE merges: the ``glassllm.explainMerges`` command (offered on any selection
by the code action, see :mod:`.code_actions`).

The command answers the explanation as JSON (for editor integrations) and shows it with
no plugin at all, as a page (see :mod:`glassllm_server.features.pages`).
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from glassllm import Tokenizer
from glassllm_server.explanation import Explanation, explain_model_selection, explain_selection, explanation_data
from glassllm_server.features.feature import Feature, on_command
from glassllm_server.features.pages import document_name, show_page
from glassllm_server.positions import Point
from glassllm_server.render.explanation import render_markdown
from glassllm_server.snapshot import DocumentSnapshot

__all__ = ["EXPLAIN_MERGES", "ExplainMerges", "explain_range"]

EXPLAIN_MERGES = "glassllm.explainMerges"


def explain_range(snapshot: DocumentSnapshot, selection: types.Range) -> Explanation:
    """The explanation of the chunks ``selection`` touches (in either direction), by the
    snapshot's tokenizer."""
    document = snapshot.document
    start, end = snapshot.points(selection)
    model = document.tokenizer.model
    if model is not None:

        def token_at(point: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]] | None:
            token = document.meant_token(Point(*point))
            return None if token is None else (tuple(token.start_point), tuple(token.end_point))  # type: ignore[return-value]

        return explain_model_selection(model, document.lines.__getitem__, document.block_of, start, end, token_at)
    tokenizer = document.tokenizer.tokenizer
    assert isinstance(tokenizer, Tokenizer), "glassllm's own, when it is no real model's"
    return explain_selection(
        tokenizer,
        document.lines.__getitem__,
        start,
        end,
        chunk_count=lambda line: document.line_tokens(line).chunk_count,
    )


class ExplainMerges(Feature):
    @on_command(EXPLAIN_MERGES)
    async def explain_merges(self, uri: str, selection: types.Range) -> dict[str, Any]:
        server = self.server
        snapshot = server.snapshot(uri)
        explanation = explain_range(snapshot, selection)
        messages = server.messages
        data = explanation_data(explanation, snapshot.position_json)
        name = document_name(uri)
        label = server.tokenizer_label()
        tokenizer = snapshot.document.tokenizer
        markdown = render_markdown(
            explanation,
            messages,
            messages.integer,
            label,
            name,
            show=tokenizer.tokenizer.readable,
            model=tokenizer.model is not None,
        )
        data.update({"uri": uri, "tokenizer": label, "markdown": markdown, "page": show_page(server, markdown, name)})
        return data
