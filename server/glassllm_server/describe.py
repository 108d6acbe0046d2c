"""What the server says about tokens: hover text, the code-lens title, pieces as code spans.

Pure text building over :mod:`document` and :mod:`messages`; no pygls here.
"""

from __future__ import annotations

from glassllm.places import columns
from glassllm.tokenizer import UNK_ID
from glassllm.visible import visible
from glassllm_server.document import DocumentToken, Stats
from glassllm_server.messages import Messages

__all__ = ["code", "derivation_line", "hover_markdown", "lens_title"]


def code(text: str) -> str:
    """A Markdown code span showing ``text`` literally (backticks inside included), its
    invisible characters written out by glassllm's one rule (:func:`glassllm.visible.visible`)."""
    text = visible(text)
    fence = "`"
    while fence in text:
        fence += "`"
    padding = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{padding}{text}{padding}{fence}"


def derivation_line(steps: list[tuple[str, str, str]]) -> str:
    """``[("▁vez", "▁ve", "z"), ("▁ve", "▁v", "e")]`` → ``▁vez ← ▁ve + z ← ▁v + e``."""
    if not steps:
        return ""
    parts = [visible(steps[0][0])]
    parts.extend(f"{visible(left)} + {visible(right)}" for _, left, right in steps)
    return " ← ".join(parts)


def hover_markdown(
    token: DocumentToken,
    derivation: list[tuple[str, str, str]],
    tokenizer_label: str,
    messages: Messages,
    compared: list[str] | None = None,  # after the tokenizer: how compared ones split the chunk
) -> str:
    """The hover for one token: piece, ID, where it is, index, chunk and its pieces,
    merges, tokenizer."""
    head = f"**{code(token.piece)}** · {messages('hover.id', id=token.id)}"
    if token.id == UNK_ID:
        head += f" · {messages('hover.unknown')}"
    head += f" · {messages('hover.at', span=columns(token.line, token.start, token.end))}"
    if token.index is None:
        head += f" · {messages('hover.index_pending')}"
    else:
        head += f" · {messages('hover.index', index=messages.integer(token.index))}"
    pieces = " ".join(
        f"**{code(piece)}**" if number == token.piece_index else code(piece)
        for number, piece in enumerate(token.chunk.pieces)
    )
    lines = [head, messages("hover.chunk", chunk=code(token.chunk.text), pieces=pieces)]
    if derivation:
        lines.append(messages("hover.derivation", derivation=code(derivation_line(derivation))))
    else:
        lines.append(messages("hover.single"))
    lines.append(messages("hover.tokenizer", name=tokenizer_label))
    lines.extend(compared or ())
    lines.append(f"*{messages('hover.explain')}*")
    return "\n\n".join(lines)


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
