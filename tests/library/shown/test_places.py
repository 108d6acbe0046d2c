"""Positions shown to a person: line:column from 1, spans by first and last character."""

from __future__ import annotations

from glassllm.shown.places import TextPlaces, columns, place, span


def test_place_and_span_count_from_1_and_include_both_ends():
    assert place(0, 0) == "1:1"
    assert span((1, 16), (1, 20)) == "2:17–2:21"
    assert span((0, 4), (0, 4)) == "1:5"
    assert span((0, 3), (2, 0)) == "1:4–3:1"


def test_line_index_counts_lines_as_editors_do():
    text = "Era\r\numa\rvez\nna chuva"
    index = TextPlaces(text)
    assert [index.point(offset) for offset in (0, 3, 4, 5, 9, 13, 16)] == [
        (0, 0),
        (0, 3),
        (0, 4),
        (1, 0),
        (2, 0),
        (3, 0),
        (3, 3),
    ]
    start = text.index("chuva")
    assert index.span(start, start + len("chuva")) == "4:4–4:8"
    assert index.span(start, start) == "4:4"  # an empty span: where it is
    assert index.span(0, len("Era\r\n")) == "1:1–1:5"  # the line ending's two characters


def test_columns_of_one_line_name_the_first_and_last_character():
    assert columns(0, 16, 21) == "1:17–1:21"
    assert columns(2, 4, 5) == "3:5"
    assert columns(2, 4, 4) == "3:5"  # empty: where it is
