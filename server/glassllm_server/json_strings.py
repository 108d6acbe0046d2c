"""JSON texts whose string values know where each of their characters is in the document.

A tokenizer sees a JSON string's value (``"caf\\u00e9\\n"`` is ``café`` and a line
break); the editor shows its source, escapes and all. :func:`parse_json` parses a JSON
text exactly as :func:`json.loads` does (same values, same errors) and keeps, for each
string value, the map from code-point offsets in the value to :class:`Point` positions
in the document, so that a token of ``café`` lands on ``caf\\u00e9``.

Every escape decodes to one code point: ``\\n``, ``\\"``, ``\\\\`` and ``\\/`` span two
characters of the source, ``\\u00e9`` six, and a surrogate pair ``\\ud83d\\ude00`` twelve
(one emoji). A lone surrogate escape (``\\ud83d`` with no low half after it) decodes, as
``json.loads`` decodes it, to that surrogate code point, which spans its six characters.

A JSON string holds no raw line break (control characters must be escaped), so a string
value lies on one line: the map is a column per offset. A JSONL line is parsed with the
same function, its line number given as ``first_line``.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate
from json.scanner import py_make_scanner  # type: ignore[attr-defined]
from typing import Any

from glassllm_server.positions import Point, split_lines

__all__ = ["JsonPath", "JsonString", "JsonText", "JsonTextError", "parse_json"]

JsonPath = tuple[str | int, ...]
"""Where a value is in a JSON text: object keys and list indices from the top,
``("messages", 2, "content")``; ``()`` is the top value itself."""

# An escape and how many source characters it spans; a high surrogate escape followed by
# a low one is a pair (json's own rule, json.decoder.py_scanstring).
_ESCAPE = re.compile(r"\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)")
_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _skip_whitespace(text: str, at: int) -> int:
    """Where the JSON whitespace starting at ``at`` ends."""
    return _WHITESPACE.match(text, at).end()  # type: ignore[union-attr]  (``*`` always matches)


class JsonString:
    """A string value of a JSON text: its decoded ``text`` and where each code point of
    it came from in the document (all on ``line``)."""

    __slots__ = ("_columns", "_offsets", "line", "text")

    def __init__(self, text: str, line: int, column: int, source: str) -> None:
        """``source`` is the string's text between its quotes, starting at ``column``."""
        self.text = text
        self.line = line
        # Anchors: value offset ``_offsets[k]`` is at column ``_columns[k]``, and the
        # code points after it, up to the next anchor, follow one column each. An escape
        # is one code point: an anchor where it starts and one where it ends.
        self._offsets = [0]
        self._columns = [column]
        offset = done = 0  # value offset and source characters so far
        for escape in _ESCAPE.finditer(source):
            offset += escape.start() - done
            done = escape.end()
            self._offsets += [offset, offset + 1]
            self._columns += [column + escape.start(), column + done]
            offset += 1

    def point(self, offset: int) -> Point:
        """Where code point ``offset`` of :attr:`text` starts in the document (``len(text)``:
        the closing quote)."""
        anchor = bisect_right(self._offsets, offset) - 1
        return Point(self.line, self._columns[anchor] + offset - self._offsets[anchor])

    def offset_at(self, column: int) -> int | None:
        """The code point of :attr:`text` whose source holds ``column`` of :attr:`line`
        (the escape it is inside, whole); None outside the string's characters."""
        if not self._columns[0] <= column < self.point(len(self.text)).column:
            return None
        anchor = bisect_right(self._columns, column) - 1
        if anchor % 2:  # inside an escape: its code point
            return self._offsets[anchor]
        return self._offsets[anchor] + column - self._columns[anchor]

    def span(self, start: int, end: int) -> tuple[Point, Point]:
        """The document range of code points ``start:end`` of :attr:`text`, escapes whole."""
        return self.point(start), self.point(end)

    def __repr__(self) -> str:
        return f"JsonString({self.text!r}, line={self.line}, column={self._columns[0]})"


class JsonTextError(ValueError):
    """A text that is not JSON: json's own message, and where it went wrong."""

    def __init__(self, reason: str, point: Point) -> None:
        super().__init__(f"{reason} (line {point.line + 1}, column {point.column + 1})")
        self.reason = reason
        self.point = point


@dataclass(frozen=True)
class JsonText:
    """A parsed JSON text: its ``value`` as :func:`json.loads` gives it, and each string
    value of it (object keys aside) by its :data:`JsonPath`."""

    value: Any
    strings: dict[JsonPath, JsonString]


class _Located(str):
    """A string value while parsing: where its source starts and ends in the text."""

    start: int
    end: int


def _located_string(text: str, start: int, strict: bool) -> tuple[str, int]:
    value, end = json.decoder.scanstring(text, start, strict)  # type: ignore[attr-defined]
    located = _Located(value)
    located.start, located.end = start, end - 1
    return located, end


class _Decoder(json.JSONDecoder):
    """json's own decoder, its Python scanner told to keep where string values are."""

    def __init__(self) -> None:
        super().__init__()
        self.parse_string = _located_string
        self.scan_once = py_make_scanner(self)


def parse_json(text: str, first_line: int = 0) -> JsonText:
    """Parse ``text``, a JSON text whose first line is the document's line ``first_line``.

    Raises :class:`JsonTextError` where :func:`json.loads` raises, at the same place.
    """
    lines = split_lines(text)
    starts = [0, *accumulate(map(len, lines))]

    def point(offset: int) -> Point:
        line = min(bisect_right(starts, offset), len(lines)) - 1  # the last line may be empty
        return Point(first_line + line, offset - starts[line])

    if text.startswith("\ufeff"):  # as json.loads refuses it
        raise JsonTextError("Unexpected UTF-8 BOM (decode using utf-8-sig)", point(0))
    start = _skip_whitespace(text, 0)
    try:
        value, end = _Decoder().raw_decode(text, start)
    except json.JSONDecodeError as error:
        raise JsonTextError(error.msg, point(error.pos)) from None
    except RecursionError:
        raise JsonTextError("Too deeply nested", point(start)) from None
    end = _skip_whitespace(text, end)
    if end != len(text):
        raise JsonTextError("Extra data", point(end))
    strings: dict[JsonPath, JsonString] = {}

    def plain(found: _Located, path: JsonPath) -> str:
        at = point(found.start)
        strings[path] = JsonString(str(found), at.line, at.column, text[found.start : found.end])
        return str(found)

    if isinstance(value, _Located):
        return JsonText(plain(value, ()), strings)
    if isinstance(value, dict | list):
        _replace_strings(value, plain)
    return JsonText(value, strings)


def _replace_strings(value: dict[str, Any] | list[Any], plain: Callable[[_Located, JsonPath], str]) -> None:
    """Put ``plain(string, path)`` in place of each string value inside ``value``, depth
    first without recursion (a text may nest as deep as json parses)."""
    stack: list[tuple[Any, JsonPath]] = [(value, ())]
    while stack:
        container, path = stack.pop()
        items = container.items() if isinstance(container, dict) else enumerate(container)
        for key, item in list(items):
            if isinstance(item, _Located):
                container[key] = plain(item, (*path, key))
            elif isinstance(item, dict | list):
                stack.append((item, (*path, key)))
