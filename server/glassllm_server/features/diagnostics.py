"""Diagnostics: each run of characters the tokenizer does not know, as Information; on a
chat document, what its conversations' encodings warn of instead, as Warnings (a
message's special-token text that becomes a real special token; a BOS added twice); and
where a document (or a dataset's line, or a conversation's prompt with its template's
tokens) passes its token budget (see :mod:`glassllm_server.budgets`), as its budget's
severity.

Clients that pull (``textDocument/diagnostic``) ask when they need them; for the others
the server publishes after each change, debounced, and clears them when the document
closes. Finding and wording the runs is :mod:`glassllm_server.unknown`'s job.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging

from lsprotocol import types

from glassllm_server.budgets import BudgetCheck
from glassllm_server.chat_units import ChatUnit
from glassllm_server.feature import Feature, on_document
from glassllm_server.messages import Messages
from glassllm_server.positions import Point, content_length
from glassllm_server.render.diagnostics import unknown_message
from glassllm_server.server import GlassServer
from glassllm_server.snapshot import DocumentSnapshot
from glassllm_server.unknown import unknown_runs

__all__ = ["DIAGNOSTIC_LIMIT", "Diagnostics"]

logger = logging.getLogger(__name__)

# A document in a script the tokenizer never saw (Chinese text, Portuguese tokenizer) has
# an unknown run every few characters; past this many the editor slows for no insight.
DIAGNOSTIC_LIMIT = 2000

# Pushes wait this long after the last change, so typing publishes once, not per key.
_DEBOUNCE_SECONDS = 0.15

_DIAGNOSTIC_OPTIONS = types.DiagnosticOptions(
    identifier="glassllm", inter_file_dependencies=False, workspace_diagnostics=False
)


class Diagnostics(Feature):
    def __init__(self, server: GlassServer) -> None:
        super().__init__(server)
        # Per document: the last answer with the state it was computed for (the text's
        # revision among it), so an unchanged document answers "unchanged".
        self.answers: dict[str, tuple[tuple[object, ...], str, list[types.Diagnostic]]] = {}
        self.result_ids = itertools.count(1)
        self.waiting: dict[str, asyncio.Task[None]] = {}  # debounced pushes
        self.session.open_documents.changed.subscribe(self.document_changed)

    @on_document(types.TEXT_DOCUMENT_DIAGNOSTIC, _DIAGNOSTIC_OPTIONS)
    async def pull(
        self, snapshot: DocumentSnapshot, params: types.DocumentDiagnosticParams
    ) -> types.FullDocumentDiagnosticReport | types.UnchangedDocumentDiagnosticReport:
        result_id, items = await self.diagnostics(snapshot)
        if params.previous_result_id == result_id:
            return types.UnchangedDocumentDiagnosticReport(result_id=result_id)
        return types.FullDocumentDiagnosticReport(items=items, result_id=result_id)

    async def diagnostics(self, snapshot: DocumentSnapshot) -> tuple[str, list[types.Diagnostic]]:
        """The result ID and the diagnostics of ``snapshot``, computed once per state."""
        session, document = self.session, snapshot.document
        await session.open_documents.tokenized(document)
        # A chat document's conversations: its warnings, and what its budget counts.
        wanted = session.settings.diagnostics or self.budgets.applied(document.uri) is not None
        units = await self.chats.units(snapshot) if wanted else None
        check = await self.budgets.check(document, units)
        chat = None if units is None else tuple(id(unit.encoding) for unit in units)
        state = (document.revision, session.locale, session.settings.diagnostics, snapshot.encoding, chat, check)
        answer = self.answers.get(document.uri)
        if answer is not None and answer[0] == state:
            return answer[1], answer[2]
        if not session.settings.diagnostics:
            items = []
        elif units is not None:
            items = _chat_items(snapshot, units, session.messages)
        else:
            items = _compute(snapshot, session.messages, self.tokenizers.name())
        if check is not None:
            items += _over_budget(snapshot, check, session.messages, self.tokenizers.name(check.applied.tokenizer))
        result_id = str(next(self.result_ids))
        self.answers[document.uri] = (state, result_id, items)
        return result_id, items

    def pushes(self) -> bool:
        """Whether the client is initialized and lacks pull diagnostics."""
        if not self.client.initialized:
            return False
        text_document = self.client.capabilities.text_document
        return text_document is None or text_document.diagnostic is None

    def document_changed(self, uri: str) -> None:
        task = self.waiting.pop(uri, None)
        if task is not None:
            task.cancel()
        if uri not in self.session.open_documents:
            self.answers.pop(uri, None)
            self.budgets.forget(uri)
            if self.pushes():
                self.client.publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
            return
        # Without a running event loop the server is driven directly, without a client.
        with contextlib.suppress(RuntimeError):
            if self.pushes():
                self.waiting[uri] = asyncio.ensure_future(self.publish(uri))

    async def publish(self, uri: str) -> None:
        await asyncio.sleep(_DEBOUNCE_SECONDS)
        live = self.session.open_documents.get(uri)
        if live is None:
            return
        # The version published is the one the diagnostics describe, even if the
        # document changes while they are computed.
        snapshot = self.session.snapshot_of(live)
        _, items = await self.diagnostics(snapshot)
        self.client.publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=snapshot.document.version)
        )


def _compute(snapshot: DocumentSnapshot, messages: Messages, tokenizer: str) -> list[types.Diagnostic]:
    """The diagnostics of a fully tokenized document: one per unknown run, then one for
    the document's unknown line-ending characters."""
    document = snapshot.document
    items: list[types.Diagnostic] = []
    endings = 0
    first_ending: tuple[int, str] | None = None
    for number, text in enumerate(document.lines):
        tokens = document.line_tokens(number)
        if not tokens.unknown:
            continue
        content = content_length(text)
        unk = document.tokenizer.unk_id
        runs, unknown_endings = unknown_runs(tokens.spans(), content, unk)
        for run in runs[: max(DIAGNOSTIC_LIMIT - len(items), 0)]:
            message = unknown_message(
                messages, text[run.start : run.end], run.tokens, tokenizer, number=messages.integer
            )
            items.append(_diagnostic(snapshot, Point(number, run.start), Point(number, run.end), message))
        if unknown_endings:
            endings += unknown_endings
            if first_ending is None:
                unknown = {span.piece for span in tokens.spans() if span.start >= content and span.id == unk}
                first_ending = number, "".join(c for c in text[content:] if c in unknown)
    if first_ending is not None:
        number, characters = first_ending
        text = document.lines[number]
        message = unknown_message(messages, characters, 1, tokenizer, line_endings=endings, number=messages.integer)
        items.append(_diagnostic(snapshot, Point(number, content_length(text)), Point(number, len(text)), message))
    return items


def _chat_items(snapshot: DocumentSnapshot, units: list[ChatUnit], messages: Messages) -> list[types.Diagnostic]:
    """A chat document's warnings: each message token the template's tokenization reads
    as a special token, and each conversation whose BOS is added twice."""
    items: list[types.Diagnostic] = []
    for unit in units:
        for number in unit.injected[:DIAGNOSTIC_LIMIT]:
            token = unit.encoding.tokens[number]
            assert token.source is not None
            message = messages(
                "chat.special", message=token.source.message, piece=token.piece, id=messages.integer(token.id)
            )
            items.append(
                _diagnostic(snapshot, *unit.token_range(number), message, _WARNING, "special-token-in-message")
            )
        if unit.double_bos:
            line = unit.first_line
            end = Point(line, content_length(snapshot.document.lines[line]))
            message = messages("chat.double_bos", token=unit.double_bos)
            items.append(_diagnostic(snapshot, Point(line, 0), end, message, _WARNING, "double-bos"))
    return items


_WARNING = types.DiagnosticSeverity.Warning


def _over_budget(
    snapshot: DocumentSnapshot, check: BudgetCheck, messages: Messages, tokenizer: str
) -> list[types.Diagnostic]:
    """One diagnostic per unit past its budget, on its first token past it."""
    limit = check.limit
    severity = types.DiagnosticSeverity.Error
    if check.applied.budget.severity == "warning":
        severity = types.DiagnosticSeverity.Warning
    items = []
    for unit in check.over()[:DIAGNOSTIC_LIMIT]:
        message = messages(
            "budget.over",
            number=messages.integer(limit + 1),
            limit=messages.integer(limit),
            over=messages.integer(unit.count - limit),
            tokenizer=tokenizer,
        )
        items.append(_diagnostic(snapshot, *unit.token_range(limit), message, severity, "token-budget"))
    return items


def _diagnostic(
    snapshot: DocumentSnapshot,
    start: Point,
    end: Point,
    message: str,
    severity: types.DiagnosticSeverity = types.DiagnosticSeverity.Information,
    code: str = "unknown-character",
) -> types.Diagnostic:
    return types.Diagnostic(
        range=snapshot.range(start, end), message=message, severity=severity, source="glassllm", code=code
    )
