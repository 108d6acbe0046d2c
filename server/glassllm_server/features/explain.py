"""Explain BPE merges: the ``glassllm.explainMerges`` command (offered on any selection
by the code action, see :mod:`.code_actions`).

The command answers the explanation as JSON (for editor integrations) and shows it with
no plugin at all, as a page (see :mod:`glassllm_server.pages`).
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from glassllm_server.commands import Command
from glassllm_server.explanation import explain_document, explanation_data
from glassllm_server.feature import Feature, on_command
from glassllm_server.pages import document_name, show_page
from glassllm_server.render.explanation import render_markdown

__all__ = ["ExplainMerges"]


class ExplainMerges(Feature):
    @on_command(Command.EXPLAIN_MERGES)
    async def explain_merges(self, uri: str, selection: types.Range) -> dict[str, Any]:
        snapshot = self.session.snapshot(uri)
        explanation = explain_document(snapshot.document, *snapshot.points(selection))
        messages = self.session.messages
        data = explanation_data(explanation, snapshot.position_json)
        name = document_name(uri)
        label = self.tokenizers.label()
        tokenizer = snapshot.document.tokenizer
        markdown = render_markdown(
            explanation,
            messages,
            messages.integer,
            label,
            name,
            show=tokenizer.tokenizer.readable,
            counts=tokenizer.facts.has_counts,
            unk_id=tokenizer.unk_id,
        )
        data.update(
            {"uri": uri, "tokenizer": label, "markdown": markdown, "page": show_page(self.client, markdown, name)}
        )
        return data
