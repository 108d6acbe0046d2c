"""Code actions: "Explain BPE merges" and, when there are tokenizers to compare with,
"Compare tokenizers", on any selection; each runs its command on the selection. After
them, the same pages "in a browser" (``glassllm.openInBrowser``), for sharing."""

from __future__ import annotations

from lsprotocol import types

from glassllm_server.commands import Command
from glassllm_server.feature import Feature, on_message

__all__ = ["CodeActions"]


class CodeActions(Feature):
    @on_message(
        types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.Empty])
    )
    async def code_action(self, params: types.CodeActionParams) -> list[types.CodeAction | types.Command]:
        # Asynchronous like the configuration handlers, so that a title follows a locale
        # change sent just before it; a document not open gets no actions (no error).
        uri = params.text_document.uri
        if self.session.find_snapshot(uri) is None:
            return []
        if params.context.only and types.CodeActionKind.Empty not in params.context.only:
            return []
        messages = self.session.messages
        selection = {
            "start": {"line": params.range.start.line, "character": params.range.start.character},
            "end": {"line": params.range.end.line, "character": params.range.end.character},
        }
        offered = [(messages("explain.title"), Command.EXPLAIN_MERGES, [uri, selection])]
        if compare := bool(self.tokenizers.compared()):
            offered.append((messages("compare.title"), Command.COMPARE_TOKENIZERS, [uri, selection]))
        offered.append((messages("browser.explain_title"), Command.OPEN_IN_BROWSER, [uri, selection, "explain"]))
        if compare:
            offered.append((messages("browser.compare_title"), Command.OPEN_IN_BROWSER, [uri, selection, "compare"]))
        # Neovim runs an action's ``command`` when chosen; clients without code action
        # literals take a bare Command.
        commands = [types.Command(title=title, command=name, arguments=arguments) for title, name, arguments in offered]
        text_document = self.client.capabilities.text_document
        literals = (
            text_document is not None
            and text_document.code_action is not None
            and text_document.code_action.code_action_literal_support is not None
        )
        if not literals:
            return list(commands)
        return [types.CodeAction(title=c.title, kind=types.CodeActionKind.Empty, command=c) for c in commands]
