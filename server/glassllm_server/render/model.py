"""What the hover and the stats message say of a real model's tokenizer: its format,
what orders its merges, its special-token mode, what it adds around a text."""

from __future__ import annotations

from glassllm.formats.model_tokenizer import ModelTokenizer
from glassllm_server.messages import Messages
from glassllm_server.render.markdown import code

__all__ = ["model_lines"]


def model_lines(model: ModelTokenizer, messages: Messages) -> list[str]:
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
                before=_pieces(model, before) or messages("hover.nothing"),
                after=_pieces(model, after) or messages("hover.nothing"),
            )
        )
    return lines


def _pieces(model: ModelTokenizer, ids: tuple[int, ...]) -> str:
    return " ".join(code(f"{piece} ({token_id})") for piece, token_id in zip(model.tokens(ids), ids, strict=True))
