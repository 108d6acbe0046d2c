"""Documents with every tricky case, and an independent position oracle for the server tests.

The oracle (:func:`lsp_lines`, :func:`position_of`, :func:`offset_of`, :func:`covered`)
is written here from the specification, independently of ``glassllm_server.positions``,
so that the tests check the server rather than the server's own conversion code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lsprotocol import types

from glassllm import packaged

# The Portuguese tokenizer every server session starts with.
PT = packaged("pt")

# Every case the issue lists, in one document: emoji (a surrogate pair in UTF-16), a ZWJ
# family, "e" + U+0301 that NFC composes, CJK, tabs, CRLF and a lone CR, form feed and
# U+2028 inside a line, a character the Portuguese tokenizer does not know (🧪), runs of
# spaces, and a last line without a newline.
TRICKY = (
    "Era uma vez, 🙂 caf\u00e9 e cafe\u0301!\r\n"
    "\tfam\u00edlia 👩\u200d👩\u200d👧 um\u2028dois\x0ctr\u00eas\r"
    "ana  banana   b — 猫 🧪!\n"
    "\n"
    "sem fim"
)

TEXTS = {
    "tricky": TRICKY,
    "empty": "",
    "one_line": "Era uma vez",
    "trailing_newline": "Era uma vez\n",
    "crlf": "um\r\ndois\r\n",
    "lone_cr": "um\rdois\rtrês",
    "emoji": "🙂🙂 a👩\u200d👩\u200d👧b",
    "combining": "cafe\u0301 nai\u0308ve \u0958x",
    "separators": "um\u2028dois\x0ctrês\x0b\x85quatro",
    "cjk_tabs": "\t猫\t犬 漢字\tabc",
}


def lsp_lines(text: str) -> list[str]:
    """LSP lines of ``text`` with their endings (only \\n, \\r\\n, \\r break lines)."""
    lines, current, index = [], "", 0
    while index < len(text):
        character = text[index]
        current += character
        if character == "\r" and text[index + 1 : index + 2] == "\n":
            current += "\n"
            index += 1
        if character in "\r\n":
            lines.append(current)
            current = ""
        index += 1
    lines.append(current)
    return lines


def _units(character: str, encoding: str) -> int:
    code = ord(character)
    if encoding == "utf-8":
        return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
    if encoding == "utf-16":
        return 2 if code > 0xFFFF else 1
    return 1


def position_of(text: str, offset: int, encoding: str) -> types.Position:
    """The LSP position of code-point ``offset`` (a line ending's inside → its line's end)."""
    start = 0
    lines = lsp_lines(text)
    for number, line in enumerate(lines):
        if offset < start + len(line) or number == len(lines) - 1:
            content = line.rstrip("\r\n")
            column = min(offset - start, len(content))
            return types.Position(line=number, character=sum(_units(c, encoding) for c in content[:column]))
        start += len(line)
    raise AssertionError("unreachable")


def offset_of(text: str, position: types.Position, encoding: str) -> int:
    """The code-point offset of an LSP position (must be exact, not clamped)."""
    lines = lsp_lines(text)
    start = sum(len(line) for line in lines[: position.line])
    units = 0
    content = lines[position.line].rstrip("\r\n")
    for column, character in enumerate(content):
        if units == position.character:
            return start + column
        units += _units(character, encoding)
    assert units == position.character, f"{position} is inside a character or past the line"
    return start + len(content)


def covered(text: str, lsp_range: types.Range, encoding: str) -> str:
    """The characters of ``text`` that ``lsp_range`` covers."""
    return text[offset_of(text, lsp_range.start, encoding) : offset_of(text, lsp_range.end, encoding)]


def every_offset(text: str) -> list[int]:
    """Offsets of every character that an LSP position can point at (line endings'
    second character excluded)."""
    offsets, start = [], 0
    for line in lsp_lines(text):
        content = len(line.rstrip("\r\n"))
        offsets.extend(range(start, start + content + (1 if len(line) > content else 0)))
        start += len(line)
    return offsets


def range_of(text: str, start: int, end: int, encoding: str) -> types.Range:
    """The LSP range of code-point offsets ``[start, end)`` (oracle side)."""
    return types.Range(start=position_of(text, start, encoding), end=position_of(text, end, encoding))


def line_spans(tokenizer: Any, text: str) -> list[tuple[int, str, int, int]]:
    """``(id, piece, start, end)`` of every token, from ``encode_spans`` of each LSP line."""
    spans, start = [], 0
    for line in lsp_lines(text):
        spans.extend((s.id, s.piece, start + s.start, start + s.end) for s in tokenizer.encode_spans(line))
        start += len(line)
    return spans


def bands(text: str, data: Sequence[int], encoding: str) -> list[tuple[int, str, int]]:
    """(line, covered text, type) of each band, decoded with the test oracle."""
    decoded, line, start = [], 0, 0
    for index in range(0, len(data), 5):
        delta_line, delta_start, length, kind, modifiers = data[index : index + 5]
        assert modifiers == 0
        line += delta_line
        start = delta_start if delta_line else start + delta_start
        band = types.Range(
            start=types.Position(line=line, character=start), end=types.Position(line=line, character=start + length)
        )
        decoded.append((line, covered(text, band, encoding), kind))
    return decoded


def expected_bands(text: str) -> list[tuple[int, str]]:
    """Every token of every line, without line endings and empty NFC leftovers."""
    found = []
    for number, line in enumerate(lsp_lines(text)):
        content = len(line.rstrip("\r\n"))
        for span in PT.encode_spans(line):
            if span.start < span.end <= content:
                found.append((number, line[span.start : span.end]))
    return found
