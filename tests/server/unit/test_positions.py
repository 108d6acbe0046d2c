"""Position conversion edge cases: line breaks, encodings, clamping, the end of the text."""

from __future__ import annotations

from bisect import bisect_right

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lsprotocol.types import Position

from glassllm_server.positions import (
    ENCODINGS,
    LineIndex,
    Point,
    columns_to_units,
    content_length,
    split_lines,
    units_to_columns,
)
from tests.server.oracle import TEXTS, every_offset, lsp_lines, offset_of, position_of


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("", [""]),
        ("a", ["a"]),
        ("a\n", ["a\n", ""]),
        ("a\r\nb", ["a\r\n", "b"]),
        ("a\rb\r", ["a\r", "b\r", ""]),
        ("a\n\r\nb", ["a\n", "\r\n", "b"]),
        ("\r\r\n\n", ["\r", "\r\n", "\n", ""]),
        # Only \n, \r\n and \r break lines in LSP; str.splitlines also breaks on these.
        ("a\x0bb\x0cc\x1cd\x1de\x1ef\x85g\u2028h\u2029i", ["a\x0bb\x0cc\x1cd\x1de\x1ef\x85g\u2028h\u2029i"]),
    ],
)
def test_split_lines_breaks_only_where_lsp_does(text, lines):
    assert split_lines(text) == lines
    assert "".join(split_lines(text)) == text


@pytest.mark.parametrize(("line", "length"), [("ab\r\n", 2), ("ab\n", 2), ("ab\r", 2), ("ab", 2), ("", 0), ("\r\n", 0)])
def test_content_length_leaves_out_the_line_ending(line, length):
    assert content_length(line) == length


@pytest.mark.parametrize(
    ("encoding", "units"),
    [("utf-8", [0, 1, 5, 6, 8, 11]), ("utf-16", [0, 1, 3, 4, 5, 6]), ("utf-32", [0, 1, 2, 3, 4, 5])],
)
def test_units_of_each_prefix(encoding, units):
    text = "a🙂bé猫"  # 1, 4, 1, 2, 3 UTF-8 bytes; 1, 2, 1, 1, 1 UTF-16 units
    assert [columns_to_units(text, column, encoding) for column in range(6)] == units
    assert [units_to_columns(text, unit, encoding) for unit in units] == list(range(6))


def test_units_inside_a_character_round_down_to_its_start():
    text = "a🙂b"
    assert units_to_columns(text, 2, "utf-16") == 1  # between the surrogates of 🙂
    assert [units_to_columns(text, unit, "utf-8") for unit in (2, 3, 4)] == [1, 1, 1]
    assert units_to_columns(text, 99, "utf-16") == 3
    assert units_to_columns(text, -3, "utf-8") == 0


def point_of(index, offset):
    """The line and code-point column of an offset into the text (the server works in points)."""
    line = bisect_right(index.starts, offset, 0, len(index.lines)) - 1
    return Point(line, offset - index.starts[line])


def position_at(index, offset, encoding):
    return index.point_position(point_of(index, offset), encoding)


def offset_at(index, line, character, encoding):
    return index.point_offset(index.clamp(line, character, encoding))


def test_clamp_follows_the_specification():
    index = LineIndex(split_lines("first\r\nhello"))
    assert index.clamp(0, 99, "utf-16") == Point(0, 5)  # past the line: end of its content
    assert index.clamp(1, 99, "utf-16") == Point(1, 5)  # last line, no newline: all of it
    assert index.clamp(7, 0, "utf-16") == Point(1, 5)  # past the last line: end of text
    assert offset_at(index, 1, 99, "utf-8") == 12
    assert offset_at(index, 5, 5, "utf-8") == 12


def test_empty_document():
    index = LineIndex(split_lines(""))
    assert index.clamp(0, 0, "utf-8") == Point(0, 0)
    assert index.clamp(3, 3, "utf-8") == Point(0, 0)
    assert position_at(index, 0, "utf-16") == (0, 0)
    assert index.starts == [0, 0]  # one empty line, the text's length 0


def test_offsets_in_line_endings_and_after_them():
    index = LineIndex(split_lines("ab\r\ncd\n"))
    assert position_at(index, 2, "utf-8") == (0, 2)  # the \r
    assert position_at(index, 3, "utf-8") == (0, 2)  # between \r and \n: no LSP position
    assert position_at(index, 4, "utf-8") == (1, 0)
    assert index.point_position(Point(0, 4), "utf-8") == (1, 0)  # end of line 0 = next line
    assert position_at(index, 7, "utf-8") == (2, 0)  # after the final newline: the empty last line


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("name", sorted(TEXTS))
def test_every_offset_agrees_with_the_oracle_and_round_trips(name, encoding):
    text = TEXTS[name]
    index = LineIndex(split_lines(text))
    assert index.lines == lsp_lines(text)
    for offset in range(len(text) + 1):
        expected = position_of(text, offset, encoding)
        assert position_at(index, offset, encoding) == (expected.line, expected.character), (name, offset)
    for offset in [*every_offset(text), len(text)]:
        line, character = position_at(index, offset, encoding)
        assert offset_at(index, line, character, encoding) == offset
        assert offset_of(text, Position(line=line, character=character), encoding) == offset


_text = st.text(alphabet=st.sampled_from(list("ab é\u0301🙂猫\t\r\n\x0c\u2028")), max_size=30)


@given(_text, st.integers(0, 40), st.integers(0, 200), st.sampled_from(ENCODINGS))
def test_clamped_offsets_land_on_code_point_boundaries_within_the_line(text, line, character, encoding):
    index = LineIndex(split_lines(text))
    point = index.clamp(line, character, encoding)
    assert 0 <= point.line < len(index.lines)
    assert 0 <= point.column <= content_length(index.lines[point.line])
    # Converting back gives a position no later than the one asked for on that line.
    back_line, back_character = index.point_position(point, encoding)
    assert back_line == point.line
    if line < len(index.lines):
        assert back_character <= character
