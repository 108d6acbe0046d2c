"""Hover: the token under the cursor, with its range covering exactly its characters."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from lsprotocol import types

from glassllm.shown.visible import visible
from glassllm_server.document import DocumentToken
from glassllm_server.feature import Feature, on_document
from glassllm_server.line_tokenizer import LineTokenizer
from glassllm_server.messages import Messages
from glassllm_server.positions import Point, content_length
from glassllm_server.render.chat import chat_hover
from glassllm_server.render.comparison import hover_lines
from glassllm_server.render.hover import hover_markdown
from glassllm_server.render.markdown import code
from glassllm_server.render.model import facts_lines
from glassllm_server.snapshot import DocumentSnapshot

__all__ = ["CHAT_HOVER_WAIT", "HOVER_CANDIDATES", "Hover"]

# The prefixes a hover names per position of a greedy search, the longest (the rest are
# counted; the explanation page names them all): a word of 100 characters tries 5,050.
HOVER_CANDIDATES = 8

# How long a hover on a chat document waits for its conversation's encoding (a template
# being rendered) before it answers with the plain tokens under the cursor.
CHAT_HOVER_WAIT = 1.0


def _priority(tokenizer: LineTokenizer, messages: Messages) -> Callable[[str, str], str | None]:
    """Each merge's rank in the hover's chain, as the explanation gives it, with the
    score that ordered it where scores do (SentencePiece); none where the tokenizer
    shows none (see :meth:`LineTokenizer.merge_order`)."""
    rank_word, score_word = messages("hover.priority.rank"), messages("hover.priority.score")

    def priority(left: str, right: str) -> str | None:
        found = tokenizer.merge_order(left, right)
        if found is None:
            return None
        rank, score = found
        return f"{rank_word} {rank}" if score is None else f"{score_word} {score:g}, {rank_word} {rank}"

    return priority


class Hover(Feature):
    @on_document(types.TEXT_DOCUMENT_HOVER)
    async def hover(self, snapshot: DocumentSnapshot, params: types.HoverParams) -> types.Hover | None:
        session, document = self.session, snapshot.document
        messages = session.messages
        # Only the token's line is needed: its index in the document, which needs every
        # line above tokenized, shows as "still counting" until the background work is
        # there (a large document just opened). Never wait for other lines.
        point = snapshot.point(params.position)
        session.focus(snapshot.uri, point.line)
        chat = await self._chat_hover(snapshot, point)
        if chat is not None:
            return chat[0]
        holders = document.tokens_at(point)
        if not holders:
            return None
        token = holders[0]
        # A token that starts or ends between "\r" and "\n" has no LSP range: positions
        # cannot point there.
        start = min(holder.start_point for holder in holders)
        end = max(holder.end_point for holder in holders)
        representable = all(
            place.column <= content_length(document.lines[place.line])
            or place.column == len(document.lines[place.line])
            for place in (start, end)
        )
        line_tokenizer = document.tokenizer
        tokenizer = line_tokenizer.tokenizer
        matched = line_tokenizer.is_matched(token.id)
        split = (
            []
            if len(holders) < 2
            else [_split_line(document.lines[point.line][point.column], holders, tokenizer.readable, messages)]
        )
        markdown = hover_markdown(
            token,
            [] if matched else tokenizer.derivation(token.piece),
            self.tokenizers.label(),
            messages,
            hover_lines(token.chunk.text, self.tokenizers.compared(), self.tokenizers.label, messages, code),
            unknown=token.id == line_tokenizer.unk_id,
            show=tokenizer.readable,
            priority=_priority(line_tokenizer, messages),
            facts=[*(messages("hover.matched"),) * matched, *split, *facts_lines(line_tokenizer.facts, messages)],
            search=[]
            if matched
            else line_tokenizer.search_lines(
                token.chunk.text, messages.locale, lambda piece: code(tokenizer.readable(piece)), HOVER_CANDIDATES
            ),
        )
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown),
            # Over a character split over several tokens, the range covers them all.
            range=snapshot.range(start, end) if representable else None,
        )

    async def _chat_hover(self, snapshot: DocumentSnapshot, point: Point) -> tuple[types.Hover | None] | None:
        """On a chat document, the hover of the message token at ``point`` (none off
        the messages' text, which the model does not receive); None: the plain road."""
        unit = self.chats.ready_unit(snapshot, point.line)
        if unit is False:
            try:
                unit = await asyncio.wait_for(asyncio.shield(self.chats.unit(snapshot, point.line)), CHAT_HOVER_WAIT)
            except TimeoutError:
                unit = None
        if not unit:
            return None
        index = unit.token_at(point)
        if index is None:
            return (None,)
        markdown = chat_hover(unit, index, snapshot.document.tokenizer.tokenizer.readable, self.session.messages)
        return (
            types.Hover(
                contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown),
                range=snapshot.range(*unit.token_range(index)),
            ),
        )


def _split_line(character: str, holders: list[DocumentToken], show: Callable[[str], str], messages: Messages) -> str:
    """What the hover says of a character whose UTF-8 several tokens hold: each of them."""
    tokens = ", ".join(f"{code(show(holder.piece))} ({messages('hover.id', id=holder.id)})" for holder in holders)
    return messages(
        "hover.split",
        character=code(visible(character)),
        codepoint=f"U+{ord(character):04X}",
        count=len(holders),
        tokens=tokens,
    )
