"""Code lens: the document's token count on its first line; it runs ``glassllm.showStats``.

A chat document gets one lens per conversation instead (a dataset's lines each), with
the prompt's count and the template's share (see :mod:`glassllm_server.chat_documents`);
a dataset's lenses are counted when the editor resolves them, the visible ones first.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from glassllm_server.commands import Command
from glassllm_server.feature import Feature, on_document, on_message
from glassllm_server.positions import Point, content_length
from glassllm_server.render.chat import chat_lens_title
from glassllm_server.render.code_lens import lens_title
from glassllm_server.snapshot import DocumentSnapshot

__all__ = ["TokenCountLens"]


class TokenCountLens(Feature):
    @on_document(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=True))
    async def code_lens(self, snapshot: DocumentSnapshot, params: types.CodeLensParams) -> list[types.CodeLens]:
        document = snapshot.document
        lines = self.chats.unit_lines(snapshot)
        if lines is not None:
            return [self._chat_lens(snapshot, line) for line in lines]
        await self.session.open_documents.tokenized(document)
        return [self._lens(snapshot, 0, lens_title(document.stats(), self.session.messages))]

    def _lens(self, snapshot: DocumentSnapshot, line: int, title: str) -> types.CodeLens:
        origin = types.Position(line=line, character=0)
        return types.CodeLens(
            range=types.Range(start=origin, end=origin),
            command=types.Command(title=title, command=Command.SHOW_STATS, arguments=[snapshot.uri]),
        )

    def _chat_lens(self, snapshot: DocumentSnapshot, line: int) -> types.CodeLens:
        """A conversation's lens: counted now if it is encoded already, else when resolved."""
        unit = self.chats.ready_unit(snapshot, line)
        if unit:
            return self._lens(snapshot, line, chat_lens_title(unit.count, unit.template_count, self.session.messages))
        origin = types.Position(line=line, character=0)
        return types.CodeLens(
            range=types.Range(start=origin, end=origin), data=[snapshot.uri, snapshot.document.version, line]
        )

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
        if unit is not None:
            title = chat_lens_title(unit.count, unit.template_count, self.session.messages)
        else:  # a line (or a .json file) that holds no conversation: its plain count
            document = snapshot.document
            await self.session.open_documents.tokenized(document, line)
            stats = (
                document.stats()
                if self.chats.kind(snapshot) == "conversation"
                else document.stats(Point(line, 0), Point(line, content_length(document.lines[line])))
            )
            title = lens_title(stats, self.session.messages)
        return self._lens(snapshot, line, title)
