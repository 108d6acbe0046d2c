"""The code lens's title: the document's token count and characters per token, and its
use of a token budget."""

from __future__ import annotations

from glassllm_server.document import Stats
from glassllm_server.messages import Messages

__all__ = ["lens_title"]


def lens_title(stats: Stats, messages: Messages, budget: tuple[int, int, str | None] | None = None) -> str:
    """``1,234 tokens · 3.9 chars/token`` (``1.234 tokens · 3,9 caracteres/token`` in pt).

    With ``budget`` (its count, its limit, and its tokenizer in words when it is not the
    document's): ``3,900 / 4,096 tokens · 3.9 chars/token``, or with another tokenizer
    the budget's use after the count: ``1,234 tokens · 3.9 chars/token · 3,900 / 4,096
    (Portuguese)``.
    """
    use = None
    if budget is not None:
        use = messages("budget.use", tokens=messages.integer(budget[0]), limit=messages.integer(budget[1]))
    own = budget is not None and budget[2] is None
    if stats.tokens == 0:
        return f"{use} {messages('word.tokens')}" if own else messages("lens.empty")
    word = messages("word.token" if stats.tokens == 1 else "word.tokens")
    count = use if own else messages.integer(stats.tokens)
    title = messages(
        "lens.count", tokens=count, token_word=word, ratio=messages.decimal(stats.characters / stats.tokens)
    )
    if budget is None or own:
        return title
    return f"{title} · {use} ({budget[2]})"
