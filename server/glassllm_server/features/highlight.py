"""Document highlight: the token under the cursor and every other occurrence of its ID
in the text around it.

LSP does not say which part of the document is visible, so "visible" is taken as the
lines within :data:`NEARBY_LINES` of the cursor (and on a very long line, the columns
within :data:`NEARBY_COLUMNS`), more than any editor window shows.
"""

from __future__ import annotations

from collections.abc import Iterable

from lsprotocol import types

from glassllm_server.document import ReadOnlyDocument
from glassllm_server.feature import Feature, on_document
from glassllm_server.positions import Point, content_length
from glassllm_server.snapshot import DocumentSnapshot

__all__ = ["HIGHLIGHT_LIMIT", "NEARBY_COLUMNS", "NEARBY_LINES", "Highlight"]

NEARBY_LINES = 200
# On a very long line, the characters within this many columns of the cursor.
NEARBY_COLUMNS = 20_000
# A one-character token ("a", "▁") can occur thousands of times near the cursor.
HIGHLIGHT_LIMIT = 2000


class Highlight(Feature):
    @on_document(types.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
    async def highlight(
        self, snapshot: DocumentSnapshot, params: types.DocumentHighlightParams
    ) -> list[types.DocumentHighlight]:
        document = snapshot.document
        point = snapshot.point(params.position)
        token = document.meant_token(point)
        if token is None:
            return []
        found = _nearby_occurrences(document, point, token.id)
        return [
            types.DocumentHighlight(
                range=snapshot.range(Point(line, start), Point(line, end)),
                kind=types.DocumentHighlightKind.Text,
            )
            for line, start, end in sorted(found[:HIGHLIGHT_LIMIT])
        ]


def _nearby_occurrences(document: ReadOnlyDocument, point: Point, token_id: int) -> list[tuple[int, int, int]]:
    """``(line, start, end)`` of tokens ``token_id`` near ``point``, nearest lines first,
    so that :data:`HIGHLIGHT_LIMIT` drops the far ones."""
    first = max(point.line - NEARBY_LINES, 0)
    last = min(point.line + NEARBY_LINES, len(document.lines) - 1)
    found: list[tuple[int, int, int]] = []
    for line in sorted(range(first, last + 1), key=lambda number: abs(number - point.line)):
        content = content_length(document.lines[line])
        tokens = document.line_tokens(line)
        columns: Iterable[tuple[int, int]]
        if content > NEARBY_COLUMNS:
            # A very long line: the part around the cursor's column, as for lines.
            column = point.column if line == point.line else 0
            spans = tokens.window(max(column - NEARBY_COLUMNS, 0), column + NEARBY_COLUMNS)[1]
            columns = ((span.start, span.end) for span in spans if span.id == token_id)
        else:
            columns = tokens.occurrences(token_id)
        found.extend((line, start, end) for start, end in columns if start < end <= content)
        if len(found) >= HIGHLIGHT_LIMIT:
            break
    return found
