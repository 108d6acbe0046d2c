"""Which inlay hints a range of a document gets: chunk boundaries, ▁ markers, token boundaries.

- a chunk boundary ``¦`` between two chunks of a line (none at a line's start, nor before
  its line ending, where the boundary is plain to see);
- a ``▁`` after each space: the space travels as the marker at the front of the next
  piece (``Era ▁uma ▁vez``);
- a token boundary ``·`` between two tokens of one chunk (off by default).

Each hint records the column of the token it describes, for ``inlayHint/resolve``.
No pygls here.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from glassllm_server.document import Document
from glassllm_server.positions import Point, content_length
from glassllm_server.settings import Settings

__all__ = ["LABELS", "Hint", "inlay_hints"]

HintKind = Literal["chunk", "space", "token"]
LABELS: dict[HintKind, str] = {"chunk": "¦", "space": "▁", "token": "·"}


class Hint(NamedTuple):
    """An inlay hint at ``point``, describing the token at column ``token_column``."""

    point: Point
    kind: HintKind
    token_column: int

    @property
    def label(self) -> str:
        return LABELS[self.kind]


def inlay_hints(document: Document, start: Point, end: Point, settings: Settings) -> list[Hint]:
    """The hints whose position lies within ``[start, end]``, in document order."""
    if end < start:
        start, end = end, start
    wanted = (settings.chunk_boundaries, settings.space_markers, settings.token_boundaries)
    if not any(wanted):
        return []
    hints: list[Hint] = []
    for line in range(start.line, end.line + 1):
        low = start.column if line == start.line else 0
        text = document.lines[line]
        content = content_length(text)
        high = min(end.column if line == end.line else content, content)
        previous_end, previous_chunk = 0, -1
        for span in document.line_tokens(line).spans():
            if span.start > high:
                break
            column = span.start
            boundary = 0 < column < content and column == previous_end and column >= low
            if boundary and span.start != span.end:
                if span.chunk != previous_chunk:
                    if settings.chunk_boundaries:
                        hints.append(Hint(Point(line, column), "chunk", column))
                elif settings.token_boundaries:
                    hints.append(Hint(Point(line, column), "token", column))
            if settings.space_markers:
                for offset in range(max(span.start, low - 1), min(span.end, high)):
                    if text[offset] == " ":
                        hints.append(Hint(Point(line, offset + 1), "space", offset))
            previous_end, previous_chunk = span.end, span.chunk
    hints.sort(key=lambda hint: hint.point)
    return hints
