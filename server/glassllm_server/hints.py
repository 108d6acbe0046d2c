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
from collections.abc import Iterator

from glassllm_server.document import AnyLineTokens, Document, LineSpan
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
            found = [(column, "chunk", column) for column in starts[1 : bisect_left(starts, content)]]
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
        offset = text.find(" ", max(low - 1, 0), high)
        while offset >= 0:
            found.append((offset + 1, "space", offset))
            offset = text.find(" ", offset + 1, high)
        found.sort(key=lambda hint: hint[0])
    return found


def hint_window(document: Document, start: Point, end: Point, max_lines: int) -> tuple[Point, Point]:
    """``[start, end]`` cut to ``max_lines`` lines around the document's
    :attr:`~Document.focus_line` (where the user last edited or hovered).

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


def line_ranges(document: Document, start: Point, end: Point) -> Iterator[tuple[int, int, int]]:
    """``(line, low, high)`` for each line of ``[start, end]``: hints at columns
    ``low <= column <= high`` of that line lie within the range."""
    if end < start:
        start, end = end, start
    for line in range(start.line, end.line + 1):
        low = start.column if line == start.line else 0
        high = end.column if line == end.line else len(document.lines[line])
        yield line, low, high


# Placeholders in a line's cached JSON: ``json.dumps`` escapes control characters, so
# they cannot occur in anything it writes.
_LINE, _URI, _VERSION = "\x00line", "\x00uri", "\x00version"
# Compact (no spaces, labels as UTF-8): 100 lines of prose carry thousands of hints, and
# every byte is written, read and parsed again by the client.
_LABEL_JSON = {kind: json.dumps(label, ensure_ascii=False) for kind, label in LABELS.items()}
_HINT_JSON = '{"position":{"line":\x00line,"character":%d},"label":%s,"data":[\x00uri,\x00version,\x00line,%d]}'


class HintCache:
    """The serialized hints of recently shown lines, by line tokens, encoding and switches.

    Entries hold the :class:`LineTokens` they were made from (shared by every line of
    the same text, replaced when the tokenizer changes), so a hit is checked by identity.
    Bounded: a document scrolled end to end must not keep every line's hints.
    """

    def __init__(self, limit: int = 1024) -> None:
        self.limit = limit
        self._entries: OrderedDict[tuple[int, str, tuple[bool, ...]], tuple[AnyLineTokens, list[int], str]] = (
            OrderedDict()
        )

    def line(
        self, text: str, tokens: AnyLineTokens, encoding: Encoding, switches: tuple[bool, bool, bool]
    ) -> tuple[list[int], str]:
        """The columns of the line's hints and their JSON objects, comma-separated."""
        key = (id(tokens), encoding, switches)
        entry = self._entries.get(key)
        if entry is not None and entry[0] is tokens:
            self._entries.move_to_end(key)
            return entry[1], entry[2]
        columns, objects = _serialize(text, tokens, encoding, switches)
        self._entries[key] = (tokens, columns, ",".join(objects))
        if len(self._entries) > self.limit:
            self._entries.popitem(last=False)
        return columns, self._entries[key][2]


def _serialize(
    text: str,
    tokens: AnyLineTokens,
    encoding: Encoding,
    switches: tuple[bool, bool, bool],
    low: int = 0,
    high: int | None = None,
) -> tuple[list[int], list[str]]:
    """The hints of columns ``low..high`` of a line (all of them by default)."""
    hints = line_hints(text, tokens, switches, low, high)
    if low > 0 or (high is not None and high < len(text)):
        hints = [hint for hint in hints if low <= hint[0] <= (len(text) if high is None else high)]
    columns: list[int] = []
    objects: list[str] = []
    if not hints:
        return columns, objects
    # Units counted from the first hint's column: a window of a long line costs the window.
    base = hints[0][0]
    base_units = columns_to_units(text, base, encoding)
    units = column_units(text[base : hints[-1][0]], encoding)
    for column, kind, token_column in hints:
        columns.append(column)
        character = base_units + (column - base if units is None else units[column - base])
        objects.append(_HINT_JSON % (character, _LABEL_JSON[kind], token_column))
    return columns, objects


def hints_json(
    document: Document, start: Point, end: Point, settings: Settings, encoding: Encoding, cache: HintCache
) -> list[str]:
    """The hints whose position lies within ``[start, end]``, in document order, as LSP
    ``InlayHint`` JSON objects comma-joined per line: what the server answers.

    ``data`` is ``[uri, version, line, token column]`` for ``inlayHint/resolve``. A
    screenful of prose carries thousands of hints, so each line's hints are serialized
    once, with placeholders for what varies (line number, URI, version), and kept in
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
            whole = ",".join(_serialize(text, tokens, encoding, switches, low, high)[1])
        else:
            whole = cache.line(text, tokens, encoding, switches)[1]
        if whole:
            parts.append(whole.replace(_LINE, str(line)).replace(_URI, uri).replace(_VERSION, version))
    return parts
