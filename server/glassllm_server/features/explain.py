"""Explain BPE merges: the ``glassllm.explainMerges`` command and the code action that
offers it on any selection.

The command answers the explanation as JSON (for editor integrations) and shows it with
no plugin at all: a Markdown page written to the user's cache folder and opened with
``window/showDocument``, or, where the client cannot open documents (or opening fails),
the same text in ``window/showMessage``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types

from glassllm_server.compare import COMPARE_TOKENIZERS
from glassllm_server.document import Document
from glassllm_server.explanation import (
    Explanation,
    explain_selection,
    explanation_data,
    render_markdown,
    write_page,
)
from glassllm_server.positions import Point
from glassllm_server.server import GlassServer

__all__ = ["EXPLAIN_MERGES", "document_name", "explain_range", "lsp_position", "register", "show_page"]

logger = logging.getLogger(__name__)

EXPLAIN_MERGES = "glassllm.explainMerges"


def explain_range(ls: GlassServer, uri: str, selection: types.Range) -> tuple[Document, Explanation]:
    """The document ``uri`` (as the request found it) and the explanation of the chunks
    ``selection`` touches (in either direction), by the tokenizer in use."""
    document = ls.get_document(uri)
    start, end = ls.point(document, selection.start), ls.point(document, selection.end)
    if end < start:
        start, end = end, start
    explanation = explain_selection(
        document.tokenizer.tokenizer,
        document.lines.__getitem__,
        start,
        end,
        chunk_count=lambda line: document.line_tokens(line).chunk_count,
    )
    return document, explanation


def lsp_position(ls: GlassServer, document: Document) -> Callable[[int, int], dict[str, int]]:
    """Converts a line and code-point column of ``document`` to an LSP position as JSON."""

    def position(line: int, column: int) -> dict[str, int]:
        converted = ls.position(document, Point(line, column))
        return {"line": converted.line, "character": converted.character}

    return position


def document_name(uri: str) -> str:
    """The file name a URI ends with, for titles ("untitled:Untitled-1" → "Untitled-1")."""
    parsed = urlparse(uri)
    return PurePosixPath(unquote(parsed.path)).name or uri


def _show_message(ls: GlassServer, text: str) -> None:
    ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=text))


def show_page(ls: GlassServer, markdown: str, name: str, kind: str = "explain") -> str | None:
    """Show a page (see :func:`write_page`); returns the URI of the file written, if any."""
    window = ls.client_capabilities.window
    can_open = window is not None and window.show_document is not None and window.show_document.support
    try:
        path = write_page(markdown, name, kind=kind)
    except OSError as error:
        logger.warning("cannot write the explanation page: %s", error)
        _show_message(ls, markdown)
        return None
    uri = path.as_uri()
    if not can_open:
        _show_message(ls, markdown)
        return uri

    def opened(future: Future[Any]) -> None:
        # The answer arrives after the command's; a refusal still shows the text.
        if future.cancelled() or future.exception() is not None or not getattr(future.result(), "success", False):
            _show_message(ls, markdown)

    # Sent before the command answers, so the page opens as the command completes.
    ls.window_show_document(types.ShowDocumentParams(uri=uri, take_focus=True)).add_done_callback(opened)
    return uri


def register(server: GlassServer) -> None:
    @server.command(EXPLAIN_MERGES)
    async def explain_merges(ls: GlassServer, uri: str, selection: types.Range) -> dict[str, Any]:
        document, explanation = explain_range(ls, uri, selection)
        messages = ls.messages
        data = explanation_data(explanation, lsp_position(ls, document))
        name = document_name(uri)
        label = ls.tokenizer_label()
        markdown = render_markdown(explanation, messages, messages.integer, label, name)
        data.update({"uri": uri, "tokenizer": label, "markdown": markdown, "page": show_page(ls, markdown, name)})
        return data

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.Empty]),
    )
    async def code_action(ls: GlassServer, params: types.CodeActionParams) -> list[types.CodeAction | types.Command]:
        # Asynchronous like the configuration handlers, so that a title follows a locale
        # change sent just before it.
        uri = params.text_document.uri
        if ls.find_document(uri) is None:
            return []
        if params.context.only and types.CodeActionKind.Empty not in params.context.only:
            return []
        offered = [(ls.messages("explain.title"), EXPLAIN_MERGES)]
        if ls.compared():
            offered.append((ls.messages("compare.title"), COMPARE_TOKENIZERS))
        selection = {
            "start": {"line": params.range.start.line, "character": params.range.start.character},
            "end": {"line": params.range.end.line, "character": params.range.end.character},
        }
        # Neovim runs an action's ``command`` when chosen; clients without code action
        # literals take a bare Command.
        commands = [types.Command(title=title, command=name, arguments=[uri, selection]) for title, name in offered]
        text_document = ls.client_capabilities.text_document
        literals = (
            text_document is not None
            and text_document.code_action is not None
            and text_document.code_action.code_action_literal_support is not None
        )
        if not literals:
            return list(commands)
        return [types.CodeAction(title=c.title, kind=types.CodeActionKind.Empty, command=c) for c in commands]
