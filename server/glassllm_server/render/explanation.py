"""The "Explain BPE merges" page: each chunk the selection touches, its characters, every
merge step with its rank and evidence, and the tokens, in the user's language."""

from __future__ import annotations

from collections.abc import Callable

from glassllm.shown.places import columns, place
from glassllm.shown.places import span as shown_span
from glassllm.tokenizer import SPACE, UNK_ID
from glassllm_server.explanation import ExplainedChunk, Explanation
from glassllm_server.messages import Say
from glassllm_server.render.markdown import code as shown

__all__ = ["render_markdown", "selection_header", "shown", "token_text"]


def token_text(piece: str, token_id: int, unk_id: int | None = UNK_ID) -> str:
    """A piece and its ID; an unknown piece says it became ``<unk>``."""
    return f"{shown(piece)} ({token_id}{', `<unk>`' if token_id == unk_id else ''})"


def render_markdown(
    explanation: Explanation,
    say: Say,
    number: Callable[[int], str],
    tokenizer: str,
    document: str,
    *,
    show: Callable[[str], str] = str,
    counts: bool = True,
    unk_id: int | None = UNK_ID,
) -> str:
    """The explanation as a Markdown page in the user's language.

    ``say`` looks up the catalogue, ``number`` formats a count the way the language
    does, ``tokenizer`` names the tokenizer and ``document`` the file; ``show`` writes
    a piece as a person reads it (a real model's ``Ġthe`` as ``▁the``); ``counts``:
    whether the tokenizer's merges carry training counts (a real model's ship none, its
    steps a rank or a score), ``unk_id`` its unknown token's ID.
    """
    lines = [f"# {say('explain.title')}", "", selection_header(explanation, say, tokenizer, document)]
    lines += ["", say("explain.positions"), ""]
    if not explanation.chunks:
        lines.append(say("explain.empty"))
        return "\n".join(lines) + "\n"
    token_count = sum(len(item.explanation.ids) for item in explanation.chunks)
    lines.append(
        say("explain.summary", chunks=number(explanation.total), tokens=number(token_count))
        if not explanation.truncated
        else say("explain.truncated", shown=number(len(explanation.chunks)), chunks=number(explanation.total))
    )
    if explanation.cut:
        lines += ["", f"> {say('explain.cut')}"]
    for position, item in enumerate(explanation.chunks, 1):
        lines += _chunk_section(position, item, say, number, show, counts, unk_id)
    return "\n".join(lines) + "\n"


def selection_header(explanation: Explanation, say: Say, tokenizer: str, document: str) -> str:
    """Which document, which selection (or cursor), which tokenizer."""
    if explanation.last is None:
        return say("explain.header_at", document=document, tokenizer=tokenizer, at=place(*explanation.start))
    span = shown_span(explanation.start, explanation.last)
    return say("explain.header", document=document, tokenizer=tokenizer, span=span)


def _chunk_section(
    position: int,
    item: ExplainedChunk,
    say: Say,
    number: Callable[[int], str],
    show: Callable[[str], str] = str,
    counts: bool = True,
    unk: int | None = UNK_ID,
) -> list[str]:
    """One chunk: where it is, what part the selection cut, its characters, each merge
    step with the pieces after it, and the tokens."""
    chunk = item.explanation
    if item.last is None:
        where = columns(item.line, item.start, item.end)
    else:
        where = shown_span((item.line, item.start), item.last)
    lines = [
        "",
        f"## {say('explain.chunk', number=position, chunk=shown(chunk.chunk))}",
        "",
        say("explain.where", span=where),
    ]
    if item.cut:
        alone = " ".join(token_text(show(piece), token_id, unk) for piece, token_id in item.alone)
        lines.append(say("explain.chunk_cut", selected=shown(item.selected.replace(" ", SPACE)), alone=alone))
    lines += ["", f"{say('explain.characters')}: " + " ".join(shown(show(c)) for c in chunk.characters), ""]
    if not chunk.steps:
        lines.append(say("explain.no_merges"))
    for step_number, step in enumerate(chunk.steps, 1):
        if not counts:
            evidence = say("explain.no_counts")
            if step.score is not None:
                evidence = f"{say('explain.score', score=f'{step.score:g}')}; {evidence}"
        elif step.count is None:
            evidence = say("explain.unknown_count")
        else:
            evidence = say("explain.count", count=number(step.count))
        pieces = " ".join(shown(show(piece)) for piece in step.pieces)
        step_text = say(
            "explain.step",
            rank=number(step.rank),
            left=shown(show(step.pair[0])),
            right=shown(show(step.pair[1])),
            result=shown(show(step.result)),
            evidence=evidence,
        )
        lines.append(f"{step_number}. {step_text} {pieces}")
    tokens = " · ".join(
        token_text(show(piece), token_id, unk) for piece, token_id in zip(chunk.pieces, chunk.ids, strict=False)
    )
    return [*lines, "", f"{say('explain.tokens')}: {tokens}"]
