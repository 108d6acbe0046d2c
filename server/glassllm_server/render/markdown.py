"""Markdown the pages and the hover share: pieces as code spans."""

from __future__ import annotations

from glassllm.shown.visible import visible

__all__ = ["code"]


def code(text: str) -> str:
    """A Markdown code span showing ``text`` literally (backticks inside included), its
    invisible characters written out by glassllm's one rule (:func:`glassllm.shown.visible.visible`)."""
    text = visible(text)
    fence = "`"
    while fence in text:
        fence += "`"
    padding = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{padding}{text}{padding}{fence}"
