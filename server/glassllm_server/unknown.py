"""Characters the tokenizer does not know: where they are (the words are
:mod:`glassllm_server.render.diagnostics`').

A character outside the tokenizer's alphabet becomes ``<unk>`` (there is no byte
fallback), so ``decode`` shows ⁇ in its place. The diagnostics feature reports them;
this module finds them in a line's token spans, without pygls.
Consecutive unknown characters form one run and one diagnostic. Line endings are not
characters of a line in LSP terms: an unknown ``\\r`` (a tokenizer trained on text with
``\\n`` endings meets a CRLF file) is counted per document and reported once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from glassllm import Span
from glassllm.tokenizer import UNK_ID

__all__ = ["UnknownRun", "unknown_runs"]


class UnknownRun(NamedTuple):
    """Consecutive unknown characters of one line, in code-point columns."""

    start: int
    end: int
    tokens: int  # how many <unk> tokens the run becomes


def unknown_runs(spans: Iterable[Span], content_end: int, unk_id: int | None = UNK_ID) -> tuple[list[UnknownRun], int]:
    """Runs of unknown characters in a line's spans, and how many unknown line-ending
    characters follow ``content_end`` (the column where the line ending starts);
    ``unk_id``: the tokenizer's unknown ID (``None``: a byte-level model has none)."""
    runs: list[UnknownRun] = []
    in_ending = 0
    if unk_id is None:
        return runs, in_ending
    for span in spans:
        if span.id != unk_id:
            continue
        if span.start >= content_end:
            in_ending += 1
        elif runs and runs[-1].end == span.start:
            runs[-1] = UnknownRun(runs[-1].start, span.end, runs[-1].tokens + 1)
        else:
            runs.append(UnknownRun(span.start, span.end, 1))
    return runs, in_ending
