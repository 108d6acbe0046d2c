"""The code lens's title: the document's token count and characters per token."""

from __future__ import annotations

from glassllm_server.document import Stats
from glassllm_server.messages import Messages

__all__ = ["lens_title"]


def lens_title(stats: Stats, messages: Messages) -> str:
    """``1,234 tokens · 3.9 chars/token`` (``1.234 tokens · 3,9 caracteres/token`` in pt)."""
    if stats.tokens == 0:
        return messages("lens.empty")
    word = messages("word.token" if stats.tokens == 1 else "word.tokens")
    return messages(
        "lens.count",
        tokens=messages.integer(stats.tokens),
        token_word=word,
        ratio=messages.decimal(stats.characters / stats.tokens),
    )
