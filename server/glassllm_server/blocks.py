"""A real model's tokens in a document: tokenized in blocks of lines, kept line by line.

A real model's pre-tokenizer can cross a line break (Llama 3's ``\\s*[\\r\\n]+`` makes one
chunk of ``".\\n\\n"``; GPT-2's ``\\s+(?!\\S)`` takes the next line's indentation), and
SentencePiece adds its dummy prefix at the start of the whole text only. So lines are not
tokenized one by one: the document is cut where the model itself says cutting changes
nothing (:meth:`~glassllm.formats.model_tokenizer.ModelTokenizer.can_cut`: the tokens of the two sides,
the second tokenized as a continuation, are those of the whole), and each run of lines
between two cuts — a block, mostly one line or a paragraph's few — is tokenized whole.
An edit re-tokenizes the blocks it touches (see ``document._Version.replaced``).
A block longer than :data:`LONG_BLOCK` characters (a line of a megabyte) is tokenized in
segments, cut inside its lines where the model says that changes nothing either
(:meth:`~glassllm.formats.model_tokenizer.ModelTokenizer.can_cut_within`): an edit then re-tokenizes the
segment it touched, and the others are found again in a cache.

Each line then keeps its part of its block's tokens (:class:`ModelLineTokens`), with the
interface of every line's tokens (:class:`~glassllm_server.line_tokens.AnyLineTokens`): a token that crosses a line
break keeps its exact range in the block, and each line it reaches holds the part of it
that lies there; a line's token counts are those of the tokens that start in it, the part
carried in from the line above (numbered ``-1``, chunk ``-1``) is counted there.
No pygls here.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate, chain, compress, pairwise
from operator import ne

from glassllm.formats.model_tokenizer import CUT_WITHIN_CONTEXT, ModelTokenizer, TokenColumns
from glassllm.pipeline.normalize import common_prefix, common_suffix
from glassllm.pipeline.tokens import TokenSpan
from glassllm_server.line_tokens import AnyLineTokens, ChunkTokens, LineSpan, SegmentedLineTokens

__all__ = [
    "Block",
    "ModelLineTokens",
    "block_segments",
    "segment_cuts",
    "tokenize_block",
    "tokenize_long_block",
]


class Block:
    """Lines tokenized together: their text, whether it opens the document, and (on
    demand, for a hover or an explanation) its chunks."""

    __slots__ = ("_chunks", "_spans", "at_start", "line_starts", "text", "tokenizer")

    def __init__(self, tokenizer: ModelTokenizer, text: str, at_start: bool, line_starts: list[int]) -> None:
        self.tokenizer = tokenizer
        self.text = text
        self.at_start = at_start
        self.line_starts = line_starts  # offset of each line in the text, then its length
        self._chunks: list[ChunkTokens] | None = None
        self._spans: list[TokenSpan] | None = None

    def extent(self, token: int) -> tuple[tuple[int, int], tuple[int, int]]:
        """Where the block's token number ``token`` starts and ends: (line in the block,
        column) each."""
        if self._spans is None:
            self._spans = self.tokenizer.encode_spans(self.text, at_start=self.at_start)
        span = self._spans[token]
        return self._point(span.start), self._point(span.end)

    def _point(self, offset: int) -> tuple[int, int]:
        line = min(bisect_right(self.line_starts, offset) - 1, len(self.line_starts) - 2)
        return line, offset - self.line_starts[line]

    def chunk(self, number: int) -> ChunkTokens:
        """The block's chunk number ``number``."""
        if self._chunks is None:
            tokenizer = self.tokenizer
            spans = tokenizer.encode_spans(self.text, at_start=self.at_start)
            chunks = tokenizer.chunk_spans(self.text, at_start=self.at_start)
            pieces: list[list[str]] = [[] for _ in chunks]
            ids: list[list[int]] = [[] for _ in chunks]
            for span in spans:
                pieces[span.chunk].append(span.piece)
                ids[span.chunk].append(span.id)
            unk = tokenizer.unk_id
            self._chunks = [
                ChunkTokens(text, tuple(found), tuple(numbers), numbers.count(unk) if unk is not None else 0)
                for (text, _, _), found, numbers in zip(chunks, pieces, ids, strict=True)
            ]
        return self._chunks[number]


class ModelLineTokens(AnyLineTokens):
    """One line's part of its block's tokens (see the module's docstring)."""

    __slots__ = (
        "_carried_piece",
        "_data",
        "_odd_pieces",
        "block",
        "chunk_base",
        "chunk_count",
        "continued",
        "first",
        "leading_empty",
        "length",
        "line_in_block",
        "origin",
        "starts_of_chunks",
        "token_base",
        "tokens",
        "unknown",
    )

    crosses_lines = True  # a token may hold the end of a line and the start of the next

    def __init__(
        self,
        block: Block,
        columns: TokenColumns,
        length: int,
        chunk_base: int,
        starts_of_chunks: Iterable[int],
        carried: tuple[bool, int],
        line_in_block: int,
        token_base: int,
    ) -> None:
        """``columns``: the line's tokens, columns within the line, chunk numbers
        relative to ``chunk_base`` (``-1``: the chunk carried in from above);
        ``carried``: whether the first is the part of a token from above, and the index
        in its chunk of the line's first token of the chunk carried in."""
        ids, _, starts, ends, chunks = columns
        self.block = block
        self.line_in_block = line_in_block
        self.token_base = token_base  # the block's number of the first token starting here
        self._keep_columns(columns)
        self._carried_piece = carried[1]
        self.continued = bool(chunks) and chunks[0] < 0  # the line starts in a chunk from above
        self.length = length
        self.chunk_base = chunk_base  # the block's number of the first chunk starting here
        self.starts_of_chunks = array("i", starts_of_chunks)  # columns where this line's chunks start
        self.first = -1 if carried[0] else 0
        self.tokens = len(ids) + self.first
        # Tokens that hold no character at the line's start (SentencePiece's dummy
        # prefix): a range counts them only where they end a character, never here.
        self.leading_empty = sum(1 for start, end in zip(starts[:2], ends[:2], strict=True) if start == end == 0)
        self.chunk_count = len(self.starts_of_chunks)
        unk = block.tokenizer.unk_id
        self.unknown = 0 if unk is None else ids[-self.first :].count(unk)
        self.origin = None  # offsets are columns of the line already

    @classmethod
    def counted(cls, block: Block, chunks: list[str], ids: list[tuple[int, ...]]) -> ModelLineTokens:
        """A block of one line whose ``chunks`` tile it as it is, each with its ``ids``
        (:meth:`~glassllm.formats.model_tokenizer.ModelTokenizer.plain_chunk_ids`): its
        counts now, its columns when something reads them. A document tokenized whole
        needs the counts of every line and the columns of the few in view: this makes
        no offsets, and merges a first pass's chunks as ``encode`` does, IDs only."""
        line = cls.__new__(cls)
        line.block = block
        line.line_in_block = line.token_base = line.chunk_base = line._carried_piece = line.first = 0
        line._data = line._odd_pieces = None
        line.continued = False
        line.length = len(block.text)
        line.starts_of_chunks = array("i", accumulate(map(len, chunks[:-1]), initial=0)) if chunks else array("i")
        line.tokens = sum(map(len, ids))
        line.leading_empty = 0  # the text as it is: no dummy prefix
        line.chunk_count = len(chunks)
        unk = block.tokenizer.unk_id
        line.unknown = 0 if unk is None else list(chain.from_iterable(ids)).count(unk)
        line.origin = None
        return line

    def _keep_columns(self, columns: TokenColumns) -> None:
        ids, pieces, starts, ends, chunks = columns
        # The spans packed as four columns of integers (IDs, starts, ends, chunks) one
        # after the other: a large document holds millions of tokens, and a record each
        # would weigh 150 bytes; each column is copied in C.
        data = array("i", ids)
        data.extend(starts)
        data.extend(ends)
        data.extend(chunks)
        unk = self.block.tokenizer.unk_id
        # The pieces that are not their ID's vocabulary entry (an unknown character's).
        # Set before the columns: a reader in another thread that finds these finds both.
        self._odd_pieces = (
            {number: piece for number, (token_id, piece) in enumerate(zip(ids, pieces, strict=True)) if token_id == unk}
            if unk is not None and unk in ids
            else None
        )
        self._data = data

    def _columns(self) -> array[int]:
        """The packed columns, made now for a line :meth:`counted` made."""
        if self._data is None:
            block = self.block
            self._keep_columns(block.tokenizer.encode_columns(block.text, at_start=block.at_start))
        return self._data  # type: ignore[return-value]

    def chunk(self, index: int) -> ChunkTokens:
        return self.block.chunk(self.chunk_base + index)

    def extent(self, number: int) -> tuple[tuple[int, int], tuple[int, int]]:
        (first_line, first_column), (last_line, last_column) = self.block.extent(self.token_base + number)
        return (first_line - self.line_in_block, first_column), (last_line - self.line_in_block, last_column)

    def spans(self) -> list[LineSpan]:
        """The line's tokens: first the part of one carried in from above, if any
        (numbered ``-1`` by :meth:`window`), then those that start here; columns within
        the line, cut at its end."""
        data = self._columns()
        count = len(data) // 4
        ids = data[:count]
        vocab = self.block.tokenizer.vocab
        pieces = [vocab[token_id] for token_id in ids]
        if self._odd_pieces is not None:
            for number, piece in self._odd_pieces.items():
                pieces[number] = piece
        chunks = data[3 * count :]
        # Each token's index in its chunk: counted from the chunk's first token (from the
        # carried token's own index in a chunk carried in from above).
        indices = []
        previous, index = None, 0
        for chunk in chunks:
            if chunk == previous:
                index += 1
            else:
                index = self._carried_piece if chunk < 0 else 0
                previous = chunk
            indices.append(index)
        starts, ends = data[count : 2 * count], data[2 * count : 3 * count]
        return list(map(LineSpan._make, zip(ids, pieces, starts, ends, chunks, indices, strict=True)))

    def window(self, low: int, high: int) -> tuple[int, list[LineSpan]]:
        """Every token of the line (a block's line is short, or was never cut), and the
        number of the first: ``-1`` when it is the part of one carried in from above."""
        return self.first, self.spans()

    def chunk_starts(self) -> list[int]:
        """Column 0, the columns where later chunks start, then the line's length."""
        starts = self.starts_of_chunks.tolist()
        # Columns only grow: only the first chunk can start at column 0.
        return [0, *(starts[1:] if starts and starts[0] == 0 else starts), self.length]


def tokenize_block(
    tokenizer: ModelTokenizer, lines: Sequence[str], at_start: bool, columns_now: bool = False
) -> tuple[ModelLineTokens, ...]:
    """The tokens of the block ``lines`` (each with its ending), one entry per line;
    a line the model reads as it is keeps its counts only until something reads its
    columns, unless ``columns_now``."""
    text = "".join(lines)
    line_starts = list(accumulate(map(len, lines), initial=0))
    block = Block(tokenizer, text, at_start, line_starts)
    if len(lines) == 1 and not columns_now:
        plain = tokenizer.plain_chunk_ids(text, at_start=at_start)
        if plain is not None:
            return (ModelLineTokens.counted(block, *plain),)
    columns = tokenizer.encode_columns(text, at_start=at_start)
    if len(lines) == 1:
        # Most blocks: nothing to share out.
        chunks = columns.chunks
        firsts = map(ne, chunks, chain((-1,), chunks))
        return (ModelLineTokens(block, columns, len(text), 0, compress(columns.starts, firsts), (False, 0), 0, 0),)
    shares = _share_out(columns, line_starts)
    token_base = list(accumulate(shares.started, initial=0))
    return tuple(
        ModelLineTokens(
            block,
            shares.parts[number],
            len(line),
            shares.chunk_base[number],
            shares.chunk_starts[number],
            shares.carried[number] or (False, 0),
            number,
            token_base[number],
        )
        for number, line in enumerate(lines)
    )


class _Shares:
    """A block's tokens shared out to its lines, each line's in its own columns."""

    def __init__(self, count: int) -> None:
        self.parts = [TokenColumns([], [], [], [], []) for _ in range(count)]
        self.chunk_starts: list[list[int]] = [[] for _ in range(count)]
        self.chunk_base = [0] * count  # the block's number of each line's first chunk
        # Per line: whether a token from above reaches it, and the index in the chunk
        # carried in of the line's first token of that chunk.
        self.carried: list[tuple[bool, int] | None] = [None] * count
        self.started = [0] * count  # tokens that start on each line


def _share_out(columns: TokenColumns, line_starts: list[int]) -> _Shares:
    """Each token goes to the line it starts on, a column span of each line it reaches
    after (as a token of no chunk of that line: -1); each chunk to the line it starts on."""
    count = len(line_starts) - 1
    shares = _Shares(count)
    parts, chunk_starts, chunk_base, carried = shares.parts, shares.chunk_starts, shares.chunk_base, shares.carried
    home_line = -1  # where the current chunk starts
    piece_index = 0
    last_chunk = -1
    for token_id, piece, start, end, chunk in zip(*columns, strict=True):
        line = min(bisect_right(line_starts, start) - 1, count - 1)
        offset = line_starts[line]
        shares.started[line] += 1
        if chunk != last_chunk:
            last_chunk, piece_index, home_line = chunk, 0, line
            if not chunk_starts[line]:
                chunk_base[line] = chunk
            chunk_starts[line].append(start - offset)
        if home_line != line and carried[line] is None:
            carried[line] = (False, piece_index)
        local_chunk = chunk - chunk_base[line] if home_line == line else -1
        _append(parts[line], token_id, piece, start - offset, min(end, line_starts[line + 1]) - offset, local_chunk)
        following = line + 1
        while following < count and end > line_starts[following]:
            # The part of a token that crosses a line break, on each line it reaches.
            part_end = min(end, line_starts[following + 1]) - line_starts[following]
            _append(parts[following], token_id, piece, 0, part_end, -1)
            carried[following] = (True, piece_index)
            following += 1
        piece_index += 1
    last = -1  # the last chunk started so far
    for number, found in enumerate(chunk_starts):
        if found:
            last = chunk_base[number] + len(found) - 1
        else:
            # No chunk starts here: the one carried in is the last one started above.
            chunk_base[number] = last + 1
    return shares


def _append(columns: TokenColumns, token_id: int, piece: str, start: int, end: int, chunk: int) -> None:
    columns.ids.append(token_id)
    columns.pieces.append(piece)
    columns.starts.append(start)
    columns.ends.append(end)
    columns.chunks.append(chunk)


# A block longer than this many characters (a line of a megabyte, say) is tokenized in
# segments of about BLOCK_SEGMENT characters, cut where the model says a cut inside a
# line changes nothing (ModelTokenizer.can_cut_within): an edit then re-tokenizes the
# segment it touched, and a hover reads that segment's chunks, not the line's.
LONG_BLOCK = 8192
BLOCK_SEGMENT = 2048
# The places can_cut_within may accept: an ASCII space between two ASCII letters.
_CANDIDATE = re.compile("[A-Za-z] (?=[A-Za-z])")
# The cuts are chosen by the text around them, not by where the line starts (content-
# defined, as backup tools cut files), so an edit moves only the cuts next to it and the
# segments after it are found again in the cache: a candidate whose two letters are the
# same (one word boundary in some 120 of prose) and whose neighbours pass a test that one
# in _CHOSEN does, so about one cut in 2,000 characters. Where none comes for four
# segments, the first candidate after two is taken.
_CHOSEN_CANDIDATE = re.compile(r"([A-Za-z]) (?=\1)")
_CHOSEN = 16
# What decides a cut around it: the model reads CUT_WITHIN_CONTEXT on each side, the
# choice three characters before.
_READS = CUT_WITHIN_CONTEXT + 3


def segment_cuts(
    can_cut_within: Callable[[str, int], bool],
    text: str,
    segment: int = BLOCK_SEGMENT,
    previous: tuple[str, list[int]] | None = None,
) -> list[int]:
    """Where a long block's ``text`` is cut into segments of about ``segment``
    characters (at least a quarter of it): offsets of spaces where the model can cut
    within a line (``can_cut_within``, :meth:`ModelTokenizer.can_cut_within` or a cache
    of it). A stretch with no such place (a line of CJK, a run of one character) stays
    one segment, however long.

    ``previous``: an earlier text and its cuts (the line before an edit). The cuts that
    only unchanged text decided are kept, and once the search meets one of the old cuts
    after the change, the rest follow, shifted: an edit costs the text around it, not a
    search through the whole line.
    """
    cuts: list[int] = []
    last = 0
    later: dict[int, int] = {}  # an old cut after the change, shifted → its index
    old_cuts: list[int] = []
    shift = 0
    if previous is not None:
        old_text, old_cuts = previous
        same_start = common_prefix(old_text, text)
        same_end = common_suffix(old_text, text, min(len(old_text), len(text)) - same_start)
        shift = len(text) - len(old_text)
        # A cut is the first place found after the one before it, in a window that
        # reaches four segments and a quarter beyond it, reading _READS around it.
        for cut in old_cuts:
            if max(last + 4 * segment + segment // 4, cut) + _READS > same_start:
                break
            cuts.append(cut)
            last = cut
        changed_end = len(old_text) - same_end
        later = {cut + shift: index for index, cut in enumerate(old_cuts) if cut - _READS >= changed_end}
    end = len(text) - segment // 4
    while True:
        cut = _next_cut(can_cut_within, text, last + segment // 4, min(last + 4 * segment, end), chosen=True)
        if cut is None:
            cut = _next_cut(can_cut_within, text, last + 2 * segment, end, chosen=False)
        if cut is None:
            return cuts
        if cut in later:
            return cuts + [old + shift for old in old_cuts[later[cut] :]]
        cuts.append(cut)
        last = cut


def _next_cut(
    can_cut_within: Callable[[str, int], bool], text: str, start: int, stop: int, *, chosen: bool
) -> int | None:
    """The first candidate (a chosen one, if ``chosen``) at ``start..stop`` where the
    model can cut, or ``None``."""
    pattern = _CHOSEN_CANDIDATE if chosen else _CANDIDATE
    found = pattern.search(text, start - 1, stop + 1)
    while found is not None:
        position = found.start() + 1
        if (not chosen or _is_chosen(text, position)) and can_cut_within(text, position):
            return position
        found = pattern.search(text, position, stop + 1)
    return None


def _is_chosen(text: str, position: int) -> bool:
    if position < 3 or position + 2 >= len(text):
        return False
    return (ord(text[position - 2]) + 7 * ord(text[position + 2]) + 13 * ord(text[position - 3])) % _CHOSEN == 0


def block_segments(lines: Sequence[str], cuts: Sequence[int]) -> list[tuple[int, list[str]]]:
    """A long block ``lines`` cut into segments at ``cuts`` (offsets in the block's text,
    see :func:`segment_cuts`): each segment's first line in the block and its pieces of
    lines (the part of each line it holds)."""
    text = "".join(lines)
    line_starts = list(accumulate(map(len, lines), initial=0))
    segments: list[tuple[int, list[str]]] = []
    for number, (start, stop) in enumerate(pairwise([0, *cuts, len(text)])):
        # A cut is never at a line's start (it follows a letter); the last segment also
        # holds an empty last line.
        first = bisect_right(line_starts, start) - 1
        last = bisect_left(line_starts, stop) - 1 if number < len(cuts) else len(lines) - 1
        edges = [start, *line_starts[first + 1 : last + 1], stop]
        segments.append((first, [text[a:b] for a, b in pairwise(edges)]))
    return segments


def tokenize_long_block(
    segments: Sequence[tuple[int, list[str]]],
    line_count: int,
    at_start: bool,
    tokenize: Callable[[Sequence[str], bool], tuple[ModelLineTokens, ...]],
) -> tuple[AnyLineTokens, ...]:
    """The tokens of a long block of ``line_count`` lines cut into ``segments`` (see
    :func:`block_segments`), one entry per line, tokenized a segment at a time by
    ``tokenize(pieces of lines, at_start)`` (:func:`tokenize_block` through a cache): a
    line that reaches several segments gets a :class:`SegmentedLineTokens` of its parts."""
    parts: list[list[tuple[str, ModelLineTokens]]] = [[] for _ in range(line_count)]
    for number, (first, pieces) in enumerate(segments):
        found = tokenize(pieces, at_start and number == 0)
        for line, (piece, tokens) in enumerate(zip(pieces, found, strict=True), first):
            parts[line].append((piece, tokens))
    return tuple(found[0][1] if len(found) == 1 else SegmentedLineTokens(found) for found in parts)
