"""The diagnostics' words: what becomes of characters the tokenizer does not know."""

from __future__ import annotations

from collections.abc import Callable

from glassllm.shown.visible import visible
from glassllm.tokenizer import UNK_ID, UNK_TEXT

__all__ = ["describe_characters", "unknown_message"]


def describe_characters(text: str) -> str:
    """``text`` quoted for a message, its invisible characters written out by glassllm's
    one rule (:func:`glassllm.shown.visible.visible`): ``'⟨U+200D ZERO WIDTH JOINER⟩'``."""
    return f"'{visible(text)}'"


def unknown_message(
    say: Callable[..., str],
    characters: str,
    tokens: int,
    tokenizer: str,
    *,
    line_endings: int = 0,
    number: Callable[[int], str] = str,
) -> str:
    """The diagnostic text for one run (``tokens`` <unk> tokens) or, with
    ``line_endings``, for the document's unknown line-ending characters. ``number``
    formats counts the way the user's language does."""
    fields = {
        "characters": describe_characters(characters),
        "tokenizer": tokenizer,
        "unk": "<unk>",
        "id": UNK_ID,
        "shown": UNK_TEXT * tokens if tokens <= 8 else f"{UNK_TEXT} × {tokens}",
    }
    if line_endings == 1:
        return say("unknown.line_ending", **fields)
    if line_endings:
        return say("unknown.line_endings", count=number(line_endings), **fields)
    if tokens == 1:
        return say("unknown.one", **fields)
    return say("unknown.many", count=number(tokens), **fields)
