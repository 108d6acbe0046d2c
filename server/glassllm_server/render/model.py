"""What the hover and the stats message say of a tokenizer beside its name, as far as
its name and its derivations leave it unsaid."""

from __future__ import annotations

from glassllm_server.line_tokenizer import TokenizerFacts
from glassllm_server.messages import Messages
from glassllm_server.render.markdown import code

__all__ = ["facts_lines"]


def facts_lines(facts: TokenizerFacts, messages: Messages) -> list[str]:
    """The tokenizer's facts worth a line: a tokenizer whose merges ship no training
    counts (a real model's), its format, what orders its merges and how it reads
    special-token text (one with counts is explained by them, and reads special-token
    text as ordinary text, whatever the setting); any, what it adds around a text."""
    lines = []
    if not facts.has_counts:
        lines += [
            messages("hover.model", kind=facts.kind, priority=messages(f"hover.priority.{facts.priority_name}")),
            messages("hover.specials.matched" if facts.match_specials else "hover.specials.ordinary"),
        ]
    before, after = facts.around
    if before or after:
        lines.append(
            messages(
                "hover.around",
                before=_pieces(facts.around_pieces[0], before) or messages("hover.nothing"),
                after=_pieces(facts.around_pieces[1], after) or messages("hover.nothing"),
            )
        )
    return lines


def _pieces(pieces: list[str], ids: tuple[int, ...]) -> str:
    return " ".join(code(f"{piece} ({token_id})") for piece, token_id in zip(pieces, ids, strict=True))
