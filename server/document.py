"""A document's tokens, kept line by line so that an edit re-tokenizes only what it touched.

Chunks never cross a line break, so tokenizing a document line by line (each line with
its ending) gives exactly ``Tokenizer.encode_spans`` of the whole text. Two caches make
that cheap: chunks repeat across a document (``▁de``, ``▁que``…) and are tokenized once
(:class:`LineTokenizer`), and each line's tokens are kept by the line's text, so an edit
re-tokenizes only the lines it changed.

Everything here works in code points: a :class:`~server.positions.Point` is a line and a
code-point column. Converting to LSP positions is :mod:`positions`' job. No pygls here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import accumulate
from typing import NamedTuple

from glassllm import Tokenizer
from glassllm.chunks import CHUNK_PATTERN, mark_spaces
from glassllm.normalize import normalize_with_offsets
from glassllm.tokenizer import UNK_ID

from glassllm_server.positions import LineIndex, Point, split_lines

__all__ = [
    "ChunkTokens",
    "Document",
    "DocumentToken",
    "LineTokenizer",
    "LineSpan",
    "LineTokens",
    "Stats",
]

# Distinct chunks and distinct lines kept before a cache starts afresh: far more than a
# large document needs, small enough to bound memory on an endless stream of new text.
_CHUNK_CACHE_LIMIT = 1 << 18
_LINE_CACHE_LIMIT = 1 << 17


class ChunkTokens(NamedTuple):
    """One chunk (normalized, spaces as ``▁``) and the tokens BPE makes of it."""

    text: str
    pieces: tuple[str, ...]
    ids: tuple[int, ...]
    unknown: int


class Stats(NamedTuple):
    """Counts for a document or a range of it."""

    tokens: int
    chunks: int
    characters: int
    unknown: int


class LineSpan(NamedTuple):
    """One token of a line: code-point columns ``[start, end)`` within the line."""

    id: int
    piece: str
    start: int
    end: int
    chunk: int  # index of its chunk within the line
    piece_index: int  # index of the token within its chunk


class LineTokens:
    """The chunks of one line (its ending included) and how its tokens map to columns."""

    __slots__ = ("chunks", "origin", "tokens", "unknown")

    def __init__(self, chunks: tuple[ChunkTokens, ...], origin: list[int] | None) -> None:
        self.chunks = chunks
        # NFC boundary map from normalized to original columns; None when the line is NFC.
        self.origin = origin
        self.tokens = sum(len(chunk.ids) for chunk in chunks)
        self.unknown = sum(chunk.unknown for chunk in chunks)

    def spans(self) -> list[LineSpan]:
        """Every token of the line with its columns, in order, covering the line."""
        spans: list[LineSpan] = []
        append = spans.append
        origin = self.origin
        position = 0
        for chunk_index, chunk in enumerate(self.chunks):
            for piece_index, (token_id, piece) in enumerate(zip(chunk.ids, chunk.pieces)):
                end = position + len(piece)
                if origin is None:
                    append(LineSpan(token_id, piece, position, end, chunk_index, piece_index))
                else:
                    append(LineSpan(token_id, piece, origin[position], origin[end], chunk_index, piece_index))
                position = end
        return spans


class LineTokenizer:
    """A tokenizer with the chunk and line caches; shared by every open document."""

    def __init__(self, tokenizer: Tokenizer, name: str) -> None:
        self.tokenizer = tokenizer
        self.name = name
        self._chunks: dict[str, ChunkTokens] = {}
        self._lines: dict[str, LineTokens] = {}

    def chunk(self, text: str) -> ChunkTokens:
        """The tokens of one chunk (already normalized and marked)."""
        cached = self._chunks.get(text)
        if cached is not None:
            return cached
        spans = self.tokenizer.encode_spans(text)
        ids = tuple(span.id for span in spans)
        entry = ChunkTokens(text, tuple(span.piece for span in spans), ids, ids.count(UNK_ID))
        if len(self._chunks) >= _CHUNK_CACHE_LIMIT:
            self._chunks.clear()
        self._chunks[text] = entry
        return entry

    def line(self, text: str) -> LineTokens:
        """The tokens of one line, its line ending included."""
        cached = self._lines.get(text)
        if cached is not None:
            return cached
        normalized, origin = normalize_with_offsets(text)
        chunk = self.chunk
        entry = LineTokens(
            tuple(chunk(piece) for piece in CHUNK_PATTERN.findall(mark_spaces(normalized))),
            origin,
        )
        if len(self._lines) >= _LINE_CACHE_LIMIT:
            self._lines.clear()
        self._lines[text] = entry
        return entry


@dataclass(frozen=True, slots=True)
class DocumentToken:
    """A token of a document: where it is, what it is, and the chunk it belongs to."""

    id: int
    piece: str
    line: int
    start: int  # code-point columns within the line, [start, end)
    end: int
    # Position of the token in the whole document's token sequence; None while the
    # lines above it are not all tokenized yet (a large document just opened).
    index: int | None
    chunk: ChunkTokens
    chunk_index: int  # index of the chunk within its line
    piece_index: int  # index of the token within its chunk

    @property
    def start_point(self) -> Point:
        return Point(self.line, self.start)

    @property
    def end_point(self) -> Point:
        return Point(self.line, self.end)


class Document:
    """One open document: its lines, its version and its tokens, filled in lazily.

    ``lines`` follows :func:`split_lines` (one entry per LSP line, endings kept). Tokens
    of a line are computed when first needed; :meth:`tokenize_pending` fills the rest
    in small steps so that a server can interleave it with other work.
    """

    def __init__(self, uri: str, text: str, version: int | None, tokenizer: LineTokenizer) -> None:
        self.uri = uri
        self.version = version
        self.lines: list[str] = split_lines(text)
        self.index = LineIndex(self.lines)
        self.tokenizer = tokenizer
        self._tokens: list[LineTokens | None] = [None] * len(self.lines)
        self._pending = 0  # no line before this one lacks its tokens
        self._totals = [0, 0, 0, 0]  # tokens, chunks, characters, unknown of tokenized lines
        self._prefix: list[int] | None = None  # tokens before each line
        # The line the user last edited or hovered: where views that cannot cover a
        # large document whole (inlay hints for the whole of it) look.
        self.focus_line = 0
        # Told ``(first, stop, new_count)`` when lines ``first..stop-1`` were replaced by
        # ``new_count`` lines: per-line state kept elsewhere follows edits this way.
        self.line_listeners: list[Callable[[int, int, int], None]] = []

    # Text and edits

    @property
    def text(self) -> str:
        return "".join(self.lines)

    def apply_change(self, start: Point | None, end: Point | None, text: str) -> None:
        """Replace the text between two points (the whole text when ``start`` is None)."""
        if start is None or end is None:
            first, last = 0, len(self.lines) - 1
            replaced = text
        else:
            if end < start:
                start, end = end, start
            # One more line on each side: a "\r" next to an inserted "\n" becomes "\r\n".
            first, last = max(start.line - 1, 0), min(end.line + 1, len(self.lines) - 1)
            old = "".join(self.lines[first : last + 1])
            begin = sum(map(len, self.lines[first : start.line])) + start.column
            finish = sum(map(len, self.lines[first : end.line])) + end.column
            replaced = old[:begin] + text + old[finish:]
        new_lines = split_lines(replaced)
        if last < len(self.lines) - 1:
            # The region ended with a line ending, so its split has an empty tail.
            new_lines.pop()
        self._replace_lines(first, last + 1, new_lines)

    def set_tokenizer(self, tokenizer: LineTokenizer) -> None:
        """Use another tokenizer: every line is tokenized again when next needed."""
        self.tokenizer = tokenizer
        self._tokens = [None] * len(self.lines)
        self._pending = 0
        self._totals = [0, 0, 0, 0]
        self._prefix = None

    def replace_text(self, text: str) -> None:
        self.apply_change(None, None, text)

    def _replace_lines(self, first: int, stop: int, new_lines: list[str]) -> None:
        for tokens, line in zip(self._tokens[first:stop], self.lines[first:stop]):
            if tokens is not None:
                self._count(tokens, line, -1)
        self.lines[first:stop] = new_lines
        self._tokens[first:stop] = [None] * len(new_lines)
        self._pending = min(self._pending, first)
        self._prefix = None
        self.index.invalidate()
        for listener in self.line_listeners:
            listener(first, stop, len(new_lines))

    # Tokens

    def _count(self, tokens: LineTokens, line: str, sign: int) -> None:
        totals = self._totals
        totals[0] += sign * tokens.tokens
        totals[1] += sign * len(tokens.chunks)
        totals[2] += sign * len(line)
        totals[3] += sign * tokens.unknown

    def line_tokens(self, line: int) -> LineTokens:
        """The tokens of line ``line`` (computed now if needed)."""
        tokens = self._tokens[line]
        if tokens is None:
            text = self.lines[line]
            tokens = self.tokenizer.line(text)
            self._tokens[line] = tokens
            self._count(tokens, text, 1)
        return tokens

    def tokenized_through(self, line: int) -> bool:
        """Whether lines ``0..line`` all have their tokens."""
        self._advance_pending()
        return self._pending > line

    @property
    def complete(self) -> bool:
        """Whether every line has its tokens."""
        self._advance_pending()
        return self._pending >= len(self.lines)

    def _advance_pending(self) -> None:
        # list.index runs in C: after an edit deep in a large document, finding the few
        # lines without tokens must not cost a Python step per line.
        try:
            self._pending = self._tokens.index(None, self._pending)
        except ValueError:
            self._pending = len(self._tokens)

    def tokenize_pending(self, max_lines: int) -> bool:
        """Tokenize up to ``max_lines`` lines that lack tokens, in order; True when done."""
        for _ in range(max_lines):
            self._advance_pending()
            if self._pending >= len(self.lines):
                return True
            self.line_tokens(self._pending)
        self._advance_pending()
        return self._pending >= len(self.lines)

    def tokens_before(self, line: int) -> int:
        """How many tokens come before line ``line`` (tokenizing the lines before it)."""
        self._advance_pending()
        if self._pending < line:
            self.tokenize_pending(line - self._pending)
        if self._prefix is None or len(self._prefix) <= line:
            counts = [tokens.tokens for tokens in self._tokens[: self._pending]]
            self._prefix = [0, *accumulate(counts)]
        return self._prefix[line]

    def line_spans(self, line: int) -> list[LineSpan]:
        return self.line_tokens(line).spans()

    def span_at(self, point: Point) -> tuple[int, LineSpan] | None:
        """The token holding the character at ``point`` as ``(index in line, span)``; at
        the end of a line's content, its line-ending token; None at the end of the text."""
        for number, span in enumerate(self.line_tokens(point.line).spans()):
            if span.start <= point.column < span.end:
                return number, span
        return None

    def token_at(self, point: Point) -> DocumentToken | None:
        """Like :meth:`span_at`, with the token's chunk and its index in the document
        (None until the lines above are tokenized: see :meth:`tokenize_pending`)."""
        found = self.span_at(point)
        if found is None:
            return None
        number, span = found
        return self._token(point.line, number, span)

    def _token(self, line: int, number: int, span: LineSpan) -> DocumentToken:
        before = self.tokens_before(line) if self.tokenized_through(line - 1) else None
        return DocumentToken(
            span.id,
            span.piece,
            line,
            span.start,
            span.end,
            None if before is None else before + number,
            self.line_tokens(line).chunks[span.chunk],
            span.chunk,
            span.piece_index,
        )

    def tokens_in(self, start: Point, end: Point) -> Iterator[DocumentToken]:
        """Tokens that overlap ``[start, end)``, in order (an empty range touches none)."""
        for line, number, span in self.spans_in(start, end):
            yield self._token(line, number, span)

    def spans_in(self, start: Point, end: Point) -> Iterator[tuple[int, int, LineSpan]]:
        """``(line, index in line, span)`` of the tokens that overlap ``[start, end)``.

        A token left with no characters by NFC (a decomposed character's second piece,
        placed at the end of that character) goes with the character it ends.
        """
        for line in range(start.line, end.line + 1):
            low = start.column if line == start.line else 0
            high = end.column if line == end.line else len(self.lines[line])
            if low >= high:
                continue
            for number, span in enumerate(self.line_tokens(line).spans()):
                if span.start == span.end:
                    if low < span.start <= high:
                        yield line, number, span
                    elif span.start > high:
                        break
                elif span.start >= high:
                    break
                elif span.end > low:
                    yield line, number, span

    def stats(self, start: Point | None = None, end: Point | None = None) -> Stats:
        """Counts for the whole document, or for the tokens and chunks that overlap
        ``[start, end)`` (a token cut by the range's edge counts)."""
        if start is None or end is None:
            self.tokenize_pending(len(self.lines))
            return Stats(*self._totals)
        if end < start:
            start, end = end, start
        characters = self.index.point_offset(end) - self.index.point_offset(start)
        tokens = chunks = unknown = 0
        for line in range(start.line, end.line + 1):
            low = start.column if line == start.line else 0
            high = end.column if line == end.line else len(self.lines[line])
            if low == 0 and high >= len(self.lines[line]):
                line_tokens = self.line_tokens(line)
                tokens += line_tokens.tokens
                chunks += len(line_tokens.chunks)
                unknown += line_tokens.unknown
                continue
            seen = set()
            for _, _, span in self.spans_in(Point(line, low), Point(line, high)):
                tokens += 1
                unknown += span.id == UNK_ID
                seen.add(span.chunk)
            chunks += len(seen)
        return Stats(tokens, chunks, characters, unknown)

