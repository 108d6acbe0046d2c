"""What a request works on: one document as it was when the request arrived.

Handlers receive a :class:`DocumentSnapshot` as a parameter (see
:mod:`glassllm_server.feature`), so their signature says what they may read; it
also converts between the document's points and LSP positions in the negotiated encoding.
No pygls here.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types

from glassllm_server.document import ReadOnlyDocument
from glassllm_server.positions import Encoding, Point

__all__ = ["DocumentSnapshot"]


@dataclass(frozen=True)
class DocumentSnapshot:
    """A document version no edit changes, and the client's position encoding."""

    document: ReadOnlyDocument
    encoding: Encoding

    @property
    def uri(self) -> str:
        return self.document.uri

    def point(self, position: types.Position) -> Point:
        """The document point an LSP position denotes (clamped as the spec says)."""
        return self.document.index.clamp(position.line, position.character, self.encoding)

    def points(self, lsp_range: types.Range) -> tuple[Point, Point]:
        """The points of an LSP range, in document order whichever way it was given."""
        start, end = self.point(lsp_range.start), self.point(lsp_range.end)
        return (start, end) if start <= end else (end, start)

    def position(self, point: Point) -> types.Position:
        """The LSP position of a document point."""
        line, character = self.document.index.point_position(point, self.encoding)
        return types.Position(line=line, character=character)

    def range(self, start: Point, end: Point) -> types.Range:
        return types.Range(start=self.position(start), end=self.position(end))

    def position_json(self, line: int, column: int) -> dict[str, int]:
        """The LSP position of a line and code-point column, as JSON."""
        position = self.position(Point(line, column))
        return {"line": position.line, "character": position.character}
