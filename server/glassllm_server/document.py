"""An open document: its lines, its version and its tokens, filled in lazily, and the
read-only view of it a request works on.

A document is tokenized in blocks of lines, whatever its tokenizer (a line each for
glassllm's own, what a real model's pre-tokenizer needs for it: see
:mod:`glassllm_server.line_tokenizer`, which holds the caches they share), and each line
keeps its part of its block's tokens, so an edit re-tokenizes only the blocks it changed.
:class:`Document` is the live one the client's notifications edit;
:meth:`Document.snapshot` gives a :class:`ReadOnlyDocument`, the document as it is now,
which later edits do not change and which has no way to change it.

Everything here works in code points: a :class:`~glassllm_server.positions.Point` is a
line and a code-point column. Converting to LSP positions is :mod:`positions`' job. No
pygls here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import accumulate, count, islice
from time import perf_counter
from typing import Any, NamedTuple, Protocol, TypeVar
from weakref import WeakKeyDictionary, WeakSet

from glassllm_server.gaps import Gaps
from glassllm_server.line_tokenizer import LineTokenizer
from glassllm_server.line_tokens import AnyLineTokens, ChunkTokens, LineSpan
from glassllm_server.positions import LineIndex, Point, content_length, split_lines

__all__ = ["Document", "DocumentToken", "LineState", "ReadOnlyDocument", "Stats"]


class Stats(NamedTuple):
    """Counts for a document or a range of it."""

    tokens: int
    chunks: int
    characters: int
    unknown: int


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
    # Where the whole token starts and ends when it crosses a line break (a real
    # model's ".\n\n"); None when it lies within its line.
    extent: tuple[Point, Point] | None = None

    @property
    def start_point(self) -> Point:
        return Point(self.line, self.start) if self.extent is None else self.extent[0]

    @property
    def end_point(self) -> Point:
        return Point(self.line, self.end) if self.extent is None else self.extent[1]


class LineState(Protocol):
    """Per-line state kept beside a document's versions (:meth:`ReadOnlyDocument.line_state`)."""

    def replaced(self, first: int, old_lines: list[str], new_lines: list[str], in_place: bool) -> LineState:
        """The state after the lines from ``first`` on, ``old_lines``, were replaced by
        ``new_lines``: a new object, which takes the old one's lists when ``in_place``
        (nothing holds the old version any more) and copies them otherwise (the old one
        still describes it)."""
        ...


_State = TypeVar("_State", bound=LineState)


class _Version:
    """One version of a document's text and its tokens, filled in lazily.

    A document and every snapshot taken of it while it is unchanged share one version,
    so tokens computed for any of them are there for all. An edit makes a new version:
    it takes over the old one's line lists and edits them in place when nothing else
    holds the old one (no snapshot: the old version is then dropped), and copies them
    otherwise, so a snapshot keeps its text. In place, an edit costs the lines it
    changed, whatever the document's length.
    """

    __slots__ = (
        "borrowed",
        "counts",
        "cuts",
        "gaps",
        "index",
        "line_states",
        "lines",
        "prefix",
        "revision",
        "snapshots",
        "tokenizer",
        "tokens",
        "totals",
    )

    _revisions = count(1)

    def __init__(self, lines: list[str], tokenizer: LineTokenizer, borrowed: bool = False) -> None:
        self.lines = lines
        self.index = LineIndex(lines)
        self.tokenizer = tokenizer
        self.tokens: list[AnyLineTokens | None] = [None] * len(lines)
        # Each line's number of tokens (0 without tokens), and the tokens before each
        # line as far as a request needed them: a line's index in the document extends
        # the sums from where they stop, in C over ints, and a change to a line's tokens
        # cuts them there.
        self.counts = [0] * len(lines)
        self.prefix = [0]
        # Whether the document is cut into blocks before each line (None: not decided
        # yet; glassllm's own cuts before every line).
        self.cuts: list[bool | None] = [tokenizer.undecided_cut] * len(lines)
        self.gaps = Gaps.everywhere(len(lines))  # the lines without tokens
        self.totals = [0, 0, 0, 0]  # tokens, chunks, characters, unknown of tokenized lines
        # Unique per version: what caches of answers are keyed by.
        self.revision = next(self._revisions)
        # Per-line state kept by others (see ReadOnlyDocument.line_state), weakly by its owner.
        self.line_states: WeakKeyDictionary[Any, LineState] = WeakKeyDictionary()
        # The snapshots that share this version (made on the first), and whether its
        # lines and line states are another version's too (a tokenizer switch keeps
        # them): either way an edit copies them rather than edit them in place.
        self.snapshots: WeakSet[ReadOnlyDocument] | None = None
        self.borrowed = borrowed

    @property
    def shared(self) -> bool:
        """Whether anything but its document holds this version's lists."""
        return self.borrowed or bool(self.snapshots)

    def replaced(self, first: int, stop: int, new_lines: list[str]) -> _Version:
        """A new version with lines ``first..stop-1`` replaced by ``new_lines``; unless
        :attr:`shared`, it takes this version's lists, and this one must not be used again."""
        in_place = not self.shared
        old_lines, old_tokens = self.lines[first:stop], self.tokens[first:stop]
        new_count = len(new_lines)
        version = _Version.__new__(_Version)
        version.tokenizer = tokenizer = self.tokenizer
        version.lines = lines = self.lines if in_place else self.lines.copy()
        lines[first:stop] = new_lines
        version.index = LineIndex(lines)
        version.tokens = tokens = self.tokens if in_place else self.tokens.copy()
        tokens[first:stop] = [None] * new_count
        version.counts = self.counts if in_place else self.counts.copy()
        version.counts[first:stop] = [0] * new_count
        version.prefix = self.prefix if in_place else self.prefix[: first + 1]
        del version.prefix[first + 1 :]
        version.gaps = self.gaps.replaced(old_tokens.count(None), first, stop, new_count)
        version.cuts = cuts = self.cuts if in_place else self.cuts.copy()
        cuts[first:stop] = [tokenizer.undecided_cut] * new_count
        version.totals = totals = self.totals.copy()
        version.revision = next(self._revisions)
        version.line_states = WeakKeyDictionary()
        version.snapshots = None
        version.borrowed = False
        for line_tokens, line in zip(old_tokens, old_lines, strict=False):
            if line_tokens is not None:
                _count(totals, line_tokens, line, -1)
        for owner, state in self.line_states.items():
            version.line_states[owner] = state.replaced(first, old_lines, new_lines, in_place)
        if not tokenizer.lines_alone:
            version._forget_blocks(first, new_count)  # the cuts around the edit may move
        for number, found in enumerate(tokenizer.edited(old_lines, old_tokens, new_lines), first):
            if found is not None:
                version._put(number, found)
        return version

    def _forget_blocks(self, first: int, new_count: int) -> None:
        """After an edit made lines ``first..first+new_count-1`` (its lists edited, the
        cuts before the new lines forgotten): forget the cut after them, which the edit
        may change, and the tokens of every block that held a line next to the edit (the
        cuts around them may have changed)."""
        cuts, tokens = self.cuts, self.tokens
        after = first + new_count
        count = len(tokens)
        # Upward: the block of the line above the edit, whole; downward: the block of the
        # line below it (a block that held replaced lines reaches beyond them only
        # through those). A block's lines are all tokenized or none, and the cuts
        # inside it and at its edges are known (block_of decided them).
        for line, step in ((first - 1, -1), (after, 1)):
            if not 0 <= line < count or tokens[line] is None:
                continue
            while True:
                self._drop(line)
                inside = cuts[line] is False if step < 0 else line + 1 < count and cuts[line + 1] is False
                if not inside:
                    break
                line += step
        if after < count:
            cuts[after] = None

    def _put(self, line: int, tokens: AnyLineTokens) -> None:
        """Give line ``line`` its tokens (in place of none, or of stale ones)."""
        stale = self.tokens[line]
        if stale is None:
            self.gaps.filled()  # prefix never sums past a line without tokens
        else:
            _count(self.totals, stale, self.lines[line], -1)
            del self.prefix[line + 1 :]
        self.tokens[line] = tokens
        self.counts[line] = tokens.tokens
        _count(self.totals, tokens, self.lines[line], 1)

    def _drop(self, line: int) -> None:
        """Forget line ``line``'s tokens."""
        found = self.tokens[line]
        assert found is not None, f"line {line} has no tokens to forget"
        _count(self.totals, found, self.lines[line], -1)
        self.tokens[line] = None
        self.counts[line] = 0
        del self.prefix[line + 1 :]
        self.gaps.emptied(line)

    def cut_before(self, line: int) -> bool:
        """Whether the document is cut into blocks before line ``line``."""
        if line == 0:
            return True
        found = self.cuts[line]
        if found is None:
            found = self.cuts[line] = self.tokenizer.can_cut(self.lines[line - 1], self.lines[line])
        return found

    def prepare_block(self, line: int, deadline: float) -> bool:
        """Tokenize the segments of the long block that holds line ``line`` until
        ``deadline`` (a slice of background work); True when done or when the block is
        not long."""
        first, stop = self.block_of(line)
        return self.tokenizer.prepare(self.lines[first:stop], first == 0, deadline)

    def line_tokens(self, line: int) -> AnyLineTokens:
        tokens = self.tokens[line]
        if tokens is None:
            return self._block_tokens(line)
        return tokens

    def block_of(self, line: int) -> tuple[int, int]:
        """The first line of the block that holds line ``line`` and the line after it."""
        first = line
        while not self.cut_before(first):
            first -= 1
        stop = line + 1
        while stop < len(self.lines) and not self.cut_before(stop):
            stop += 1
        return first, stop

    def _block_tokens(self, line: int) -> AnyLineTokens:
        """Tokenize the block that holds line ``line``."""
        first, stop = self.block_of(line)
        found = self.tokenizer.block(self.lines[first:stop], first == 0)
        for number, tokens in enumerate(found, first):
            self._put(number, tokens)
        return found[line - first]

    def advance_pending(self) -> int:
        """The first line without tokens (the number of lines when none is left)."""
        return self.gaps.first(self.tokens)


def _count(totals: list[int], tokens: AnyLineTokens, line: str, sign: int) -> None:
    totals[0] += sign * tokens.tokens
    totals[1] += sign * tokens.chunk_count
    totals[2] += sign * len(line)
    totals[3] += sign * tokens.unknown


class ReadOnlyDocument:
    """A document to read: its lines, its version and its tokens, filled in lazily.

    ``lines`` follows :func:`split_lines` (one entry per LSP line, endings kept). Tokens
    of a line are computed when first needed; :meth:`tokenize_pending` fills the rest
    in small steps so that a server can interleave it with other work.

    Nothing here changes the text: a snapshot (:meth:`Document.snapshot`) is one, the
    document as a request found it, whatever edits come after. Filling in tokens is no
    change: every reader of a version sees the same ones.
    """

    def __init__(self, uri: str, version: int | None, text: _Version, focus: list[int]) -> None:
        self.uri = uri
        self._number = version
        self._version = text
        # The line the user last edited or hovered: where views that cannot cover a
        # large document whole (inlay hints for the whole of it) look. One cell shared
        # by a document and its snapshots; only the live document moves it.
        self._focus = focus

    @property
    def version(self) -> int | None:
        """The client's version number of the text."""
        return self._number

    def same_text(self, other: ReadOnlyDocument) -> bool:
        """Whether ``other`` (a snapshot, say) is this very version, tokens included."""
        return self._version is other._version

    @property
    def lines(self) -> list[str]:
        """The lines (do not modify). A live document's next edit may change this very
        list; take a :meth:`Document.snapshot` to keep them."""
        return self._version.lines

    @property
    def index(self) -> LineIndex:
        return self._version.index

    @property
    def tokenizer(self) -> LineTokenizer:
        return self._version.tokenizer

    @property
    def revision(self) -> int:
        """Changes with every edit and tokenizer switch; equal for a snapshot."""
        return self._version.revision

    @property
    def focus_line(self) -> int:
        return self._focus[0]

    @property
    def text(self) -> str:
        return "".join(self.lines)

    def line_state(self, owner: object, new: Callable[[int], _State]) -> _State:
        """Per-line state that ``owner`` keeps for this version of the text (a compared
        tokenizer's counts, say): made by ``new(line_count)`` on first use, then carried
        through each edit by its ``replaced``, so the next version's state costs the
        edited lines. Held weakly by ``owner``; a snapshot keeps its own version's."""
        states = self._version.line_states
        state = states.get(owner)
        if state is None:
            state = states[owner] = new(len(self.lines))
        return state  # type: ignore[return-value]

    # Tokens

    def block_of(self, line: int) -> tuple[int, int]:
        """The first line of the block that holds line ``line`` and the line after it
        (see :mod:`glassllm_server.line_tokenizer`)."""
        return self._version.block_of(line)

    def line_tokens(self, line: int) -> AnyLineTokens:
        """The tokens of line ``line`` (computed now if needed)."""
        return self._version.line_tokens(line)

    def tokenized_through(self, line: int) -> bool:
        """Whether lines ``0..line`` all have their tokens."""
        return self._version.advance_pending() > line

    @property
    def complete(self) -> bool:
        """Whether every line has its tokens."""
        return self._version.advance_pending() >= len(self.lines)

    def tokenize_pending(self, max_lines: int) -> bool:
        """Tokenize up to ``max_lines`` lines that lack tokens, in order; True when done."""
        version = self._version
        total = len(version.lines)
        for _ in range(max_lines):
            pending = version.advance_pending()
            if pending >= total:
                return True
            version.line_tokens(pending)
        return version.advance_pending() >= total

    def tokenize_for(self, seconds: float) -> bool:
        """Tokenize lines that lack tokens, in order, for about ``seconds`` (a very long
        line a segment at a time); True when every line has its tokens."""
        deadline = perf_counter() + seconds
        version = self._version
        total = len(version.lines)
        while True:
            pending = version.advance_pending()
            if pending >= total:
                return True
            if perf_counter() >= deadline:
                return False
            if not version.prepare_block(pending, deadline):
                return False
            version.line_tokens(pending)

    def tokens_before(self, line: int) -> int:
        """How many tokens come before line ``line`` (tokenizing the lines before it)."""
        version = self._version
        pending = version.advance_pending()
        if pending < line:
            self.tokenize_pending(line - pending)
        prefix = version.prefix
        if len(prefix) <= line:
            sums = accumulate(version.counts[len(prefix) - 1 : line], initial=prefix[-1])
            prefix.extend(islice(sums, 1, None))
        return prefix[line]

    def line_spans(self, line: int) -> list[LineSpan]:
        return self.line_tokens(line).spans()

    def span_at(self, point: Point) -> tuple[int, LineSpan] | None:
        """The token holding the character at ``point`` as ``(index in line, span)``; at
        the end of a line's content, its line-ending token; None at the end of the text."""
        return next(self._holding(point), None)

    def token_at(self, point: Point) -> DocumentToken | None:
        """Like :meth:`span_at`, with the token's chunk and its index in the document
        (None until the lines above are tokenized: see :meth:`tokenize_pending`)."""
        found = self.span_at(point)
        if found is None:
            return None
        number, span = found
        return self._token(point.line, number, span)

    def tokens_at(self, point: Point) -> list[DocumentToken]:
        """Every token holding the character at ``point``, in order: the one of
        :meth:`token_at`, then those holding more of its bytes when a real model splits
        its UTF-8 over several (byte-level pieces, SentencePiece's byte fallback)."""
        return [self._token(point.line, number, span) for number, span in self._holding(point)]

    def _holding(self, point: Point) -> Iterator[tuple[int, LineSpan]]:
        """``(index in line, span)`` of each token holding the character at ``point``."""
        first, spans = self.line_tokens(point.line).window(point.column, point.column + 1)
        for number, span in enumerate(spans, first):
            if span.start <= point.column < span.end:
                yield number, span

    def meant_token(self, point: Point) -> DocumentToken | None:
        """The token a cursor at ``point`` means: the one under it, at the end of a line
        the last one before it; None on an empty line or past the text."""
        token = self.token_at(point)
        if (token is None or token.start >= content_length(self.lines[point.line])) and point.column > 0:
            token = self.token_at(Point(point.line, point.column - 1))
        if token is None or token.start >= content_length(self.lines[token.line]):
            return None
        return token

    def _token(self, line: int, number: int, span: LineSpan) -> DocumentToken:
        before = self.tokens_before(line) if self.tokenized_through(line - 1) else None
        tokens = self.line_tokens(line)
        extent = None
        if tokens.crosses_lines and (number < 0 or span.end == len(self.lines[line])):
            (first_line, first_column), (last_line, last_column) = tokens.extent(number)
            if first_line != last_line:
                extent = Point(line + first_line, first_column), Point(line + last_line, last_column)
        return DocumentToken(
            span.id,
            span.piece,
            line,
            span.start,
            span.end,
            None if before is None else before + number,
            tokens.chunk(span.chunk),
            span.chunk,
            span.piece_index,
            extent,
        )

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
            first, spans = self.line_tokens(line).window(low, high)
            for number, span in enumerate(spans, first):
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
            return Stats(*self._version.totals)
        if end < start:
            start, end = end, start
        characters = self.index.point_offset(end) - self.index.point_offset(start)
        unk = self.tokenizer.unk_id
        tokens = chunks = unknown = 0
        for line in range(start.line, end.line + 1):
            low = start.column if line == start.line else 0
            high = end.column if line == end.line else len(self.lines[line])
            # A token (or chunk) that a real model's line carries in from the line above
            # counts on the range's first line; below, it was counted where it starts.
            first = line == start.line
            if low == 0 and high >= len(self.lines[line]):
                line_tokens = self.line_tokens(line)
                tokens += line_tokens.tokens - line_tokens.leading_empty
                chunks += line_tokens.chunk_count
                unknown += line_tokens.unknown
                if first and line_tokens.continued:
                    chunks += 1
                if first and line_tokens.first < 0:
                    tokens += 1
                    unknown += line_tokens.spans()[0].id == unk
                continue
            seen = set()
            for _, number, span in self.spans_in(Point(line, low), Point(line, high)):
                if number < 0 and not first:
                    continue
                tokens += 1
                unknown += span.id == unk
                if span.chunk >= 0 or first:
                    seen.add(span.chunk)
            chunks += len(seen)
        return Stats(tokens, chunks, characters, unknown)


class Document(ReadOnlyDocument):
    """One open document, as the client's notifications leave it: edits replace its
    version of the text; :meth:`snapshot` gives the version it has now, to read."""

    def __init__(self, uri: str, text: str, version: int | None, tokenizer: LineTokenizer) -> None:
        super().__init__(uri, version, _Version(split_lines(text), tokenizer), [0])

    def snapshot(self) -> ReadOnlyDocument:
        """This document as it is now: later edits to it do not change the snapshot."""
        version = self._version
        copy = ReadOnlyDocument(self.uri, self._number, version, self._focus)
        if version.snapshots is None:
            version.snapshots = WeakSet()
        version.snapshots.add(copy)
        return copy

    def focus(self, line: int) -> None:
        """Make ``line`` the one the user last edited or hovered (see :attr:`focus_line`)."""
        self._focus[0] = line

    def set_version(self, version: int | None) -> None:
        """The client's version number of the text after its last edits."""
        self._number = version

    def apply_change(self, start: Point | None, end: Point | None, text: str) -> None:
        """Replace the text between two points (the whole text when ``start`` is None)."""
        lines = self.lines
        if start is None or end is None:
            first, last = 0, len(lines) - 1
            replaced = text
        else:
            if end < start:
                start, end = end, start
            # One more line on each side: a "\r" next to an inserted "\n" becomes "\r\n".
            first, last = max(start.line - 1, 0), min(end.line + 1, len(lines) - 1)
            old = "".join(lines[first : last + 1])
            begin = sum(map(len, lines[first : start.line])) + start.column
            finish = sum(map(len, lines[first : end.line])) + end.column
            replaced = old[:begin] + text + old[finish:]
        new_lines = split_lines(replaced)
        if last < len(lines) - 1:
            # The region ended with a line ending, so its split has an empty tail.
            new_lines.pop()
        self._version = self._version.replaced(first, last + 1, new_lines)

    def set_tokenizer(self, tokenizer: LineTokenizer) -> None:
        """Use another tokenizer: every line is tokenized again when next needed."""
        version = _Version(self.lines, tokenizer, borrowed=True)
        # The same lines: per-line state that does not depend on the tokenizer stays.
        version.line_states.update(self._version.line_states)
        self._version = version

    def replace_text(self, text: str) -> None:
        self.apply_change(None, None, text)
