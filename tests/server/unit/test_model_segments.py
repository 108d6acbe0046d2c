"""A real model's long blocks, tokenized in segments cut inside lines
(``blocks.tokenize_long_block``), checked against the library's tokens of the whole text:
at rest, after edits, through hovers; and what an edit in a very long line costs."""

from __future__ import annotations

import functools
import random
from bisect import bisect_right
from itertools import accumulate

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glassllm.formats.model_tokenizer import ModelTokenizer
from glassllm_server.blocks import segment_cuts
from glassllm_server.document import Document
from glassllm_server.line_tokenizer import ModelLineTokenizer
from glassllm_server.line_tokens import SegmentedLineTokens
from glassllm_server.positions import Point
from tests.server.unit.test_model_document import FRAGMENTS, MODELS, check, document_lines, random_edit, tokenizer

# Prose gives cuts (a space between two letters); the rest, what must not be cut.
PROSE = ["Era", " uma", " vez", " que", " tinha", " um", " gato", " Sun", " over"]
texts = st.lists(st.sampled_from(PROSE * 4 + FRAGMENTS), max_size=40).map("".join)


@functools.cache
def small_segments(name: str) -> ModelLineTokenizer:
    """A line tokenizer that cuts every block of over 40 characters in segments of 12."""
    found = ModelLineTokenizer(tokenizer(name), name)
    found.long_block, found.segment = 40, 12
    return found


def check_hovers(document: Document, tok: ModelTokenizer) -> None:
    """Each token's chunk and index, as a hover gives them, are the library's."""
    text = document.text
    spans = tok.encode_spans(text)
    chunks = tok.chunk_spans(text)
    offset = 0
    for line, line_text in enumerate(document.lines):
        for column in range(len(line_text)):
            token = document.token_at(Point(line, column))
            assert token is not None and token.index is not None
            expected = spans[token.index]
            assert expected.start <= offset + column < expected.end
            assert token.id == expected.id
            assert token.chunk.text == chunks[expected.chunk][0]
        offset += len(line_text)


@pytest.mark.parametrize("name", MODELS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts, data=st.data())
def test_segmented_blocks_keep_the_library_tokens_through_edits(name, text, data):
    tok = tokenizer(name)
    document = Document("u", text, 1, small_segments(name))
    check(document, tok)
    for _ in range(4):
        random_edit(document, data)
        check(document, tok)
    check_hovers(document, tok)


@pytest.mark.parametrize("name", ["gpt4o"])
def test_a_segmented_line_keeps_the_token_carried_in_from_the_line_above(name):
    # GPT-4o's ``[\r\n/]*`` after punctuation makes one chunk of "!\n//".
    text = "Fim!\n//uma vez que tinha um gato, uma vez que tinha um gato Sun over.\n\n\nOutra vez"
    document = Document("u", text, 1, small_segments(name))
    check(document, tokenizer(name))
    line = document.line_tokens(1)
    assert isinstance(line, SegmentedLineTokens) and line.first == -1
    check_hovers(document, tokenizer(name))
    token = document.token_at(Point(1, 0))
    assert token is not None and (token.start_point, token.end_point) == (Point(0, 3), Point(1, 2))


def test_segments_are_cut_where_the_model_can_cut_and_found_again_after_an_edit():
    tok = tokenizer("llama3")
    text = _prose(100_000, 2)
    cuts = segment_cuts(tok.can_cut_within, text, 1024)
    assert 50 < len(cuts) < 200
    assert all(position - before >= 256 for before, position in zip([0, *cuts], cuts, strict=False))
    assert all(tok.can_cut_within(text, position) for position in cuts)
    # An edit moves the cuts around it only: the text after it is cut as before.
    edited = text[:50_000] + "xyz" + text[50_000:]
    after = [position + 3 for position in cuts if position > 50_000]
    found = segment_cuts(tok.can_cut_within, edited, 1024)
    assert after[2:] == [position for position in found if position >= after[2]]
    # Cut from the cuts before the edit, the same.
    assert segment_cuts(tok.can_cut_within, edited, 1024, (text, cuts)) == found


def _prose(length: int, seed: int) -> str:
    words = [
        "era",
        "uma",
        "vez",
        "um",
        "gato",
        "que",
        "tinha",
        "um",
        "chapéu",
        "e",
        "andava",
        "pela",
        "rua",
        "da",
        "cidade",
        "velha",
    ]
    rng = random.Random(seed)
    found: list[str] = []
    size = 0
    while size < length:
        word = rng.choice(words) + rng.choice([" ", " ", " ", ", ", ". "])
        found.append(word)
        size += len(word)
    return "".join(found)[:length]


@pytest.mark.parametrize("name", ["llama3", "mistral-v1"])
def test_an_edit_in_a_very_long_line_tokenizes_one_segment_again(name, monkeypatch):
    tok = tokenizer(name)
    shared = ModelLineTokenizer(tok, name)
    text = _prose(60_000, 1) + "\n"
    document = Document("u", text, 1, shared)
    check(document, tok)
    assert isinstance(document.line_tokens(0), SegmentedLineTokens)
    tokenized: list[int] = []
    encode_columns = tok.encode_columns

    def counted(text: str, *, at_start: bool = True):  # type: ignore[no-untyped-def]
        tokenized.append(len(text))
        return encode_columns(text, at_start=at_start)

    monkeypatch.setattr(tok, "encode_columns", counted)
    middle = Point(0, 30_000)
    document.apply_change(middle, middle, "abc ")
    check(document, tok)
    # The segment the edit touched, and maybe the one after it (its cut moved).
    assert 0 < sum(tokenized) <= 3 * shared.segment
    monkeypatch.undo()
    check_hovers_near(document, tok, Point(0, 30_000))


def check_large(document: Document, tok: ModelTokenizer) -> None:
    """:func:`check` for a document of thousands of lines: each line's tokens are the
    library's tokens of the whole text, cut at the lines they cross."""
    text = document.text
    starts = list(accumulate(map(len, document.lines), initial=0))
    expected: list[list[tuple[int, int, int]]] = [[] for _ in document.lines]
    for span in tok.encode_spans(text):
        line = bisect_right(starts, span.start) - 1
        while True:
            expected[line].append(
                (span.id, max(span.start, starts[line]) - starts[line], min(span.end, starts[line + 1]) - starts[line])
            )
            line += 1
            if line >= len(document.lines) or span.end <= starts[line]:
                break
    assert document_lines(document) == expected
    assert document.stats().tokens == len(tok.encode(text))


def check_hovers_near(document: Document, tok: ModelTokenizer, point: Point) -> None:
    spans = tok.encode_spans(document.text)
    for column in range(point.column - 50, point.column + 50):
        token = document.token_at(Point(point.line, column))
        assert token is not None and token.index is not None
        assert (spans[token.index].id, spans[token.index].start) == (token.id, token.start)


@pytest.mark.parametrize("name", ["llama3", "mistral-v1"])
def test_an_edit_in_a_long_run_of_blank_lines_keeps_the_library_tokens(name):
    # Llama 3's ``\s*[\r\n]+`` makes one chunk of the whole run: no cut is exact in it.
    tok = tokenizer(name)
    document = Document("u", "Fim.\n" + "\n" * 20_000 + "Outra", 1, ModelLineTokenizer(tok, name))
    check_large(document, tok)
    middle = Point(10_000, 0)
    document.apply_change(middle, middle, "a")
    check_large(document, tok)
    assert document.token_at(middle) is not None


@settings(max_examples=200, deadline=None)
@given(text=texts, data=st.data())
def test_cuts_made_from_the_cuts_before_an_edit_are_the_cuts_made_afresh(text, data):
    can_cut_within = tokenizer("llama3").can_cut_within
    old = text * 3
    start = data.draw(st.integers(0, len(old)))
    end = data.draw(st.integers(start, len(old)))
    new = old[:start] + data.draw(texts) + old[end:]
    previous = (old, segment_cuts(can_cut_within, old, 12))
    assert segment_cuts(can_cut_within, new, 12, previous) == segment_cuts(can_cut_within, new, 12)
