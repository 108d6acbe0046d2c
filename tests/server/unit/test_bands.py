"""Semantic-token bands without a server: one band per token, lengths in each encoding."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glassllm import packaged
from glassllm_server.bands import delta_edits, encode_bands, line_bands
from glassllm_server.positions import ENCODINGS, content_length, split_lines

TRICKY = "Olá 🙂 fam 👩\u200d👩\u200d👧\tcafe\u0301 x\x0cy\u2028z\r\n猫 e\r\n\nfim"


@pytest.fixture(scope="module")
def tok():
    return packaged("pt")


def units(text, encoding):
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text)


def decode(data, lines, encoding):
    """The text each band covers, rebuilt from LSP's relative encoding."""
    covered, line, start = [], 0, 0
    for index in range(0, len(data), 5):
        delta_line, delta_start, length, kind, modifiers = data[index : index + 5]
        line += delta_line
        start = delta_start if delta_line else start + delta_start
        raw = lines[line].encode({"utf-8": "utf-8", "utf-16": "utf-16-le", "utf-32": "utf-32-le"}[encoding])
        width = {"utf-8": 1, "utf-16": 2, "utf-32": 4}[encoding]
        piece = raw[start * width : (start + length) * width].decode(
            {"utf-8": "utf-8", "utf-16": "utf-16-le", "utf-32": "utf-32-le"}[encoding]
        )
        covered.append((line, piece, kind, modifiers))
    return covered


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_every_token_is_one_band_in_every_encoding(tok, encoding):
    lines = split_lines(TRICKY)
    data = encode_bands((n, line_bands(line, tok.encode_spans(line), encoding)) for n, line in enumerate(lines))
    covered = decode(data, lines, encoding)
    expected = []
    for number, line in enumerate(lines):
        for span in tok.encode_spans(line):
            if span.start < span.end <= content_length(line):
                expected.append((number, line[span.start : span.end]))
    assert [(line, piece) for line, piece, _, _ in covered] == expected
    assert all(modifiers == 0 for *_, modifiers in covered)


def test_bands_alternate_and_restart_on_each_line(tok):
    lines = split_lines("Era uma vez\nEra uma vez")
    data = encode_bands((n, line_bands(line, tok.encode_spans(line), "utf-16")) for n, line in enumerate(lines))
    kinds = [data[i + 3] for i in range(0, len(data), 5)]
    assert kinds == [0, 1, 0, 1, 0, 1, 0, 1]  # Era = E + ra, ▁uma, ▁vez on each line


def test_line_endings_and_empty_lines_get_no_band(tok):
    lines = split_lines("\r\n\n\r")
    assert encode_bands((n, line_bands(line, tok.encode_spans(line), "utf-8")) for n, line in enumerate(lines)) == []


def test_the_limit_stops_at_a_whole_line(tok):
    lines = split_lines("um dois\ntrês quatro cinco\n")
    bands = [(n, line_bands(line, tok.encode_spans(line), "utf-8")) for n, line in enumerate(lines)]
    first_line = len(bands[0][1])
    assert len(encode_bands(bands, limit=first_line + 1)) == 5 * first_line


def lines_data(lines: list[list[int]]) -> list[int]:
    """Semantic-token data for lines given as lists of band starts (length 1, type 0)."""
    return encode_bands((number, [(start, 1, 0) for start in starts]) for number, starts in enumerate(lines))


band_lines = st.lists(st.lists(st.integers(0, 3), max_size=3).map(sorted).map(lambda xs: sorted(set(xs))), max_size=12)


@settings(max_examples=300, deadline=None)
@given(band_lines, band_lines)
def test_delta_edits_turn_old_data_into_new(old_lines, new_lines):
    old, new = lines_data(old_lines), lines_data(new_lines)
    edits = delta_edits(old, new)
    assert (edits == []) == (old == new)
    result = list(old)
    for start, delete, data in reversed(edits):
        assert start % 5 == 0 and delete % 5 == 0
        result[start : start + delete] = data
    assert result == new
    assert [start for start, _, _ in edits] == sorted(start for start, _, _ in edits)


def test_an_edit_and_a_moved_cut_give_two_small_edits():
    old_lines = [[0, 2], [1], [0, 3], [2]] * 50
    new_lines = [list(line) for line in old_lines]
    new_lines[3] = [0, 1, 2]
    old = encode_bands(((n, [(s, 1, 0) for s in line]) for n, line in enumerate(old_lines)), limit=190)
    new = encode_bands(((n, [(s, 1, 0) for s in line]) for n, line in enumerate(new_lines)), limit=190)
    edits = delta_edits(old, new)
    assert len(edits) == 2
    assert sum(len(data) for _, _, data in edits) <= 5 * 5
