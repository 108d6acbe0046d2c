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

from glassllm_server.document import Document, LineTokens
from glassllm_server.positions import Point, content_length
from glassllm_server.settings import Settings

__all__ = ["LABELS", "Hint", "hint_window", "inlay_hints", "line_hints"]

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


def line_hints(text: str, tokens: LineTokens, switches: tuple[bool, bool, bool]) -> list[tuple[int, str, int]]:
    """``(column, kind, token column)`` of every hint of one line, in column order.

    ``switches`` are (chunk boundaries, space markers, token boundaries).
    """
    chunks, spaces, inner = switches
    content = content_length(text)
    found: list[tuple[int, str, int]] = []
    previous_end, previous_chunk = 0, -1
    for span in tokens.spans():
        column = span.start
        if span.start != span.end and 0 < column < content and column == previous_end:
            if span.chunk != previous_chunk:
                if chunks:
                    found.append((column, "chunk", column))
            elif inner:
                found.append((column, "token", column))
        previous_end, previous_chunk = span.end, span.chunk
    if spaces:
        offset = text.find(" ")
        while offset >= 0:
            found.append((offset + 1, "space", offset))
            offset = text.find(" ", offset + 1)
        found.sort(key=lambda hint: hint[0])
    return found


def hint_window(document: Document, start: Point, end: Point, max_lines: int) -> tuple[Point, Point]:
    """``[start, end]`` cut to ``max_lines`` lines around the document's
    :attr:`~Document.focus_line` (where the user last edited or hovered).

    Some clients (Neovim) ask for the whole document's hints, which for a large one
    means millions of them.
    """
    if end < start:
        start, end = end, start
    if end.line - start.line + 1 <= max_lines:
        return start, end
    first = min(max(document.focus_line - max_lines // 2, start.line), end.line - max_lines + 1)
    last = first + max_lines - 1
    if first > start.line:
        start = Point(first, 0)
    if last < end.line:
        end = Point(last, len(document.lines[last]))
    return start, end


def inlay_hints(document: Document, start: Point, end: Point, settings: Settings) -> list[Hint]:
    """The hints whose position lies within ``[start, end]``, in document order."""
    if end < start:
        start, end = end, start
    switches = (settings.chunk_boundaries, settings.space_markers, settings.token_boundaries)
    if not any(switches):
        return []
    hints: list[Hint] = []
    for line in range(start.line, end.line + 1):
        low = start.column if line == start.line else 0
        high = end.column if line == end.line else len(document.lines[line])
        for column, kind, token_column in line_hints(document.lines[line], document.line_tokens(line), switches):
            if low <= column <= high:
                hints.append(Hint(Point(line, column), kind, token_column))  # type: ignore[arg-type]
    return hints
