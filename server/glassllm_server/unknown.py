"""Characters the tokenizer does not know: where they are and what to tell the user.

A character outside the tokenizer's alphabet becomes ``<unk>`` (there is no byte
fallback), so ``decode`` shows ⁇ in its place. The diagnostics feature reports them;
this module finds them in a line's token spans and words the message, without pygls.
Consecutive unknown characters form one run and one diagnostic. Line endings are not
characters of a line in LSP terms: an unknown ``\\r`` (a tokenizer trained on text with
``\\n`` endings meets a CRLF file) is counted per document and reported once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

from glassllm import Span
from glassllm.tokenizer import UNK_ID, UNK_TEXT
from glassllm.visible import visible

__all__ = ["UnknownRun", "describe_characters", "unknown_message", "unknown_runs"]


class UnknownRun(NamedTuple):
    """Consecutive unknown characters of one line, in code-point columns."""

    start: int
    end: int
    tokens: int  # how many <unk> tokens the run becomes


def unknown_runs(spans: Iterable[Span], content_end: int) -> tuple[list[UnknownRun], int]:
    """Runs of unknown characters in a line's spans, and how many unknown line-ending
    characters follow ``content_end`` (the column where the line ending starts)."""
    runs: list[UnknownRun] = []
    in_ending = 0
    for span in spans:
        if span.id != UNK_ID:
            continue
        if span.start >= content_end:
            in_ending += 1
        elif runs and runs[-1].end == span.start:
            runs[-1] = UnknownRun(runs[-1].start, span.end, runs[-1].tokens + 1)
        else:
            runs.append(UnknownRun(span.start, span.end, 1))
    return runs, in_ending


def describe_characters(text: str) -> str:
    """``text`` quoted for a message, its invisible characters written out by glassllm's
    one rule (:func:`glassllm.visible.visible`): ``'⟨U+200D ZERO WIDTH JOINER⟩'``."""
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
