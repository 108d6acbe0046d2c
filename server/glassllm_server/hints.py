"""Which inlay hints a range of a document gets: chunk boundaries, ▁ markers, token boundaries.

- a chunk boundary ``¦`` between two chunks of a line (none at a line's start, nor before
  its line ending, where the boundary is plain to see);
- a ``▁`` after each space: the space travels as the marker at the front of the next
  piece (``Era ▁uma ▁vez``);
- a token boundary ``·`` between two tokens of one chunk (off by default).

Each hint records the column of the token it describes, for ``inlayHint/resolve``.
No pygls here.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from itertools import accumulate, chain, repeat
from operator import add, itemgetter, sub

from glassllm_server.document import ReadOnlyDocument
from glassllm_server.line_tokens import AnyLineTokens, LineSpan
from glassllm_server.positions import Encoding, Point, column_units, columns_to_units, content_length
from glassllm_server.render.hints import LABELS
from glassllm_server.settings import Settings

__all__ = ["HintCache", "hint_window", "hints_json", "line_hints", "line_ranges"]


def line_hints(
    text: str, tokens: AnyLineTokens, switches: tuple[bool, bool, bool], low: int = 0, high: int | None = None
) -> list[tuple[int, str, int]]:
    """``(column, kind, token column)`` of the hints of one line, in column order: every
    hint, or at least those at columns ``low..high`` (a window of a long line).

    ``switches`` are (chunk boundaries, space markers, token boundaries).
    """
    chunks, spaces, inner = switches
    content = content_length(text)
    found: list[tuple[int, str, int]] = []
    whole = low == 0 and (high is None or high >= len(text))
    if whole and tokens.origin is None and not inner:
        # The common case, without a record per token: chunk boundaries are the chunks'
        # starts (every piece has characters when NFC changed nothing).
        high = len(text)
        if chunks:
            starts = tokens.chunk_starts()
            columns = starts[1 : bisect_left(starts, content)]
            found = list(zip(columns, repeat("chunk"), columns))
        spans: list[LineSpan] = []
        previous_end, previous_chunk = 0, -1
    elif whole:
        spans, high = tokens.spans(), len(text)
        previous_end, previous_chunk = 0, -1
    else:
        # The window starts a chunk or two before ``low``: its first span is no hint.
        high = len(text) if high is None else high
        spans = tokens.window(low, high)[1]
        previous_end, previous_chunk = -1, -1
    for span in spans:
        column = span.start
        if span.start != span.end and 0 < column < content and column == previous_end:
            if span.chunk != previous_chunk:
                if chunks:
                    found.append((column, "chunk", column))
            elif inner:
                found.append((column, "token", column))
        previous_end, previous_chunk = span.end, span.chunk
    if spaces:
        # The column after each space of text[start:high], without a Python step per
        # space: the lengths of the pieces between spaces, accumulated.
        start = max(low - 1, 0)
        pieces = text[start:high].split(" ")
        if len(pieces) > 1:
            after = list(accumulate(map(_PLUS_ONE, map(len, pieces[:-1])), initial=start))[1:]
            found.extend(zip(after, repeat("space"), map(_MINUS_ONE, after)))
            # Stable: at one column, the hints found first (a chunk's) stay first.
            found.sort(key=_COLUMN)
    return found


def hint_window(document: ReadOnlyDocument, start: Point, end: Point, max_lines: int) -> tuple[Point, Point]:
    """``[start, end]`` cut to ``max_lines`` lines around the document's
    :attr:`~ReadOnlyDocument.focus_line` (where the user last edited or hovered).

    Some clients (Neovim) ask for the whole document's hints, which for a large one
    means millions of them.
    """
    if end < start:
        start, end = end, start
    if end.line - start.line + 1 <= max_lines:
        return start, end
    first = min(max(document.focus_line - max_lines // 2, start.line), end.line - max_lines + 1)
    last = first + max_lines - 1
    if first > start.line:
        start = Point(first, 0)
    if last < end.line:
        end = Point(last, len(document.lines[last]))
    return start, end


def line_ranges(document: ReadOnlyDocument, start: Point, end: Point) -> Iterator[tuple[int, int, int]]:
    """``(line, low, high)`` for each line of ``[start, end]``: hints at columns
    ``low <= column <= high`` of that line lie within the range."""
    if end < start:
        start, end = end, start
    for line in range(start.line, end.line + 1):
        low = start.column if line == start.line else 0
        high = end.column if line == end.line else len(document.lines[line])
        yield line, low, high


# An InlayHint as JSON, one template per kind: compact and ASCII (labels escaped), as 100
# lines of prose carry thousands of hints, every byte written, read and parsed again by
# the client; an ASCII answer is joined, encoded and parsed faster than one with the
# labels' UTF-8. The members are ordered so that what varies per request (the line, the
# URI, the version) is one stretch, written once per line for all of its hints:
# ``\x00`` stands for ``LINE},"data":[URI,VERSION,LINE`` (``json.dumps`` escapes control
# characters, so it cannot occur in anything else written here).
_VARYING = "\x00"
_TEMPLATES = {
    kind: '{"label":' + json.dumps(label) + ',"position":{"character":%d,"line":' + _VARYING + ",%d]}"
    for kind, label in LABELS.items()
}
_COLUMN = itemgetter(0)
_PLUS_ONE = (1).__add__
_MINUS_ONE = (-1).__add__


class HintCache:
    """The serialized hints of recently shown lines, by line tokens, encoding and switches.

    Entries hold the :class:`LineTokens` they were made from (shared by every line of
    the same text, replaced when the tokenizer changes), so a hit is checked by identity.
    Bounded: a document scrolled end to end must not keep every line's hints.
    """

    def __init__(self, limit: int = 1024) -> None:
        self.limit = limit
        self._entries: OrderedDict[tuple[int, str, tuple[bool, ...]], tuple[AnyLineTokens, str]] = OrderedDict()

    def line(self, text: str, tokens: AnyLineTokens, encoding: Encoding, switches: tuple[bool, bool, bool]) -> str:
        """The line's hints as JSON objects, comma-separated, with ``\x00`` for what
        varies per request (see ``_TEMPLATES``)."""
        key = (id(tokens), encoding, switches)
        entry = self._entries.get(key)
        if entry is not None and entry[0] is tokens:
            self._entries.move_to_end(key)
            return entry[1]
        objects = _serialize(text, tokens, encoding, switches)
        self._entries[key] = (tokens, objects)
        if len(self._entries) > self.limit:
            self._entries.popitem(last=False)
        return objects


def _serialize(
    text: str,
    tokens: AnyLineTokens,
    encoding: Encoding,
    switches: tuple[bool, bool, bool],
    low: int = 0,
    high: int | None = None,
) -> str:
    """The hints of columns ``low..high`` of a line (all of them by default), as JSON
    objects, comma-separated."""
    hints = line_hints(text, tokens, switches, low, high)
    if low > 0 or (high is not None and high < len(text)):
        hints = [hint for hint in hints if low <= hint[0] <= (len(text) if high is None else high)]
    if not hints:
        return ""
    # Column by column, each a pass in C, and one format for the line: thousands of
    # hints per request.
    columns, kinds, token_columns = zip(*hints, strict=True)
    # Units counted from the first hint's column: a window of a long line costs the window.
    base = columns[0]
    base_units = columns_to_units(text, base, encoding)
    units = column_units(text[base : columns[-1]], encoding)
    if units is None:
        characters: Iterable[int] = map(add, columns, repeat(base_units - base))
    else:
        characters = map(add, map(units.__getitem__, map(sub, columns, repeat(base))), repeat(base_units))
    values = tuple(chain.from_iterable(zip(characters, token_columns, strict=True)))
    return ",".join(map(_TEMPLATES.__getitem__, kinds)) % values


def hints_json(
    document: ReadOnlyDocument, start: Point, end: Point, settings: Settings, encoding: Encoding, cache: HintCache
) -> list[str]:
    """The hints whose position lies within ``[start, end]``, in document order, as LSP
    ``InlayHint`` JSON objects comma-joined per line: what the server answers.

    ``data`` is ``[uri, version, line, token column]`` for ``inlayHint/resolve``. A
    screenful of prose carries thousands of hints, so each line's hints are serialized
    once, with a placeholder for what varies (line number, URI, version), and kept in
    ``cache``; a line cut by the range is serialized afresh.
    """
    switches = settings.hint_switches
    if not any(switches):
        return []
    uri, version = json.dumps(document.uri), json.dumps(document.version)
    parts: list[str] = []
    for line, low, high in line_ranges(document, start, end):
        text, tokens = document.lines[line], document.line_tokens(line)
        if low > 0 or high < len(text):
            whole = _serialize(text, tokens, encoding, switches, low, high)
        else:
            whole = cache.line(text, tokens, encoding, switches)
        if whole:
            parts.append(whole.replace(_VARYING, f'{line}}},"data":[{uri},{version},{line}'))
    return parts
