"""Positions shown to a person: ``line:column``, both counted from 1 as editors show them.

Code counts from 0 and ends a span after its last character (``text[start:end]``). A
person names a span by its first and last characters: "chuva" in ``Era uma vez, na
chuva`` is ``1:17–1:21``. Every position or span that the command line, the language
server's hovers or its explanation pages show goes through :func:`place` or
:func:`span`, so they all follow this one rule. Columns count characters (code points),
in the original text, before NFC.
"""

from __future__ import annotations

import bisect
import re

__all__ = ["TextPlaces", "columns", "place", "span"]

_LINE_END = re.compile(r"\r\n|\n|\r")


def place(line: int, column: int) -> str:
    """``(0, 0)`` → ``"1:1"``: a 0-based line and column as a person reads them."""
    return f"{line + 1}:{column + 1}"


def span(first: tuple[int, int], last: tuple[int, int]) -> str:
    """The span whose first and last characters are at the 0-based ``first`` and
    ``last`` (both included): ``"1:17–1:21"``, or ``"1:17"`` for a single character."""
    return place(*first) if first == last else f"{place(*first)}–{place(*last)}"


def columns(line: int, start: int, end: int) -> str:
    """Columns ``[start, end)`` of 0-based line ``line`` as :func:`span` shows them (an
    empty span: where it is)."""
    return span((line, start), (line, max(start, end - 1)))


class TextPlaces:
    """Where a text's code-point offsets are, as (line, column) and as a person reads
    them; lines end at ``\\n``, ``\\r\\n`` or ``\\r`` as the Language Server Protocol (and
    so the editors) count them. The language server's ``positions.LineIndex`` has
    another job: the LSP positions of an open document, in the negotiated code units."""

    def __init__(self, text: str) -> None:
        self.starts = [0] + [match.end() for match in _LINE_END.finditer(text)]

    def point(self, offset: int) -> tuple[int, int]:
        """The 0-based (line, column) of the character at ``offset``."""
        line = bisect.bisect_right(self.starts, offset) - 1
        return line, offset - self.starts[line]

    def span(self, start: int, end: int) -> str:
        """``text[start:end]`` as :func:`span` shows it (an empty span: where it is)."""
        return span(self.point(start), self.point(max(start, end - 1)))
