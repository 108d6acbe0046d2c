"""Positions: code-point offsets ⇄ LSP positions, the one place that converts them.

The server's core works in code points (Python ``str`` indices). LSP counts a position's
``character`` in the negotiated encoding's code units: UTF-8 bytes, UTF-16 code units
(an emoji outside the BMP is two) or UTF-32 code points. LSP breaks lines only at
``\\n``, ``\\r\\n`` and ``\\r`` — never at form feed, U+2028 and the other breaks that
``str.splitlines`` knows.

Clamping follows the specification: a ``character`` past the end of its line means the
end of the line's content (before its line ending), and a line past the last means the
end of the document. A ``character`` that falls inside one code point (half of a UTF-16
surrogate pair, the middle of a UTF-8 sequence) rounds down to that code point's start.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import accumulate
from typing import Literal, NamedTuple

__all__ = [
    "ENCODINGS",
    "Encoding",
    "LineIndex",
    "Point",
    "column_units",
    "columns_to_units",
    "content_length",
    "split_lines",
    "units_to_columns",
]

Encoding = Literal["utf-8", "utf-16", "utf-32"]
ENCODINGS: tuple[Encoding, ...] = ("utf-8", "utf-16", "utf-32")

# A line is everything up to and including its ending; the last line has none.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)")


class Point(NamedTuple):
    """A place in a document: LSP line number and code-point column within the line."""

    line: int
    column: int


def split_lines(text: str) -> list[str]:
    """Split ``text`` at LSP line breaks, each line keeping its ending.

    The result always has one entry per LSP line: the last entry has no line ending and
    may be empty (``""`` → ``[""]``, ``"a\\n"`` → ``["a\\n", ""]``).
    """
    # The pattern only runs up to the last ending: on the unended last line it would
    # fail from each of its positions after scanning to its end (quadratic).
    end = max(text.rfind("\n"), text.rfind("\r")) + 1
    lines = _LINE.findall(text, 0, end)
    lines.append(text[end:])
    return lines


def content_length(line: str) -> int:
    """Length in code points of ``line`` without its line ending."""
    if line.endswith("\n"):
        return len(line) - (2 if line.endswith("\r\n") else 1)
    if line.endswith("\r"):
        return len(line) - 1
    return len(line)


def columns_to_units(text: str, columns: int, encoding: Encoding) -> int:
    """How many code units of ``encoding`` the first ``columns`` code points of ``text`` take."""
    prefix = text[:columns]
    if encoding == "utf-32" or prefix.isascii():
        return len(prefix)
    if encoding == "utf-16":
        return len(prefix.encode("utf-16-le", "surrogatepass")) // 2
    return len(prefix.encode("utf-8", "surrogatepass"))


def units_to_columns(text: str, units: int, encoding: Encoding) -> int:
    """How many whole code points of ``text`` fit in ``units`` code units of ``encoding``.

    Past the end gives ``len(text)``; inside a code point rounds down to its start.
    """
    units = max(units, 0)
    if encoding == "utf-32" or text.isascii():
        return min(units, len(text))
    # ``units`` units never hold more code points than that: encode no more.
    if encoding == "utf-16":
        data = text[:units].encode("utf-16-le", "surrogatepass")[: 2 * units]
        return len(data.decode("utf-16-le", "ignore"))
    data = text[:units].encode("utf-8", "surrogatepass")[:units]
    return len(data.decode("utf-8", "ignore"))


def column_units(text: str, encoding: Encoding) -> list[int] | None:
    """Code units before each column of ``text`` (``len(text) + 1`` entries), or None
    when every code point is one unit (then columns are units)."""
    if encoding == "utf-32" or text.isascii():
        return None
    if encoding == "utf-16":
        if max(text) < "\U00010000":
            return None
        sizes = [2 if character > "\uffff" else 1 for character in text]
    else:
        sizes = [len(character.encode("utf-8", "surrogatepass")) for character in text]
    return [0, *accumulate(sizes)]


class LineIndex:
    """Points ⇄ LSP positions for one version of a document's text, and points' offsets.

    Built from the lines as :func:`split_lines` gives them. Offsets are code-point offsets
    into the whole text; positions are ``(line, character)`` in the given encoding's units.
    """

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = lines
        self._starts: list[int] | None = None

    @property
    def starts(self) -> list[int]:
        """Offset of each line's start, then the text's length (computed on first use)."""
        if self._starts is None:
            self._starts = [0, *accumulate(map(len, self.lines))]
        return self._starts

    def point_offset(self, point: Point) -> int:
        """Code-point offset of a :class:`Point`."""
        return self.starts[point.line] + point.column

    def clamp(self, line: int, character: int, encoding: Encoding) -> Point:
        """The :class:`Point` an LSP position denotes, clamped as the specification says."""
        if line < 0:
            return Point(0, 0)
        if line >= len(self.lines):
            last = len(self.lines) - 1
            return Point(last, len(self.lines[last]))
        text = self.lines[line]
        # Counted on the whole line and then cut to its content: no copy of a long line.
        return Point(line, min(units_to_columns(text, character, encoding), content_length(text)))

    def point_position(self, point: Point, encoding: Encoding) -> tuple[int, int]:
        """LSP ``(line, character)`` of a :class:`Point`.

        The end of a line (after its ending) is the start of the next line; a column
        inside a line ending is the end of the line's content.
        """
        text = self.lines[point.line]
        if point.column >= len(text) and point.line + 1 < len(self.lines):
            return point.line + 1, 0
        column = min(point.column, content_length(text))
        return point.line, columns_to_units(text, column, encoding)
