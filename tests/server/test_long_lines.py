"""Views of a window of a long line (hints, bands, lookups) equal the whole line's views
cut to the window. The segment limits are made tiny, so short texts are long lines."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glassllm import packaged
from glassllm_server import document as document_module
from glassllm_server.bands import line_bands, window_bands
from glassllm_server.document import LineTokenizer, SegmentedLineTokens
from glassllm_server.hints import line_hints
from glassllm_server.positions import ENCODINGS, columns_to_units

_lines = st.lists(
    st.sampled_from(["a", "b", " ", "  ", "é", "e\u0301", "🙂", "猫", "\t", "▁", "_", ".", ",", "a\u0308", "Era uma"]),
    max_size=40,
).map("".join).map(lambda line: line + "\n")


@pytest.fixture()
def tiny_segments(monkeypatch):
    monkeypatch.setattr(document_module, "LONG_LINE", 12)
    monkeypatch.setattr(document_module, "SEGMENT", 4)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_lines, data=st.data())
def test_a_window_gives_the_whole_lines_hints_and_bands_in_it(tiny_segments, text, data):
    tokens = LineTokenizer(packaged("pt"), "pt").line(text)
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

            def cut(bands):
                return [band for band in bands if band[0] + band[1] > start and band[0] < end]

            assert cut(window_bands(text, tokens, low, high, encoding)) == cut(line_bands(text, every, encoding))
