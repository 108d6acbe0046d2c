"""chunk_text: a text's chunks with their offsets in the text as given, the one way in."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glassllm import packaged
from glassllm.pipeline.chunks import CHUNK_FLAGS, CHUNK_PATTERN, CHUNK_RULE, chunk_text, pre_tokenize

any_text = st.text(st.characters(codec="utf-8"), max_size=120)


def test_chunks_carry_their_offsets_in_the_text_as_given():
    chunked = chunk_text("Olá mundo\n")
    assert chunked.chunks == ["Olá", "▁mundo", "\n"]
    assert chunked.origin is None
    assert list(chunked.spans()) == [("Olá", 0, 3), ("▁mundo", 3, 9), ("\n", 9, 10)]


def test_a_composed_accent_keeps_the_original_columns():
    text = "cafe\u0301 ok"  # "é" written as e + COMBINING ACUTE ACCENT: NFC makes it one
    chunked = chunk_text(text)
    assert chunked.chunks == ["café", "▁ok"]
    assert chunked.origin is not None
    assert list(chunked.spans()) == [("café", 0, 5), ("▁ok", 5, 8)]


@settings(max_examples=500, deadline=None)
@given(any_text)
def test_spans_tile_the_text_and_agree_with_pre_tokenize_and_encode_spans(text):
    chunked = chunk_text(text)
    assert chunked.chunks == pre_tokenize(text)
    spans = list(chunked.spans())
    assert [chunk for chunk, _, _ in spans] == chunked.chunks
    assert "".join(text[start:end] for _, start, end in spans) == text
    bounds: dict[int, tuple[int, int]] = {}
    for token in packaged("pt").encode_spans(text):
        start, _ = bounds.get(token.chunk, (token.start, token.end))
        bounds[token.chunk] = (start, token.end)
    assert [(start, end) for _, start, end in spans] == list(bounds.values())


# The chunk rule as written (CHUNK_RULE) is the reference; CHUNK_PATTERN runs a faster
# form of it, which must split every text the same.
WRITTEN = re.compile(CHUNK_RULE, CHUNK_FLAGS)
NEIGHBOURS = ["", "a", "é", "\u0301", "1", "_", ".", "▁", " ", "\n", "\u00a0", "𝐀", "\U0001d165", "🙂", "\ud800"]


def _same_chunks(text: str) -> None:
    assert CHUNK_PATTERN.findall(text) == WRITTEN.findall(text)


@pytest.mark.parametrize("plane", [0, 1, 2, 14])
def test_the_fast_pattern_splits_every_character_as_the_written_rule_beside_any_neighbour(plane):
    characters = [chr(code) for code in range(plane << 16, (plane + 1) << 16)]
    _same_chunks("".join(characters))
    for neighbour in NEIGHBOURS:
        _same_chunks("".join(neighbour + character + "▁" for character in characters))
        _same_chunks("".join("▁" + character * 2 + neighbour for character in characters))


# Letters, marks, digits, symbols, blanks, line breaks and markers from every plane.
mixed_text = st.text(
    st.one_of(
        st.characters(codec="utf-8"),
        st.characters(min_codepoint=0x10000, categories=["L", "M", "N", "S"]),
        st.sampled_from(NEIGHBOURS[1:]),
    ),
    max_size=80,
)


@settings(max_examples=2000, deadline=None)
@given(mixed_text)
def test_the_fast_pattern_splits_any_text_as_the_written_rule(text):
    _same_chunks(text)
    _same_chunks(text.replace(" ", "▁"))
