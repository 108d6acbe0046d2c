"""The tokenizer comparison as the user reads it: the hover's line per compared
tokenizer, and the "Compare tokenizers" page (totals, then each chunk the selection
touches, most different first, with every tokenizer's merge steps side by side)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from glassllm import ComparedChunk, MergeStep, by_difference
from glassllm.shown.places import columns, place
from glassllm.shown.places import span as shown_span
from glassllm_server.compare import ComparedCounts, ComparedTokenizer, PlacedChunk
from glassllm_server.explanation import Explanation
from glassllm_server.messages import Messages, Say
from glassllm_server.render.explanation import shown, token_text

__all__ = ["compared_summary", "hover_lines", "render_compare_markdown"]


def compared_summary(compare: Sequence[Mapping[str, Any]], label: Callable[[str], str], messages: Messages) -> str:
    """The compared tokenizers' counts (``glassllm/stats``' ``compare`` list) for the stats
    message: "; English (en): 16 tokens, 0 unknown"."""
    return "".join(
        "; "
        + messages(
            "compare.stats",
            tokenizer=label(item["tokenizer"]),
            tokens=messages.integer(item["tokens"]),
            unknown=messages.integer(item["unknown"]),
        )
        for item in compare
    )


def hover_lines(
    chunk: str, compared: Sequence[ComparedTokenizer], label: Callable[[str], str], say: Say, code: Callable[[str], str]
) -> list[str]:
    """One line per compared tokenizer: how it splits ``chunk`` and into how many tokens
    (``English (en): `▁m·en·ina` — 3 tokens``)."""
    lines = []
    for tok in compared:
        pieces, _ = tok.chunk(chunk)
        count = len(pieces)
        lines.append(
            say(
                "compare.hover",
                tokenizer=label(tok.name),
                pieces=code("·".join(pieces)),
                count=count,
                token_word=say("word.token" if count == 1 else "word.tokens"),
            )
        )
    return lines


def _chunk_section(
    order: int, chunk: ComparedChunk, line: int, labels: Sequence[str], say: Say, number: Callable[[int], str]
) -> list[str]:
    """One chunk of the page: where it is, how far apart the tokenizers are, and each
    tokenizer's tokens and merge steps side by side."""
    return [
        "",
        f"## {say('explain.chunk', number=order, chunk=shown(chunk.chunk))}",
        "",
        say("explain.where", span=columns(line, chunk.start, chunk.end))
        + " "
        + (say("compare.same") if chunk.same else say("compare.spread", spread=number(chunk.spread))),
        "",
        "| | " + " | ".join(_cell(name) for name in labels) + " |",
        "|---|" + "---|" * len(labels),
        f"| {say('explain.tokens')} | "
        + " | ".join(
            _cell(" ".join(map(token_text, pieces, ids)) + f" — {len(ids)}")
            for pieces, ids in zip(chunk.pieces, chunk.ids, strict=False)
        )
        + " |",
        *_step_rows(chunk.steps, say, number),
    ]


def _step_rows(steps: Sequence[Sequence[MergeStep]], say: Say, number: Callable[[int], str]) -> list[str]:
    """The merge steps of one chunk as table rows, step by step, a column per tokenizer."""
    rows = []
    for step in range(max(map(len, steps))):
        cells = []
        for merges in steps:
            if step >= len(merges):
                cells.append("")
                continue
            merge = merges[step]
            seen = "" if merge.count is None else " · " + say("compare.seen", count=number(merge.count))
            cells.append(
                _cell(
                    say("compare.step", rank=number(merge.rank))
                    + f": {shown(merge.pair[0])} + {shown(merge.pair[1])} → {shown(merge.result)}{seen}"
                )
            )
        rows.append(f"| {step + 1} | " + " | ".join(cells) + " |")
    return rows


def _cell(text: str) -> str:
    """Text for a Markdown table cell: a ``|`` would end the cell, even in a code span."""
    return text.replace("|", "\\|")


def render_compare_markdown(
    explanation: Explanation,
    chunks: Sequence[PlacedChunk],
    totals: Sequence[ComparedCounts],
    characters: int,
    label: Callable[[str], str],
    say: Say,
    number: Callable[[int], str],
    decimal: Callable[[float], str],
    document: str,
) -> str:
    """The "Compare tokenizers" page in the user's language: totals per tokenizer for the
    selection, then each chunk it touches, most different first, with each tokenizer's
    merge steps side by side."""
    labels = [label(t.tokenizer) for t in totals]
    where = (
        say("compare.header_at", document=document, at=place(*explanation.start))
        if explanation.last is None
        else say("compare.header", document=document, span=shown_span(explanation.start, explanation.last))
    )
    lines = [
        f"# {say('compare.title')}",
        "",
        where,
        "",
        say("explain.positions"),
        "",
        f"| {say('compare.tokenizer')} | {say('compare.tokens')} | {say('compare.chunks')} "
        f"| {say('compare.unknown')} | {say('compare.ratio')} |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, total in zip(labels, totals, strict=False):
        ratio = decimal(characters / total.tokens) if total.tokens else "—"
        lines.append(
            f"| {_cell(name)} | {number(total.tokens)} | {number(total.chunks)} | {number(total.unknown)} | {ratio} |"
        )
    lines.append("")
    if not chunks:
        lines.append(say("explain.empty"))
        return "\n".join(lines) + "\n"
    if explanation.truncated:
        lines += [say("explain.truncated", shown=number(len(chunks)), chunks=number(explanation.total)), ""]
    compared = [placed.compared for placed in chunks]
    differing = sum(not chunk.same for chunk in compared)
    lines.append(say("compare.order", differing=number(differing), chunks=number(len(chunks))))
    for order, chunk in enumerate(by_difference(compared), 1):
        lines += _chunk_section(order, chunk, chunks[chunk.index].line, labels, say, number)
    return "\n".join(lines) + "\n"
