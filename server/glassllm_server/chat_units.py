"""A conversation of a chat document as the model receives it, placed on the document.

:class:`ChatUnit` is one conversation (a chat JSON document, or one line of a JSONL
dataset) encoded through its model's chat template (:func:`glassllm.chat.encode_chat`),
and the map from its tokens to the document: a message's token covers exactly the
characters of the JSON string that hold its text, escapes whole
(:mod:`glassllm_server.json_strings`); a token the template wrote, which the document does
not hold, sits at the empty range where the template inserted it — before the next
message's text, or after the last one's. It is a
:class:`~glassllm_server.counted.CountedUnit`. No pygls here.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from glassllm.chat import ChatEncoding, Conversation, TokenSource
from glassllm.pipeline.tokens import TokenSpan
from glassllm_server.json_strings import JsonPath, JsonString, JsonText
from glassllm_server.positions import Point

__all__ = ["ChatUnit", "MessageText", "TemplateRun", "message_texts"]


class MessageText(NamedTuple):
    """A stretch of a message's content text: the JSON string that holds it, from code
    point ``offset`` of the content text on."""

    offset: int
    string: JsonString


class TemplateRun(NamedTuple):
    """Template tokens ``first..stop-1`` in a row, which the template inserts at ``at``."""

    at: Point
    first: int
    stop: int


def message_texts(parsed: JsonText, conversation: Conversation) -> list[list[MessageText]]:
    """For each message, the JSON strings of its content text, in order (see
    :meth:`Conversation.parts`: a string content, or its text parts)."""
    prefix: JsonPath = ("messages",) if isinstance(parsed.value, dict) else ()
    texts = []
    for number, message in enumerate(conversation.messages):
        content: Any = message.get("content")
        paths: list[JsonPath] = []
        if isinstance(content, str):
            paths = [(*prefix, number, "content")]
        elif isinstance(content, list):
            paths = [
                (*prefix, number, "content", index, "text")
                for index, part in enumerate(content)
                if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
            ]
        offset, found = 0, []
        for path in paths:
            string = parsed.strings[path]
            found.append(MessageText(offset, string))
            offset += len(string.text)
        texts.append(found)
    return texts


@dataclass
class ChatUnit:
    """One conversation of a document, its encoding placed on the document's lines.

    Its strings' points are those of the text it was parsed from; ``first_line`` is where
    that text starts in the document (a JSONL line's number), added to every point."""

    encoding: ChatEncoding
    texts: list[list[MessageText]]  # per message (see message_texts)
    roles: list[str]
    # Message tokens that the template's tokenization reads as special tokens (typed
    # text acting as markup), and the BOS piece when both the template and the
    # tokenizer's post-processor add it ("" when not): the library's warnings, placed.
    injected: tuple[int, ...] = ()
    double_bos: str = ""
    first_line: int = 0
    _anchors: list[Point] | None = field(default=None, repr=False)
    _by_message: dict[int, tuple[list[int], list[int]]] | None = field(default=None, repr=False)

    # CountedUnit

    @property
    def count(self) -> int:
        return self.encoding.count

    @property
    def template_count(self) -> int:
        return self.encoding.template_count

    def token_range(self, index: int) -> tuple[Point, Point]:
        source = self.encoding.tokens[index].source
        if source is None:
            at = self._anchor_points()[index]
            return at, at
        return self.source_range(source)

    # Where things are

    def moved(self, first_line: int) -> ChatUnit:
        """The same unit, its text starting at line ``first_line`` of the document."""
        if first_line == self.first_line:
            return self
        return ChatUnit(
            self.encoding, self.texts, self.roles, self.injected, self.double_bos, first_line, None, self._by_message
        )

    def _point(self, string: JsonString, offset: int) -> Point:
        line, column = string.point(offset)
        return Point(line + self.first_line, column)

    def text_point(self, message: int, offset: int, end: bool = False) -> Point:
        """Where code point ``offset`` of message ``message``'s content text is (``end``:
        where the code point before it ends, which differs between two text parts)."""
        texts = self.texts[message]
        starts = [text.offset for text in texts]
        number = (bisect_left if end else bisect_right)(starts, offset) - 1
        text = texts[max(number, 0)]
        return self._point(text.string, min(offset - text.offset, len(text.string.text)))

    def source_range(self, source: TokenSource) -> tuple[Point, Point]:
        """The document range of a message's stretch of text."""
        return self.text_point(source.message, source.start), self.text_point(source.message, source.end, end=True)

    def _anchor_points(self) -> list[Point]:
        """Each token's place: a message's where its text starts, the template's where
        the next message's text starts (after the last one's, where that ends)."""
        if self._anchors is None:
            tokens = self.encoding.tokens
            places: list[Point] = [Point(self.first_line, 0)] * len(tokens)
            after = next(
                (self.source_range(token.source)[1] for token in reversed(tokens) if token.source is not None),
                Point(self.first_line, 0),
            )
            for number in range(len(tokens) - 1, -1, -1):
                source = tokens[number].source
                if source is not None:
                    after = self.text_point(source.message, source.start)
                places[number] = after
            self._anchors = places
        return self._anchors

    def template_runs(self, first_line: int, last_line: int) -> list[TemplateRun]:
        """The runs of template tokens inserted on lines ``first_line..last_line``."""
        anchors, tokens = self._anchor_points(), self.encoding.tokens
        runs: list[TemplateRun] = []
        number = 0
        while number < len(tokens):
            if tokens[number].source is not None:
                number += 1
                continue
            stop = number
            while stop < len(tokens) and tokens[stop].source is None:
                stop += 1
            if first_line <= anchors[number].line <= last_line:
                runs.append(TemplateRun(anchors[number], number, stop))
            number = stop
        return runs

    def line_spans(self, first_line: int, last_line: int) -> dict[int, list[TokenSpan]]:
        """The message tokens on lines ``first_line..last_line``, by line, each as a span
        of its line's columns (a token over two text parts, on two lines, left out)."""
        found: dict[int, list[TokenSpan]] = {}
        for number, token in enumerate(self.encoding.tokens):
            if token.source is None:
                continue
            start, end = self.source_range(token.source)
            if start.line == end.line and first_line <= start.line <= last_line and start < end:
                found.setdefault(start.line, []).append(
                    TokenSpan(token.id, token.piece, start.column, end.column, number)
                )
        return found

    def template_text(self, run: TemplateRun) -> str:
        """What the template writes in ``run``, as the rendered prompt has it."""
        tokens = self.encoding.tokens
        return self.encoding.rendered[tokens[run.first].start : tokens[run.stop - 1].end]

    def token_at(self, point: Point) -> int | None:
        """The index of the message token holding the character at ``point``; None off
        the messages' text."""
        for message, texts in enumerate(self.texts):
            for text in texts:
                string = text.string
                if string.line + self.first_line != point.line:
                    continue
                offset = string.offset_at(point.column)
                if offset is not None:
                    return self._token_of(message, text.offset + offset)
        return None

    def _token_of(self, message: int, offset: int) -> int | None:
        if self._by_message is None:
            found: dict[int, tuple[list[int], list[int]]] = {}
            for number, token in enumerate(self.encoding.tokens):
                if token.source is not None:
                    ends, numbers = found.setdefault(token.source.message, ([], []))
                    ends.append(token.source.end)
                    numbers.append(number)
            self._by_message = found
        ends, numbers = self._by_message.get(message, ([], []))
        place = bisect_right(ends, offset)
        if place == len(ends):
            return None
        source = self.encoding.tokens[numbers[place]].source
        return numbers[place] if source is not None and source.start <= offset else None
