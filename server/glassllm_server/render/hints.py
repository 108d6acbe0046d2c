"""Inlay hints as the user sees them: each kind's label and a resolved hint's tooltip."""

from __future__ import annotations

from typing import Literal

from glassllm_server.messages import Messages
from glassllm_server.render.markdown import code

__all__ = ["LABELS", "HintKind", "hint_tooltip"]

HintKind = Literal["chunk", "space", "token"]
# A chunk boundary, the marker a space travels as, a token boundary inside a chunk.
LABELS: dict[HintKind, str] = {"chunk": "¦", "space": "▁", "token": "·"}


def hint_tooltip(piece: str, token_id: int, messages: Messages) -> str:
    """Markdown for a resolved hint: the piece and ID of the token it describes."""
    return messages("hint.tooltip", piece=code(piece), id=token_id)
