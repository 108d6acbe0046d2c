"""Explain BPE merges: the ``glassllm.explainMerges`` command and the code action that
offers it (and "Compare tokenizers") on any selection.

The command answers the explanation as JSON (for editor integrations) and shows it with
no plugin at all, as a page (see :mod:`glassllm_server.features.pages`).
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from glassllm_server.compare import COMPARE_TOKENIZERS
from glassllm_server.explanation import Explanation, explain_selection, explanation_data, render_markdown
from glassllm_server.features.feature import Feature, on_command, on_message
from glassllm_server.features.pages import document_name, show_page
from glassllm_server.snapshot import DocumentSnapshot

__all__ = ["EXPLAIN_MERGES", "ExplainMerges", "explain_range"]

EXPLAIN_MERGES = "glassllm.explainMerges"


def explain_range(snapshot: DocumentSnapshot, selection: types.Range) -> Explanation:
    """The explanation of the chunks ``selection`` touches (in either direction), by the
    snapshot's tokenizer."""
    document = snapshot.document
    start, end = snapshot.points(selection)
    return explain_selection(
        document.tokenizer.tokenizer,
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
        markdown = render_markdown(explanation, messages, messages.integer, label, name)
        data.update({"uri": uri, "tokenizer": label, "markdown": markdown, "page": show_page(server, markdown, name)})
        return data

    @on_message(
        types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.Empty])
    )
    async def code_action(self, params: types.CodeActionParams) -> list[types.CodeAction | types.Command]:
        # Asynchronous like the configuration handlers, so that a title follows a locale
        # change sent just before it; a document not open gets no actions (no error).
        server = self.server
        uri = params.text_document.uri
        if server.find_snapshot(uri) is None:
            return []
        if params.context.only and types.CodeActionKind.Empty not in params.context.only:
            return []
        offered = [(server.messages("explain.title"), EXPLAIN_MERGES)]
        if server.compared():
            offered.append((server.messages("compare.title"), COMPARE_TOKENIZERS))
        selection = {
            "start": {"line": params.range.start.line, "character": params.range.start.character},
            "end": {"line": params.range.end.line, "character": params.range.end.character},
        }
        # Neovim runs an action's ``command`` when chosen; clients without code action
        # literals take a bare Command.
        commands = [types.Command(title=title, command=name, arguments=[uri, selection]) for title, name in offered]
        text_document = server.client_capabilities.text_document
        literals = (
            text_document is not None
            and text_document.code_action is not None
            and text_document.code_action.code_action_literal_support is not None
        )
        if not literals:
            return list(commands)
        return [types.CodeAction(title=c.title, kind=types.CodeActionKind.Empty, command=c) for c in commands]
