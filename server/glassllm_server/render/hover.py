"""The hover for one token: its piece and ID, where it is, its index in the document,
its chunk's pieces, the merges that made it, the tokenizer, and how compared ones split it."""

from __future__ import annotations

from collections.abc import Callable

from glassllm.shown.places import columns
from glassllm.shown.visible import visible
from glassllm_server.document import DocumentToken
from glassllm_server.messages import Messages
from glassllm_server.render.markdown import code

__all__ = ["derivation_line", "hover_markdown"]


def derivation_line(
    steps: list[tuple[str, str, str]],
    show: Callable[[str], str] = str,
    priority: Callable[[str, str], str | None] | None = None,
) -> str:
    """``[("▁vez", "▁ve", "z"), ("▁ve", "▁v", "e")]`` → ``▁vez ← ▁ve + z ← ▁v + e``;
    ``show`` writes a piece as a person reads it (a real model's ``Ġthe`` as ``▁the``),
    ``priority(left, right)`` adds each merge's rank or score (``[#12]``) where it
    gives one."""
    if not steps:
        return ""
    parts = [visible(show(steps[0][0]))]
    for _, left, right in steps:
        merge = f"{visible(show(left))} + {visible(show(right))}"
        order = None if priority is None else priority(left, right)
        parts.append(merge if order is None else f"{merge} [{order}]")
    return " ← ".join(parts)


def hover_markdown(
    token: DocumentToken,
    derivation: list[tuple[str, str, str]],
    tokenizer_label: str,
    messages: Messages,
    compared: list[str] | None = None,  # after the tokenizer: how compared ones split the chunk
    *,
    unknown: bool = False,
    show: Callable[[str], str] = str,
    priority: Callable[[str, str], str | None] | None = None,
    facts: list[str] | None = None,  # what the name leaves unsaid: a real model's kind, its special-token mode
) -> str:
    """The hover for one token: piece, ID, where it is, index, chunk and its pieces,
    merges, tokenizer (and for a real model what orders its merges and how it reads
    special-token text)."""
    head = f"**{code(show(token.piece))}** · {messages('hover.id', id=token.id)}"
    if unknown:
        head += f" · {messages('hover.unknown')}"
    head += f" · {messages('hover.at', span=columns(token.line, token.start, token.end))}"
    if token.index is None:
        head += f" · {messages('hover.index_pending')}"
    else:
        head += f" · {messages('hover.index', index=messages.integer(token.index))}"
    pieces = " ".join(
        f"**{code(show(piece))}**" if number == token.piece_index else code(show(piece))
        for number, piece in enumerate(token.chunk.pieces)
    )
    lines = [head, messages("hover.chunk", chunk=code(token.chunk.text), pieces=pieces)]
    if derivation:
        lines.append(messages("hover.derivation", derivation=code(derivation_line(derivation, show, priority))))
    else:
        lines.append(messages("hover.single"))
    lines.append(messages("hover.tokenizer", name=tokenizer_label))
    lines.extend(facts or ())
    lines.extend(compared or ())
    lines.append(f"*{messages('hover.explain')}*")
    return "\n\n".join(lines)
