"""Code lens: the document's token count on its first line; it runs ``glassllm.showStats``.
With a token budget, the lens says how much of it is used (``3,900 / 4,096 tokens``);
a dataset checked line by line (see :mod:`glassllm_server.units`) has one more lens on
each of its lines, up to :data:`UNIT_LENSES` (beyond, on the lines over their budget).
"""

from __future__ import annotations

from lsprotocol import types

from glassllm_server.budgets import BudgetCheck, budget_use
from glassllm_server.commands import Command
from glassllm_server.feature import Feature, on_document
from glassllm_server.messages import Messages
from glassllm_server.render.code_lens import lens_title
from glassllm_server.snapshot import DocumentSnapshot

__all__ = ["UNIT_LENSES", "TokenCountLens"]

# A dataset of many lines would fill the editor with lenses; the diagnostics still name
# every line over its budget.
UNIT_LENSES = 1000


class TokenCountLens(Feature):
    @on_document(types.TEXT_DOCUMENT_CODE_LENS)
    async def code_lens(self, snapshot: DocumentSnapshot, params: types.CodeLensParams) -> list[types.CodeLens]:
        document = snapshot.document
        await self.session.open_documents.tokenized(document)
        messages = self.session.messages
        check = self.budgets.check(document)
        stats = document.stats()
        budget = None
        if check is not None and len(check.units) == 1:
            tokenizer = check.applied.tokenizer
            label = None if tokenizer == document.tokenizer.name else self.tokenizers.name(tokenizer)
            budget = check.largest, check.limit, label
        lenses = [_lens(0, lens_title(stats, messages, budget), Command.SHOW_STATS, [document.uri])]
        if check is not None and len(check.units) > 1:
            lenses += _unit_lenses(check, messages, document.uri)
        return lenses


def _unit_lenses(check: BudgetCheck, messages: Messages, uri: str) -> list[types.CodeLens]:
    """A lens on each unit's first line with its use of the budget."""
    units = check.units if len(check.units) <= UNIT_LENSES else check.over()[:UNIT_LENSES]
    return [
        _lens(unit.first_line, budget_use(unit.count, check.limit, messages), Command.SHOW_STATS, [uri])
        for unit in units
    ]


def _lens(line: int, title: str, command: str, arguments: list[object]) -> types.CodeLens:
    origin = types.Position(line=line, character=0)
    return types.CodeLens(
        range=types.Range(start=origin, end=origin),
        command=types.Command(title=title, command=command, arguments=arguments),
    )
