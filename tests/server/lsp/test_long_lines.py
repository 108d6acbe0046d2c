"""Views of a window of a long line (hints, bands, lookups) equal the whole line's views
cut to the window. The segment limits are made tiny, so short texts are long lines."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types

from glassllm import packaged
from glassllm_server import line_tokenizer as line_tokenizer_module
from glassllm_server import line_tokens as line_tokens_module
from glassllm_server.bands import Band, line_bands, window_bands
from glassllm_server.features.highlight import NEARBY_COLUMNS
from glassllm_server.hints import line_hints
from glassllm_server.line_tokenizer import OwnLineTokenizer
from glassllm_server.line_tokens import SegmentedLineTokens
from glassllm_server.positions import ENCODINGS, columns_to_units
from tests.server.oracle import position_of, range_of
from tests.server.session import LOOP, change_document, hover, hover_range, markdown, open_document, stats

PT = packaged("pt")

_lines = (
    st.lists(
        st.sampled_from(
            ["a", "b", " ", "  ", "é", "e\u0301", "🙂", "猫", "\t", "▁", "_", ".", ",", "a\u0308", "Era uma"]
        ),
        max_size=40,
    )
    .map("".join)
    .map(lambda line: line + "\n")
)


def overlapping(bands: list[Band], start: int, end: int) -> list[Band]:
    """The bands that overlap code units ``start..end``."""
    return [band for band in bands if band[0] + band[1] > start and band[0] < end]


@pytest.fixture()
def tiny_segments(monkeypatch):
    # Where the limits are read (line_tokenizer imports LONG_LINE by name).
    monkeypatch.setattr(line_tokenizer_module, "LONG_LINE", 12)
    monkeypatch.setattr(line_tokens_module, "SEGMENT", 4)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_lines, data=st.data())
def test_a_window_gives_the_whole_lines_hints_and_bands_in_it(tiny_segments, text, data):
    tokens = OwnLineTokenizer(packaged("pt"), "pt").line(text)
    if len(text) > 12:
        assert isinstance(tokens, SegmentedLineTokens)
    low = data.draw(st.integers(0, len(text)))
    high = data.draw(st.integers(low, len(text)))
    switches = (True, True, True)
    whole = [hint for hint in line_hints(text, tokens, switches) if low <= hint[0] <= high]
    assert [hint for hint in line_hints(text, tokens, switches, low, high) if low <= hint[0] <= high] == whole

    number, spans = tokens.window(low, high)
    every = tokens.spans()
    assert every[number : number + len(spans)] == spans
    assert all(span in spans for span in every if span.start < high and span.end > low)

    if tokens.origin is None:
        for encoding in ENCODINGS:
            start, end = columns_to_units(text, low, encoding), columns_to_units(text, high, encoding)
            window = window_bands(text, tokens, low, high, encoding)
            assert overlapping(window, start, end) == overlapping(line_bands(text, every, encoding), start, end)


# End to end, with the server's own limits: a line of some 60,000 characters.
LONG = "Era uma vez cafe\u0301 🙂 e mais, " * 2000


def unit_columns(line: str, encoding: str) -> dict[int, int]:
    """Code units → column, for each column of a one-line text (counted once: the
    oracle (tests/server/oracle.py) recounts the text on every call)."""
    columns, units = {0: 0}, 0
    for column, character in enumerate(line, 1):
        units += {"utf-8": len(character.encode("utf-8")), "utf-16": len(character.encode("utf-16-le")) // 2}.get(
            encoding, 1
        )
        columns[units] = column
    return columns


@LOOP
async def test_a_long_line_edited_and_hovered_agrees_with_the_library(client):
    text = LONG
    uri = open_document(client, text)
    for version, (offset, inserted) in enumerate([(30_000, "x"), (100, " "), (len(text) - 5, "猫"), (45_000, "")], 2):
        end = offset + 3 if inserted == "" else offset
        change_document(client, uri, version, (range_of(text, offset, end, client.encoding), inserted))
        text = text[:offset] + inserted + text[end:]
        spans = [(s.id, s.start, s.end) for s in PT.encode_spans(text)]
        answer = await stats(client, uri)
        assert (answer["tokens"], answer["characters"]) == (len(spans), len(text))
        columns = unit_columns(text, client.encoding)
        for place in (offset, offset + 7, 0, len(text) - 2):
            token_id, start, end = next(span for span in spans if span[1] <= place < span[2])
            found = await hover(client, uri, position_of(text, place, client.encoding))
            assert f"ID {token_id}" in markdown(found)
            found_range = hover_range(found)
            assert (columns[found_range.start.character], columns[found_range.end.character]) == (start, end)


@LOOP
async def test_highlights_on_a_long_line_stay_near_the_cursor(client):
    uri = open_document(client, LONG)
    place = 40_000 + LONG[40_000:].index(" vez")
    found = await client.text_document_document_highlight_async(
        types.DocumentHighlightParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=position_of(LONG, place + 1, client.encoding)
        )
    )
    columns = unit_columns(LONG, client.encoding)
    starts = [columns[item.range.start.character] for item in found]
    assert all(
        LONG[columns[item.range.start.character] : columns[item.range.end.character]] == " vez" for item in found
    )
    assert min(starts) >= place - NEARBY_COLUMNS - 100 and max(starts) <= place + NEARBY_COLUMNS + 100
    near = {o for o in range(place - NEARBY_COLUMNS + 100, place + NEARBY_COLUMNS - 100) if LONG.startswith(" vez", o)}
    assert near <= set(starts)
