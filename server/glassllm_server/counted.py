"""What a count is taken of: the whole document, or one line of a JSONL dataset.

Budgets (a limit per document, or per line of a dataset) and the status bar and code
lens read counts through :class:`CountedUnit`, whoever produced them: the document's own
tokens for plain text, a chat encoding for a conversation (where the model receives
tokens the template adds, which no line of the document holds). A unit knows where each
of its tokens is, so a diagnostic lands on the first token past a budget.
"""

from __future__ import annotations

from typing import Protocol

from glassllm_server.positions import Point

__all__ = ["CountedUnit"]


class CountedUnit(Protocol):
    """One counted thing of a document, in code-point :class:`Point` positions."""

    @property
    def count(self) -> int:
        """Every token the model receives for it, the template's included."""
        ...

    @property
    def template_count(self) -> int:
        """Of :attr:`count`, the tokens a chat template added (0 for plain text)."""
        ...

    @property
    def first_line(self) -> int:
        """The document line it starts on (where its code lens sits)."""
        ...

    def token_range(self, index: int) -> tuple[Point, Point]:
        """Where token ``index`` (0-based, ``0 <= index < count``) is in the document. A
        template's token, which the document does not hold, gets the empty range where
        the template inserted it."""
        ...
