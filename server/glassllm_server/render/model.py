"""What the hover and the stats message say of a tokenizer beside its name (a real
model's: its format, what orders its merges, its special-token mode, what it adds
around a text)."""

from __future__ import annotations

from glassllm_server.line_tokenizer import ModelFacts
from glassllm_server.messages import Messages
from glassllm_server.render.markdown import code

__all__ = ["model_lines"]


def model_lines(model: ModelFacts, messages: Messages) -> list[str]:
    """What a real model's hover and stats say of it: its format and what orders its
    merges (no training counts), its special-token mode, what it adds around a text."""
    lines = [
        messages("hover.model", kind=model.kind, priority=messages(f"hover.priority.{model.priority_name}")),
        messages("hover.specials.matched" if model.match_specials else "hover.specials.ordinary"),
    ]
    before, after = model.around
    if before or after:
        lines.append(
            messages(
                "hover.around",
                before=_pieces(model.around_pieces[0], before) or messages("hover.nothing"),
                after=_pieces(model.around_pieces[1], after) or messages("hover.nothing"),
            )
        )
    return lines


def _pieces(pieces: list[str], ids: tuple[int, ...]) -> str:
    return " ".join(code(f"{piece} ({token_id})") for piece, token_id in zip(pieces, ids, strict=True))
