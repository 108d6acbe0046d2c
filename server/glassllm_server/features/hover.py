"""Hover: the token under the cursor, with its range covering exactly its characters."""

from __future__ import annotations

from collections.abc import Callable

from lsprotocol import types

from glassllm.models import ModelTokenizer
from glassllm_server.features.compare import compare_hover_lines
from glassllm_server.features.feature import Feature, on_document
from glassllm_server.messages import Messages
from glassllm_server.positions import content_length
from glassllm_server.render.hover import hover_markdown
from glassllm_server.render.markdown import code
from glassllm_server.snapshot import DocumentSnapshot

__all__ = ["Hover", "model_lines"]


def model_lines(model: ModelTokenizer, messages: Messages) -> list[str]:
    """What a real model's hover and stats say of it: its format and what orders its
    merges (no training counts), its special-token mode, what it adds around a text."""
    lines = [
        messages("hover.model", kind=model.kind, priority=messages(f"hover.priority.{model.priority_name}")),
        messages("hover.specials.matched" if model.match_specials else "hover.specials.ordinary"),
    ]
    before, after = model.around
    if before or after:
        lines.append(
            messages(
                "hover.around",
                before=_pieces(model, before) or messages("hover.nothing"),
                after=_pieces(model, after) or messages("hover.nothing"),
            )
        )
    return lines


def _pieces(model: ModelTokenizer, ids: tuple[int, ...]) -> str:
    return " ".join(code(f"{piece} ({token_id})") for piece, token_id in zip(model.tokens(ids), ids, strict=True))


def _priority(model: ModelTokenizer, messages: Messages) -> Callable[[str, str], str]:
    name = messages(f"hover.priority.{model.priority_name}")

    def priority(left: str, right: str) -> str:
        found = model.priority(left, right)
        return f"{name} {found:g}" if isinstance(found, float) else f"{name} {found}"

    return priority


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
        # A token that starts or ends between "\r" and "\n" has no LSP range: positions
        # cannot point there.
        representable = all(
            point.column <= content_length(document.lines[point.line])
            or point.column == len(document.lines[point.line])
            for point in (token.start_point, token.end_point)
        )
        line_tokenizer = document.tokenizer
        tokenizer = line_tokenizer.tokenizer
        model = line_tokenizer.model
        matched = model is not None and model.is_matched(token.id)
        markdown = hover_markdown(
            token,
            [] if matched else tokenizer.derivation(token.piece),
            server.tokenizer_label(),
            server.messages,
            compare_hover_lines(server, token),
            unknown=token.id == line_tokenizer.unk_id,
            show=tokenizer.readable,
            priority=None if model is None else _priority(model, server.messages),
            model=None
            if model is None
            else [*(server.messages("hover.matched"),) * matched, *model_lines(model, server.messages)],
        )
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown),
            range=snapshot.range(token.start_point, token.end_point) if representable else None,
        )
