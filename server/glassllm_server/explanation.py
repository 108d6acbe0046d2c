"""What "Explain BPE merges" shows for a selection: each chunk it touches, merge by merge.

Merges never cross chunk boundaries and part of a chunk tokenizes differently from the
whole, so a selection that cuts a chunk is widened to the whole chunk and the explanation
says so. Everything here works in lines and code-point columns (the server converts to LSP
positions) and never imports pygls: :func:`explain_selection` builds the structured
explanation and :func:`explanation_data` turns it into JSON for editor integrations;
:mod:`glassllm_server.render.explanation` writes the page the user reads.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import accumulate
from typing import Any

from glassllm import AnyTokenizer, ChunkExplanation
from glassllm_server.document import ReadOnlyDocument
from glassllm_server.positions import Point, content_length

__all__ = [
    "CHUNK_LIMIT",
    "ExplainedChunk",
    "Explanation",
    "explain_document",
    "explain_selection",
    "explanation_data",
]

# A page with more chunks than this is unreadable and slow to build; the rest is counted,
# not explained.
CHUNK_LIMIT = 300


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
    # The line where the chunk ends when it crosses a line break (a real model's
    # ".\n\n"): ``end`` is then a column of that line; None: ``line``. ``last`` is then
    # where its last character is (line, column).
    end_line: int | None = None
    last: tuple[int, int] | None = None
    # How a model that does not merge cut the chunk: its tokenizer's ``search`` data
    # (see LineTokenizer.search); None for one that merges, or a special token matched whole.
    search: dict[str, Any] | None = None


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
    tok: AnyTokenizer,
    line_text: Callable[[int], str],
    start: tuple[int, int],
    end: tuple[int, int],
    *,
    block_of: Callable[[int], tuple[int, int]] | None = None,
    token_at: Callable[[tuple[int, int]], tuple[tuple[int, int], tuple[int, int]] | None] | None = None,
    limit: int = CHUNK_LIMIT,
    chunk_count: Callable[[int], int] | None = None,
) -> Explanation:
    """Explain the chunks that the selection ``start``–``end`` touches.

    ``line_text(n)`` is line ``n`` including its line ending; positions are (line,
    code-point column) with ``start <= end``, already clamped to the document. Each block
    of lines the selection touches (``block_of(line)`` gives the block's first line and
    the line after it, see :mod:`glassllm_server.line_tokenizer`; by default each line
    is one, as for glassllm's own tokenizer) is explained as the document tokenizes it,
    and the chunks the selection touches are kept: a real model's chunks can cross a
    line break. An empty selection means the token under the cursor (``token_at(place)``;
    by default the token of the line alone, the one before it at the end of a line).
    Past ``limit`` chunks the rest are only counted; ``chunk_count(n)``, when given,
    counts the chunks that start on line ``n`` from a cache instead of tokenizing again.
    """
    if start == end:
        found = _token_at(tok, line_text, start) if token_at is None else token_at(start)
        if found is not None:
            start, end = found
    chunks: list[ExplainedChunk] = []
    total = 0
    line = start[0]
    while line <= end[0]:
        block = _Block.read(line_text, *((line, line + 1) if block_of is None else block_of(line)))
        selected = block.offset(start, 0), block.offset(end, len(block.text))
        if len(chunks) >= limit and chunk_count is not None and selected == (0, len(block.text)):
            total += sum(map(chunk_count, range(block.first, block.stop)))
        else:
            touched = [
                (index, chunk_start, chunk_end)
                for index, (_, chunk_start, chunk_end) in enumerate(
                    tok.chunk_spans(block.text, at_start=block.at_start)
                )
                if chunk_start < selected[1] and selected[0] < chunk_end
            ]
            total += len(touched)
            if touched and len(chunks) < limit:
                chunks += _block_chunks(tok, block, touched[: limit - len(chunks)], selected)
        line = block.stop
    return Explanation(chunks, total, start, end, _last_character(line_text, start, end))


@dataclass(frozen=True)
class _Block:
    """A block of lines of a document, read as one text."""

    first: int  # its first line
    lines: list[str]
    text: str
    starts: list[int]  # each line's offset in ``text``, then the text's length

    @classmethod
    def read(cls, line_text: Callable[[int], str], first: int, stop: int) -> _Block:
        lines = [line_text(number) for number in range(first, stop)]
        return cls(first, lines, "".join(lines), list(accumulate(map(len, lines), initial=0)))

    @property
    def stop(self) -> int:
        return self.first + len(self.lines)

    @property
    def at_start(self) -> bool:
        """Whether the block opens the document."""
        return self.first == 0

    def offset(self, place: tuple[int, int], outside: int) -> int:
        """The offset in the text of a (line, column) of the block; ``outside`` for a
        place before (a selection's start) or after it (its end)."""
        line, column = place
        return self.starts[line - self.first] + column if self.first <= line < self.stop else outside

    def point(self, offset: int) -> tuple[int, int]:
        """The (line, column) of an offset in the text."""
        number = min(bisect_right(self.starts, offset) - 1, len(self.starts) - 2)
        return self.first + number, offset - self.starts[number]


def _block_chunks(
    tok: AnyTokenizer, block: _Block, touched: list[tuple[int, int, int]], selected: tuple[int, int]
) -> list[ExplainedChunk]:
    """The consecutive chunks ``touched`` (their index in the block, and offsets in its
    text) explained and placed in the document; ``selected`` is the part of the text
    selected."""
    text = block.text
    explained = _explain_chunks(tok, block, touched)
    chunks = []
    for (_, chunk_start, chunk_end), explanation in zip(touched, explained, strict=True):
        low, high = max(selected[0], chunk_start), min(selected[1], chunk_end)
        cut = (low, high) != (chunk_start, chunk_end)
        part = text[low:high]
        spans = tok.encode_spans(part, at_start=block.at_start and low == 0) if cut else []
        (chunk_line, column), (end_line, end_column) = block.point(chunk_start), block.point(chunk_end)
        if end_line > chunk_line and end_column == 0 and end_line == chunk_line + 1:
            # Ends with its own line's ending: a column of its line, as a chunk within a line.
            end_line, end_column = chunk_line, len(block.lines[chunk_line - block.first])
        crossing = end_line > chunk_line and (end_column > 0 or end_line > chunk_line + 1)
        chunks.append(
            ExplainedChunk(
                line=chunk_line,
                start=column,
                end=end_column,
                text=text[chunk_start:chunk_end],
                explanation=explanation,
                cut=cut,
                selected=part,
                alone=[(span.piece, span.id) for span in spans],
                end_line=end_line if crossing else None,
                last=block.point(chunk_end - 1) if crossing else None,
            )
        )
    return chunks


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


def _token_at(
    tok: AnyTokenizer, line_text: Callable[[int], str], position: tuple[int, int]
) -> tuple[tuple[int, int], tuple[int, int]]:
    """The span of the token under the cursor, or the empty selection where there is
    none, of the line alone."""
    line, column = position
    text = line_text(line)
    content = len(text.rstrip("\r\n"))
    column = min(column, content)
    before = None
    for span in tok.encode_spans(text[:content], at_start=line == 0):
        if span.start == span.end:
            continue  # a piece that NFC produced with no original characters of its own
        if span.start <= column < span.end:
            return (line, span.start), (line, span.end)
        if span.end == column:
            before = span
    if before is not None:
        return (line, before.start), (line, before.end)
    return position, position


def _explain_chunks(tok: AnyTokenizer, block: _Block, touched: list[tuple[int, int, int]]) -> list[ChunkExplanation]:
    """Explanations of the consecutive chunks ``touched`` of a block (their index in the
    block, and offsets in its text), with the block's indices and offsets.

    Explaining only the touched stretch keeps a selection in a very long line cheap. The
    stretch alone may cut otherwise (NFC can compose across a chunk boundary, a model's
    pattern reads the characters around), so when it does not cut into the same chunks
    the whole block is explained instead; that answer is right by definition.
    """
    index, first, last = touched[0][0], touched[0][1], touched[-1][2]
    part = tok.explain(block.text[first:last], at_start=block.at_start and first == 0)
    if [(item.start + first, item.end + first) for item in part] == [(low, high) for _, low, high in touched]:
        return [
            replace(item, index=item.index + index, start=item.start + first, end=item.end + first) for item in part
        ]
    return tok.explain(block.text, at_start=block.at_start)[index : index + len(touched)]


def explain_document(document: ReadOnlyDocument, start: Point, end: Point) -> Explanation:
    """The explanation of the chunks ``start..end`` touches in ``document``, by its tokenizer."""

    def token_at(place: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]] | None:
        line, column = place
        token = document.meant_token(Point(line, min(column, content_length(document.lines[line]))))
        return None if token is None else (tuple(token.start_point), tuple(token.end_point))  # type: ignore[return-value]

    tokenizer = document.tokenizer
    found = explain_selection(
        tokenizer.tokenizer,
        document.lines.__getitem__,
        start,
        end,
        block_of=document.block_of,
        token_at=token_at,
        chunk_count=lambda line: document.line_tokens(line).chunk_count,
    )
    chunks = [
        item
        if len(ids := item.explanation.ids) == 1 and tokenizer.is_matched(ids[0])
        else replace(item, search=tokenizer.search(item.explanation.chunk))
        for item in found.chunks
    ]
    return replace(found, chunks=chunks)


def explanation_data(
    explanation: Explanation,
    position: Callable[[int, int], dict[str, int]],
) -> dict[str, Any]:
    """The explanation as JSON for editor integrations.

    ``position(line, column)`` converts a code-point position to an LSP position. Each
    chunk's ``steps`` replay ``encode_verbose``: its ``characters``, then each step's
    ``pieces``; the ``ids`` of all chunks concatenated are ``encode`` of their text.
    """

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
                "range": {
                    "start": position(item.line, item.start),
                    "end": position(item.line if item.end_line is None else item.end_line, item.end),
                },
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
                        **({} if step.score is None else {"score": step.score}),
                        "pieces": step.pieces,
                    }
                    for step in item.explanation.steps
                ],
                "pieces": item.explanation.pieces,
                "ids": item.explanation.ids,
                **({} if item.search is None else {"search": item.search}),
            }
            for item in explanation.chunks
        ],
    }
