"""JSON string values mapped back to the document's characters, through every escape."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glassllm_server.json_strings import JsonString, JsonText, JsonTextError, parse_json
from glassllm_server.positions import Point, split_lines

# Any code point, lone surrogates included (hypothesis leaves them out by default).
CHARACTERS = st.one_of(st.characters(), st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF))
STRINGS = st.text(CHARACTERS, max_size=12)
VALUES = st.recursive(
    st.one_of(STRINGS, st.integers(), st.none(), st.booleans()),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(STRINGS, inner, max_size=4)),
    max_leaves=12,
)
LINE_BREAKS = st.sampled_from(["\n", "\r\n", "\r"])


def source_of(document: str, string: JsonString, start: int, end: int) -> str:
    """The document's characters between the points of offsets ``start`` and ``end``."""
    first, last = string.span(start, end)
    assert first.line == last.line == string.line
    return split_lines(document)[string.line][first.column : last.column]


def assert_lands_on_each_character(document: str, parsed: JsonText) -> None:
    for string in parsed.strings.values():
        line = split_lines(document)[string.line]
        assert line[string.point(0).column - 1] == '"' == line[string.point(len(string.text)).column]
        for offset, character in enumerate(string.text):
            assert json.loads(f'"{source_of(document, string, offset, offset + 1)}"') == character
            start, end = string.span(offset, offset + 1)
            assert {string.offset_at(column) for column in range(start.column, end.column)} == {offset}
        assert string.offset_at(string.point(0).column - 1) is None
        assert string.offset_at(string.point(len(string.text)).column) is None


def strings_of(value: Any, path: tuple[str | int, ...] = ()) -> dict[tuple[str | int, ...], str]:
    """Each string value of ``value`` (keys aside) by its path, from json.loads's value."""
    if isinstance(value, str):
        return {path: value}
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    return {found: text for key, item in items for found, text in strings_of(item, (*path, key)).items()}


@settings(max_examples=300, deadline=None)
@given(VALUES, st.booleans(), st.sampled_from([None, 0, 2]), LINE_BREAKS, st.integers(0, 5))
def test_a_json_document_maps_each_code_point_to_its_source(value, ascii_only, indent, line_break, first_line):
    document = json.dumps(value, ensure_ascii=ascii_only, indent=indent).replace("\n", line_break)
    parsed = parse_json(document, first_line)
    expected = json.loads(document)
    assert parsed.value == expected
    assert {path: string.text for path, string in parsed.strings.items()} == strings_of(expected)
    shifted = line_break * first_line + document  # the document as the editor holds it
    assert_lands_on_each_character(shifted, parsed)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["text", "n"]), STRINGS), min_size=1, max_size=5), st.booleans())
def test_each_jsonl_line_maps_onto_its_own_line(records, ascii_only):
    document = "\n".join(json.dumps(record, ensure_ascii=ascii_only) for record in records)
    for number, line in enumerate(split_lines(document)):
        parsed = parse_json(line.rstrip("\n"), number)
        assert parsed.value == records[number]
        assert all(string.line == number for string in parsed.strings.values())
        assert_lands_on_each_character(document, parsed)


@pytest.mark.parametrize(
    ("source", "text", "columns"),
    [
        (r"a\nb", "a\nb", [0, 1, 3, 4]),
        (r"\"q\\", '"q\\', [0, 2, 3, 5]),
        (r"caf\u00e9!", "café!", [0, 1, 2, 3, 9, 10]),
        (r"\ud83d\ude00x", "😀x", [0, 12, 13]),
        ("😀x", "😀x", [0, 1, 2]),
        (r"\/", "/", [0, 2]),
    ],
)
def test_escapes_span_their_whole_source(source, text, columns):
    string = parse_json(f'["{source}"]', 7).strings[(0,)]
    assert string.text == text
    assert [string.point(offset) for offset in range(len(text) + 1)] == [Point(7, 2 + column) for column in columns]


def test_a_lone_surrogate_is_one_code_point_over_its_six_characters():
    """As json.loads decodes it: the surrogate itself, not an error and not a pair."""
    string = parse_json(r'"\ud83d\u0041\ude00"').strings[()]
    assert string.text == "\ud83dA\ude00" == json.loads(r'"\ud83d\u0041\ude00"')
    assert [string.point(offset).column for offset in range(4)] == [1, 7, 13, 19]


def test_object_keys_are_not_values_and_a_repeated_key_keeps_the_last():
    parsed = parse_json('{"role": "user", "role": "tool", "content": ""}')
    assert parsed.value == {"role": "tool", "content": ""}
    assert parsed.strings[("role",)].point(0) == Point(0, 26)
    assert set(parsed.strings) == {("role",), ("content",)}


def test_a_deep_text_parses_without_recursion_in_the_walk():
    document = "[" * 200 + '"x"' + "]" * 200
    assert parse_json(document).strings[(0,) * 200].point(0) == Point(0, 201)


@pytest.mark.parametrize(
    "document",
    ['{"a": 1,}', '["a" "b"]', '"unterminated', "", "  ", '{"a": 1}\n{"b": 2}', '["\t"]', "\ufeff[]", "[1]]", '"\\x"'],
)
def test_not_json_fails_where_json_fails(document):
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(document)
    with pytest.raises(JsonTextError) as error:
        parse_json(document, 3)
    assert error.value.point == Point(3 + expected.value.lineno - 1, expected.value.colno - 1)
    assert expected.value.msg in str(error.value)


def test_too_deep_a_text_is_an_error_not_a_crash():
    with pytest.raises(JsonTextError, match="deeply nested"):
        parse_json("[" * 100_000 + "]" * 100_000)
