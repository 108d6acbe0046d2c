"""Code lens: the document's token count on its first line; it runs ``glassllm.showStats``.

With a token budget, the lens says how much of it is used (``3,900 / 4,096 tokens``).
A chat document has one lens per conversation instead (a dataset's lines each), with
the prompt's count, the template's share and the budget's use (``3,900 / 4,096 tokens
(87 from the template)``), counted when the editor resolves them, the visible ones first
(see :mod:`glassllm_server.chat_documents`). A dataset of ``{"text": …}`` records checked
line by line (see :mod:`glassllm_server.units`) has one more lens on each of its lines,
up to :data:`UNIT_LENSES` (beyond, on the lines over their budget).
"""

from __future__ import annotations

from typing import Any, Literal

from lsprotocol import types

from glassllm_server.budgets import BudgetCheck
from glassllm_server.chat_units import ChatUnit
from glassllm_server.commands import Command
from glassllm_server.feature import Feature, on_document, on_message
from glassllm_server.messages import Messages
from glassllm_server.positions import Point, content_length
from glassllm_server.render.chat import unit_lens_title
from glassllm_server.render.code_lens import lens_title
from glassllm_server.snapshot import DocumentSnapshot
from glassllm_server.units import record_unit

__all__ = ["UNIT_LENSES", "TokenCountLens"]

# A dataset of many lines would fill the editor with lenses; the diagnostics still name
# every line over its budget.
UNIT_LENSES = 1000


class TokenCountLens(Feature):
    @on_document(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=True))
    async def code_lens(self, snapshot: DocumentSnapshot, params: types.CodeLensParams) -> list[types.CodeLens]:
        document = snapshot.document
        units = self.chats.ready_units(snapshot)
        if units is not None:
            limit = self.budgets.limit_in_use(document.uri)
            messages = self.session.messages
            return [_chat_lens(snapshot, line, unit, limit, messages) for line, unit in units]
        await self.session.open_documents.tokenized(document)
        messages = self.session.messages
        check = await self.budgets.check(document)
        stats = document.stats()
        budget = None
        if check is not None and len(check.units) == 1:
            tokenizer = check.applied.tokenizer
            label = None if tokenizer == document.tokenizer.name else self.tokenizers.name(tokenizer)
            budget = check.largest, check.limit, label
        lenses = [_lens(0, lens_title(stats, messages, budget), document.uri)]
        if check is not None and len(check.units) > 1:
            lenses += _unit_lenses(check, messages, document.uri)
        return lenses

    @on_message(types.CODE_LENS_RESOLVE)
    async def resolve(self, lens: types.CodeLens) -> types.CodeLens:
        data: Any = lens.data
        if lens.command is not None or not (isinstance(data, (list, tuple)) and len(data) == 3):
            return lens
        uri, version, line = data
        snapshot = self.session.find_snapshot(uri) if isinstance(uri, str) else None
        if snapshot is None or snapshot.document.version != version or not isinstance(line, int):
            return lens  # a stale or foreign lens comes back as it was
        unit = await self.chats.unit(snapshot, line)
        messages = self.session.messages
        limit = self.budgets.limit_in_use(uri)
        document = snapshot.document
        if unit is None and limit is not None and self.chats.kind(snapshot) == "dataset":
            # A {"text": …} record among the conversations: its budget counts its text.
            unit = record_unit(document, document.tokenizer.tokenizer, line)
        if unit is not None:
            return _lens(line, unit_lens_title(unit.count, unit.template_count, limit, messages), uri)
        # A line (or a .json file) that holds no conversation: its plain count.
        await self.session.open_documents.tokenized(document, line)
        stats = (
            document.stats()
            if self.chats.kind(snapshot) == "conversation"
            else document.stats(Point(line, 0), Point(line, content_length(document.lines[line])))
        )
        return _lens(line, lens_title(stats, messages), uri)


def _unit_lenses(check: BudgetCheck, messages: Messages, uri: str) -> list[types.CodeLens]:
    """A lens on each unit's first line with its use of the budget."""
    units = check.units if len(check.units) <= UNIT_LENSES else check.over()[:UNIT_LENSES]
    return [
        _lens(unit.first_line, unit_lens_title(unit.count, unit.template_count, check.limit, messages), uri)
        for unit in units
    ]


def _lens(line: int, title: str, uri: str) -> types.CodeLens:
    origin = types.Position(line=line, character=0)
    return types.CodeLens(
        range=types.Range(start=origin, end=origin),
        command=types.Command(title=title, command=Command.SHOW_STATS, arguments=[uri]),
    )


def _chat_lens(
    snapshot: DocumentSnapshot, line: int, unit: ChatUnit | Literal[False] | None, limit: int | None, messages: Messages
) -> types.CodeLens:
    """A conversation's lens: counted now if it is encoded already, else when resolved."""
    if unit:
        return _lens(line, unit_lens_title(unit.count, unit.template_count, limit, messages), snapshot.uri)
    origin = types.Position(line=line, character=0)
    return types.CodeLens(
        range=types.Range(start=origin, end=origin), data=[snapshot.uri, snapshot.document.version, line]
    )
