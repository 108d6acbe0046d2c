"""Semantic-token bands without a server: one band per token, lengths in each encoding."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glassllm import packaged
from glassllm_server.bands import delta_edit, encode_bands, line_bands
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


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=12).map(lambda xs: [v for x in xs for v in (x, 1, 2, x & 1, 0)]),
       st.lists(st.integers(0, 3), max_size=12).map(lambda xs: [v for x in xs for v in (x, 1, 2, x & 1, 0)]))
def test_a_delta_edit_turns_old_data_into_new(old, new):
    edit = delta_edit(old, new)
    if old == new:
        assert edit is None
        return
    start, delete, data = edit
    assert start % 5 == 0 and delete % 5 == 0
    assert old[:start] + data + old[start + delete :] == new
