"""Token count: the ``glassllm/stats`` request and the ``glassllm.showStats`` command
(which the first-line code lens runs, see :mod:`.code_lens`). For a whole document
with a token budget, the answer's ``budget`` says how much of it is used (the status
bar's ``3,900 / 4,096``); for a chat document, ``chat`` gives its prompts' count and the
template's share, and its budget is checked against its prompts."""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from glassllm_server.budgets import budget_json
from glassllm_server.commands import STATS_REQUEST, Command
from glassllm_server.compare_counts import compare_stats
from glassllm_server.document import Stats
from glassllm_server.feature import Feature, on_command, on_message
from glassllm_server.positions import Point
from glassllm_server.render.comparison import compared_summary
from glassllm_server.render.model import facts_lines
from glassllm_server.server import GlassServer
from glassllm_server.snapshot import DocumentSnapshot

__all__ = ["TokenCount"]

_EXPECTED = '{"textDocument": {"uri": string}, "range"?: Range}'


def _field(params: Any, name: str) -> Any:
    if isinstance(params, dict):
        return params.get(name)
    return getattr(params, name, None)


def _position(value: Any) -> types.Position | None:
    line, character = _field(value, "line"), _field(value, "character")
    if isinstance(line, int) and isinstance(character, int) and line >= 0 and character >= 0:
        return types.Position(line=line, character=character)
    return None


class TokenCount(Feature):
    def __init__(self, server: GlassServer) -> None:
        super().__init__(server)
        self.session.open_documents.changed.subscribe(self.count_ahead)

    def count_ahead(self, uri: str) -> None:
        """A document opened or changed: if a large part of it has no compared counts (a
        document just opened, a large paste), the compared tokenizers' child processes
        count it now, on the other core, while the server tokenizes it; its first
        ``glassllm/stats`` is then ready as soon as its own tokens are."""
        open_documents = self.session.open_documents
        document = open_documents.get(uri)
        if document is None:
            return
        for compared in self.tokenizers.compared():
            if compared.child is not None:
                compared.child.job(compared, document, open_documents.get)

    @on_message(STATS_REQUEST)
    async def stats_request(self, params: Any) -> dict[str, Any]:
        # A custom request: its params arrive unchecked, and are checked here.
        uri = _field(_field(params, "textDocument"), "uri")
        if not isinstance(uri, str):
            raise self._invalid()
        raw_range = _field(params, "range")
        lsp_range = None
        if raw_range is not None:
            start, end = _position(_field(raw_range, "start")), _position(_field(raw_range, "end"))
            if start is None or end is None:
                raise self._invalid()
            lsp_range = types.Range(start=start, end=end)
        return await self.stats(self.session.snapshot(uri), lsp_range)

    def _invalid(self) -> JsonRpcInvalidParams:
        return JsonRpcInvalidParams(
            self.session.messages("error.invalid_params", method=STATS_REQUEST, detail=_EXPECTED)
        )

    async def stats(self, snapshot: DocumentSnapshot, lsp_range: types.Range | None) -> dict[str, Any]:
        """The counts of the document, or of the tokens ``lsp_range`` touches, with each
        compared tokenizer's."""
        document = snapshot.document
        span: tuple[Point, Point] | None = None
        if lsp_range is None:
            await self.session.open_documents.tokenized(document)
            stats = document.stats()
        else:
            span = snapshot.points(lsp_range)
            stats = document.stats(*span)
        compared = self.tokenizers.compared()
        compare = await compare_stats(compared, document, span, stats.chunks, self.session.open_documents.get)
        result = {**stats._asdict(), "tokenizer": document.tokenizer.name, "compare": compare}
        units = None if lsp_range is not None else await self.chats.units(snapshot)
        if units is not None:
            # A chat document: the model receives its conversations' prompts, not its text.
            result["tokens"] = sum(unit.count for unit in units)
            result["chat"] = {
                "count": result["tokens"],
                "templateCount": sum(unit.template_count for unit in units),
                "conversations": len(units),
            }
        # A chat document's budget is checked against its prompts (see counted_units).
        check = await self.budgets.check(document, units) if span is None else None
        if check is not None:
            result["budget"] = budget_json(check, self.tokenizers.name(check.applied.tokenizer), self.session.messages)
        facts = document.tokenizer.facts
        if not facts.has_counts:
            # A real model's (its merges ship no training counts): its format, its
            # special-token mode, and what it adds around a text, which is not the
            # text's: shown and counted apart.
            before, after = facts.around
            result["model"] = {
                "kind": facts.kind,
                "matchSpecialTokens": facts.match_specials,
                "around": {"before": list(before), "after": list(after), "tokens": len(before) + len(after)},
            }
        return result

    @on_command(Command.SHOW_STATS)
    async def show_stats(self, uri: str) -> dict[str, Any]:
        snapshot = self.session.snapshot(uri)
        result = await self.stats(snapshot, None)
        messages = self.session.messages
        counts = Stats(*(result[name] for name in Stats._fields))
        message = messages(
            "stats.message",
            tokens=messages.integer(counts.tokens),
            chunks=messages.integer(counts.chunks),
            characters=messages.integer(counts.characters),
            unknown=messages.integer(counts.unknown),
            tokenizer=self.tokenizers.label(),
        )
        message += compared_summary(result["compare"], self.tokenizers.label, messages)
        if "budget" in result:
            message += ". " + result["budget"]["text"]
        lines = facts_lines(snapshot.document.tokenizer.facts, messages)
        if lines:
            message += ". " + ". ".join(lines)
        self.client.show(message)
        return result
