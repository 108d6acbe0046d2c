"""The hover for one token: its piece and ID, where it is, its index in the document,
its chunk's pieces, the merges that made it, the tokenizer, and how compared ones split it."""

from __future__ import annotations

from glassllm.places import columns
from glassllm.tokenizer import UNK_ID
from glassllm.visible import visible
from glassllm_server.document import DocumentToken
from glassllm_server.messages import Messages
from glassllm_server.render.markdown import code

__all__ = ["derivation_line", "hover_markdown"]


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
