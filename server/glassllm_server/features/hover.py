"""Hover: the token under the cursor, with its range covering exactly its characters."""

from __future__ import annotations

from lsprotocol import types

from glassllm_server.features.compare import compare_hover_lines
from glassllm_server.features.feature import Feature, on_document
from glassllm_server.positions import content_length
from glassllm_server.render.hover import hover_markdown
from glassllm_server.snapshot import DocumentSnapshot

__all__ = ["Hover"]


class Hover(Feature):
    @on_document(types.TEXT_DOCUMENT_HOVER)
    async def hover(self, snapshot: DocumentSnapshot, params: types.HoverParams) -> types.Hover | None:
        server, document = self.server, snapshot.document
        # Only the token's line is needed: its index in the document, which needs every
        # line above tokenized, shows as "still counting" until the background work is
        # there (a large document just opened). Never wait for other lines.
        point = snapshot.point(params.position)
        document.focus_line = point.line
        token = document.token_at(point)
        if token is None:
            return None
        text = document.lines[token.line]
        # A lone line-ending token of "\r\n" has no LSP range: positions cannot point
        # between "\r" and "\n".
        representable = token.end <= content_length(text) or (
            token.end == len(text) and token.start == content_length(text)
        )
        markdown = hover_markdown(
            token,
            document.tokenizer.tokenizer.derivation(token.piece),
            server.tokenizer_label(),
            server.messages,
            compare_hover_lines(server, token),
        )
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown),
            range=snapshot.range(token.start_point, token.end_point) if representable else None,
        )
