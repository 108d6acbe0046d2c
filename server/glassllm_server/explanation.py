"""What "Explain BPE merges" shows for a selection: each chunk it touches, merge by merge.

Merges never cross chunk boundaries and part of a chunk tokenizes differently from the
whole, so a selection that cuts a chunk is widened to the whole chunk and the explanation
says so. Everything here works in lines and code-point columns (the server converts to LSP
positions) and never imports pygls: :func:`explain_selection` builds the structured
explanation, :func:`explanation_data` turns it into JSON for editor integrations and
:func:`render_markdown` into the page the user reads, in Portuguese or English.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from glassllm import ChunkExplanation, Tokenizer
from glassllm.chunks import chunk_text
from glassllm.places import columns, place
from glassllm.places import span as shown_span
from glassllm.tokenizer import SPACE, UNK_ID
from glassllm_server.describe import code as shown
from glassllm_server.positions import content_length

__all__ = [
    "CHUNK_LIMIT",
    "PAGES_KEPT",
    "ExplainedChunk",
    "Explanation",
    "Say",
    "cache_folder",
    "explain_selection",
    "explanation_data",
    "render_markdown",
    "shown",
    "token_text",
    "write_page",
]

# A page with more chunks than this is unreadable and slow to build; the rest is counted,
# not explained.
CHUNK_LIMIT = 300

# A catalogue lookup in the user's language: ``say("key", field=value) -> text``.
Say = Callable[..., str]


@dataclass(frozen=True)
class ExplainedChunk:
    """One chunk of the selection: the library's explanation, placed in the document."""

    line: int
    start: int  # code-point columns of the chunk in its line (original text)
    end: int
    text: str  # the chunk's original text (before NFC and ▁)
    explanation: ChunkExplanation
    cut: bool  # the selection covers only part of the chunk
    selected: str  # the part of the original text the selection covers
    alone: list[tuple[str, int]]  # how that part tokenizes on its own: (piece, id)


@dataclass(frozen=True)
class Explanation:
    """The chunks a selection touches, in document order."""

    chunks: list[ExplainedChunk]
    total: int  # chunks the selection touches; more than ``len(chunks)`` when truncated
    start: tuple[int, int]  # the selection as explained (line, column): an empty
    end: tuple[int, int]  # selection becomes the token under the cursor
    last: tuple[int, int] | None = None  # the selection's last character; None if empty

    @property
    def truncated(self) -> bool:
        return self.total > len(self.chunks)

    @property
    def cut(self) -> bool:
        return any(chunk.cut for chunk in self.chunks)


def explain_selection(
    tok: Tokenizer,
    line_text: Callable[[int], str],
    start: tuple[int, int],
    end: tuple[int, int],
    limit: int = CHUNK_LIMIT,
    chunk_count: Callable[[int], int] | None = None,
) -> Explanation:
    """Explain the chunks that the selection ``start``–``end`` touches.

    ``line_text(n)`` is line ``n`` including its line ending; positions are (line,
    code-point column) with ``start <= end``, already clamped to the document. An empty
    selection means the token under the cursor (the one before it at the end of a line).
    Past ``limit`` chunks the rest are only counted; ``chunk_count(n)``, when given,
    counts the chunks of a whole line from a cache instead of tokenizing it again.
    """
    if start == end:
        start, end = _token_at(tok, line_text(start[0]), start)
    chunks: list[ExplainedChunk] = []
    total = 0
    for line in range(start[0], end[0] + 1):
        text = line_text(line)
        first = start[1] if line == start[0] else 0
        last = end[1] if line == end[0] else len(text)
        if len(chunks) >= limit and chunk_count is not None and first == 0 and last >= len(text):
            total += chunk_count(line)
            continue
        every = [(chunk_start, chunk_end) for _, chunk_start, chunk_end in chunk_text(text).spans()]
        touched = [index for index, (s, e) in enumerate(every) if s < last and first < e]
        if not touched:
            continue
        total += len(touched)
        room = limit - len(chunks)
        if room <= 0:
            continue
        touched = touched[:room]
        bounds = every[touched[0] : touched[-1] + 1]
        for (chunk_start, chunk_end), explained in zip(
            bounds, _explain_chunks(tok, text, bounds, touched[0]), strict=False
        ):
            cut = first > chunk_start or last < chunk_end
            selected = text[max(first, chunk_start) : min(last, chunk_end)]
            alone = [(span.piece, span.id) for span in tok.encode_spans(selected)] if cut else []
            chunks.append(
                ExplainedChunk(
                    line=line,
                    start=chunk_start,
                    end=chunk_end,
                    text=text[chunk_start:chunk_end],
                    explanation=explained,
                    cut=cut,
                    selected=selected,
                    alone=alone,
                )
            )
    return Explanation(chunks, total, start, end, _last_character(line_text, start, end))


def _last_character(
    line_text: Callable[[int], str], start: tuple[int, int], end: tuple[int, int]
) -> tuple[int, int] | None:
    """The (line, column) of the last character in ``[start, end)``: at a line's start,
    the previous line's line ending, which counts as one character after its content."""
    if start == end:
        return None
    line, column = end
    if column == 0:
        return line - 1, content_length(line_text(line - 1))
    return line, min(column - 1, content_length(line_text(line)))


def _token_at(tok: Tokenizer, text: str, position: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]]:
    """The span of the token under the cursor, or the empty selection where there is none."""
    line, column = position
    content = len(text.rstrip("\r\n"))
    column = min(column, content)
    before = None
    for span in tok.encode_spans(text[:content]):
        if span.start == span.end:
            continue  # a piece that NFC produced with no original characters of its own
        if span.start <= column < span.end:
            return (line, span.start), (line, span.end)
        if span.end == column:
            before = span
    if before is not None:
        return (line, before.start), (line, before.end)
    return position, position


def _explain_chunks(tok: Tokenizer, text: str, bounds: list[tuple[int, int]], index: int) -> list[ChunkExplanation]:
    """Explanations of the consecutive chunks at ``bounds`` of ``text``, the first of
    which is chunk number ``index`` of the line (indices and offsets are the line's).

    Explaining only the touched stretch keeps a selection in a very long line cheap. NFC
    can compose across a chunk boundary, so when the stretch alone does not cut into the
    same chunks, the whole line is explained instead; that answer is right by definition.
    """
    first, last = bounds[0][0], bounds[-1][1]
    part = tok.explain(text[first:last])
    if len(part) == len(bounds) and all(
        (item.start + first, item.end + first) == bound for item, bound in zip(part, bounds, strict=False)
    ):
        return [
            replace(item, index=item.index + index, start=item.start + first, end=item.end + first) for item in part
        ]
    return tok.explain(text)[index : index + len(bounds)]


def explanation_data(
    explanation: Explanation,
    position: Callable[[int, int], dict[str, int]],
) -> dict[str, Any]:
    """The explanation as JSON for editor integrations.

    ``position(line, column)`` converts a code-point position to an LSP position. Each
    chunk's ``steps`` replay ``encode_verbose``: its ``characters``, then each step's
    ``pieces``; the ``ids`` of all chunks concatenated are ``encode`` of their text.
    """

    def span(line: int, start: int, end: int) -> dict[str, Any]:
        return {"start": position(line, start), "end": position(line, end)}

    return {
        "selection": {"start": position(*explanation.start), "end": position(*explanation.end)},
        "cut": explanation.cut,
        "truncated": explanation.truncated,
        "totalChunks": explanation.total,
        "chunks": [
            {
                "index": item.explanation.index,
                "chunk": item.explanation.chunk,
                "text": item.text,
                "range": span(item.line, item.start, item.end),
                "cut": item.cut,
                "selected": item.selected,
                "alone": [{"piece": piece, "id": token_id} for piece, token_id in item.alone],
                "characters": item.explanation.characters,
                "steps": [
                    {
                        "rank": step.rank,
                        "pair": list(step.pair),
                        "result": step.result,
                        "count": step.count,
                        "pieces": step.pieces,
                    }
                    for step in item.explanation.steps
                ],
                "pieces": item.explanation.pieces,
                "ids": item.explanation.ids,
            }
            for item in explanation.chunks
        ],
    }


def token_text(piece: str, token_id: int) -> str:
    """A piece and its ID; an unknown piece says it became ``<unk>``."""
    return f"{shown(piece)} ({token_id}{', `<unk>`' if token_id == UNK_ID else ''})"


def render_markdown(
    explanation: Explanation,
    say: Say,
    number: Callable[[int], str],
    tokenizer: str,
    document: str,
) -> str:
    """The explanation as a Markdown page in the user's language.

    ``say`` looks up the catalogue, ``number`` formats a count the way the language
    does, ``tokenizer`` names the tokenizer and ``document`` the file.
    """
    lines = [f"# {say('explain.title')}", ""]
    if explanation.last is None:
        lines.append(say("explain.header_at", document=document, tokenizer=tokenizer, at=place(*explanation.start)))
    else:
        lines.append(
            say(
                "explain.header",
                document=document,
                tokenizer=tokenizer,
                span=shown_span(explanation.start, explanation.last),
            )
        )
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
        chunk = item.explanation
        lines += [
            "",
            f"## {say('explain.chunk', number=position, chunk=shown(chunk.chunk))}",
            "",
            say("explain.where", span=columns(item.line, item.start, item.end)),
        ]
        if item.cut:
            alone = " ".join(token_text(piece, token_id) for piece, token_id in item.alone)
            lines.append(say("explain.chunk_cut", selected=shown(item.selected.replace(" ", SPACE)), alone=alone))
        lines += ["", f"{say('explain.characters')}: " + " ".join(shown(c) for c in chunk.characters), ""]
        if not chunk.steps:
            lines.append(say("explain.no_merges"))
        for step_number, step in enumerate(chunk.steps, 1):
            evidence = (
                say("explain.unknown_count") if step.count is None else say("explain.count", count=number(step.count))
            )
            pieces = " ".join(shown(piece) for piece in step.pieces)
            lines.append(
                f"{step_number}. "
                + say(
                    "explain.step",
                    rank=number(step.rank),
                    left=shown(step.pair[0]),
                    right=shown(step.pair[1]),
                    result=shown(step.result),
                    evidence=evidence,
                )
                + f" {pieces}"
            )
        tokens = " · ".join(
            token_text(piece, token_id) for piece, token_id in zip(chunk.pieces, chunk.ids, strict=False)
        )
        lines += ["", f"{say('explain.tokens')}: {tokens}"]
    return "\n".join(lines) + "\n"


# Pages are written fresh each time (an editor may hold an older one open and would not
# reload it); only the newest few are kept.
PAGES_KEPT = 20


def cache_folder() -> Path:
    """The user's cache folder for glassllm: ``$XDG_CACHE_HOME/glassllm`` or the
    platform's usual place (``~/.cache/glassllm`` on Linux)."""
    if xdg := os.environ.get("XDG_CACHE_HOME"):
        base = Path(xdg)
    elif sys.platform == "win32" and (local := os.environ.get("LOCALAPPDATA")):
        base = Path(local)
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path.home() / ".cache"
    return base / "glassllm"


def write_page(markdown: str, document: str, folder: Path | None = None, kind: str = "explain") -> Path:
    """Write a ``kind`` page ("explain", "compare") for ``document`` (a file name) to the
    cache folder and return its path. The write is atomic; older pages of that kind
    beyond :data:`PAGES_KEPT` go."""
    folder = cache_folder() if folder is None else folder
    folder.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^\w.-]+", "_", Path(document).stem)[:60] or "selection"
    handle, temporary = tempfile.mkstemp(prefix=f".{kind}-", suffix=".md", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as page:
            page.write(markdown)
        path = folder / f"{kind}-{stem}-{time.strftime('%Y%m%d-%H%M%S')}-{time.monotonic_ns() % 10**6:06d}.md"
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    pages = sorted(folder.glob(f"{kind}-*.md"), key=lambda page: page.stat().st_mtime_ns)
    for old in pages[:-PAGES_KEPT]:
        old.unlink(missing_ok=True)
    return path
