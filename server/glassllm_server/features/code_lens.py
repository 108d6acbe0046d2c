"""Code lens: the document's token count on its first line; it runs ``glassllm.showStats``."""

from __future__ import annotations

from lsprotocol import types

from glassllm_server.commands import Command
from glassllm_server.feature import Feature, on_document
from glassllm_server.render.code_lens import lens_title
from glassllm_server.snapshot import DocumentSnapshot

__all__ = ["TokenCountLens"]


class TokenCountLens(Feature):
    @on_document(types.TEXT_DOCUMENT_CODE_LENS)
    async def code_lens(self, snapshot: DocumentSnapshot, params: types.CodeLensParams) -> list[types.CodeLens]:
        document = snapshot.document
        await self.session.open_documents.tokenized(document)
        title = lens_title(document.stats(), self.session.messages)
        origin = types.Position(line=0, character=0)
        return [
            types.CodeLens(
                range=types.Range(start=origin, end=origin),
                command=types.Command(title=title, command=Command.SHOW_STATS, arguments=[document.uri]),
            )
        ]
