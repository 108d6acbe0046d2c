"""Diagnostics: each run of characters the tokenizer does not know, as Information.

Clients that pull (``textDocument/diagnostic``) ask when they need them; for the others
the server publishes after each change, debounced, and clears them when the document
closes. Finding and wording the runs is :mod:`glassllm_server.unknown`'s job.
"""

from __future__ import annotations

import asyncio
import itertools
import logging

from lsprotocol import types

from glassllm.tokenizer import UNK_ID
from glassllm_server.document import Document
from glassllm_server.positions import Point, content_length
from glassllm_server.server import GlassServer
from glassllm_server.unknown import unknown_message, unknown_runs

__all__ = ["DIAGNOSTIC_LIMIT", "register"]

logger = logging.getLogger(__name__)

# A document in a script the tokenizer never saw (Chinese text, Portuguese tokenizer) has
# an unknown run every few characters; past this many the editor slows for no insight.
DIAGNOSTIC_LIMIT = 2000

# Pushes wait this long after the last change, so typing publishes once, not per key.
_DEBOUNCE_SECONDS = 0.15


def _compute(ls: GlassServer, document: Document) -> list[types.Diagnostic]:
    """The diagnostics of a fully tokenized document."""
    messages = ls.messages
    name = ls.tokenizer_name()
    items: list[types.Diagnostic] = []
    endings = 0
    first_ending: tuple[int, str] | None = None
    for number, text in enumerate(document.lines):
        tokens = document.line_tokens(number)
        if not tokens.unknown:
            continue
        content = content_length(text)
        runs, unknown_endings = unknown_runs(tokens.spans(), content)
        for run in runs:
            if len(items) >= DIAGNOSTIC_LIMIT:
                break
            items.append(
                _diagnostic(
                    ls,
                    document,
                    Point(number, run.start),
                    Point(number, run.end),
                    unknown_message(messages, text[run.start : run.end], run.tokens, name, number=messages.integer),
                )
            )
        if unknown_endings:
            endings += unknown_endings
            if first_ending is None:
                unknown = {span.piece for span in tokens.spans() if span.start >= content and span.id == UNK_ID}
                first_ending = number, "".join(c for c in text[content:] if c in unknown)
    if first_ending is not None:
        number, characters = first_ending
        text = document.lines[number]
        items.append(
            _diagnostic(
                ls,
                document,
                Point(number, content_length(text)),
                Point(number, len(text)),
                unknown_message(messages, characters, 1, name, line_endings=endings, number=messages.integer),
            )
        )
    return items


def _diagnostic(ls: GlassServer, document: Document, start: Point, end: Point, message: str) -> types.Diagnostic:
    return types.Diagnostic(
        range=ls.range(document, start, end),
        message=message,
        severity=types.DiagnosticSeverity.Information,
        source="glassllm",
        code="unknown-character",
    )


def register(server: GlassServer) -> None:
    # Per document: the last answer with the state it was computed for (the text's
    # revision among it), so an unchanged document answers "unchanged".
    answers: dict[str, tuple[tuple[object, ...], str, list[types.Diagnostic]]] = {}
    result_ids = itertools.count(1)
    waiting: dict[str, asyncio.Task[None]] = {}

    async def diagnostics(ls: GlassServer, document: Document) -> tuple[str, list[types.Diagnostic]]:
        await ls.tokenized(document)
        state = (document.revision, ls.locale, ls.settings.diagnostics, ls.encoding)
        answer = answers.get(document.uri)
        if answer is not None and answer[0] == state:
            return answer[1], answer[2]
        items = _compute(ls, document) if ls.settings.diagnostics else []
        result_id = str(next(result_ids))
        answers[document.uri] = (state, result_id, items)
        return result_id, items

    def pushes(ls: GlassServer) -> bool:
        """Whether the client is initialized and lacks pull diagnostics."""
        capabilities = getattr(ls.protocol, "client_capabilities", None)
        if capabilities is None:
            return False
        text_document = capabilities.text_document
        return text_document is None or text_document.diagnostic is None

    async def publish(ls: GlassServer, uri: str) -> None:
        await asyncio.sleep(_DEBOUNCE_SECONDS)
        live = ls.live_documents.get(uri)
        if live is None:
            return
        # The version published is the one the diagnostics describe, even if the
        # document changes while they are computed.
        document = live.snapshot()
        _, items = await diagnostics(ls, document)
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=document.version)
        )

    def changed(uri: str) -> None:
        task = waiting.pop(uri, None)
        if task is not None:
            task.cancel()
        if uri not in server.live_documents:
            answers.pop(uri, None)
            if pushes(server):
                server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
            return
        if pushes(server):
            try:
                waiting[uri] = asyncio.ensure_future(publish(server, uri))
            except RuntimeError:
                # No running event loop: the server is driven directly, without a client.
                pass

    server.document_listeners.append(changed)

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(identifier="glassllm", inter_file_dependencies=False, workspace_diagnostics=False),
    )
    async def pull(
        ls: GlassServer, params: types.DocumentDiagnosticParams
    ) -> types.FullDocumentDiagnosticReport | types.UnchangedDocumentDiagnosticReport:
        document = ls.get_document(params.text_document.uri)
        result_id, items = await diagnostics(ls, document)
        if params.previous_result_id == result_id:
            return types.UnchangedDocumentDiagnosticReport(result_id=result_id)
        return types.FullDocumentDiagnosticReport(items=items, result_id=result_id)
