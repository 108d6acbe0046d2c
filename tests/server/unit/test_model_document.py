"""A real model's tokens in the server's document model (``glassllm_server.blocks``),
checked against the library's tokens of the whole text: line by line, after edits, in
ranges, for the pre-tokenizers that cross line breaks (Llama 3's ``\\s*[\\r\\n]+``, GPT-4o's,
Tekken's ``[\\r\\n/]*`` after punctuation) and SentencePiece's dummy prefix."""

from __future__ import annotations

import functools
from itertools import accumulate

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glassllm import AnyTokenizer, packaged
from glassllm.formats.load import load_model
from glassllm.formats.model_tokenizer import ModelTokenizer
from glassllm_server.blocks import ModelLineTokens
from glassllm_server.compare import ComparedCounts, ComparedTokenizer
from glassllm_server.document import Document, ReadOnlyDocument
from glassllm_server.line_tokenizer import LineTokenizer, ModelLineTokenizer, line_tokenizer
from glassllm_server.positions import Point
from tests.library.formats.fixtures import model_file
from tests.server.oracle import TRICKY, lsp_lines
from tests.server.unit.test_document import assert_missing_is_counted, requests_between_edits

MODELS = ["llama3", "gpt4o", "mistral-v1", "mistral-v7", "tekken"]

# What crosses line breaks in real models' pre-tokenizers: blank lines, whitespace before
# and after a line break, punctuation before one, a slash after one (Tekken), CRLF, a
# lone CR; and what splits characters into bytes (emoji, accents), special-token text.
FRAGMENTS = [
    "Era",
    " uma",
    " vez",
    ".",
    "!",
    "/",
    "//",
    " ",
    "  ",
    "\t",
    "\n",
    "\n\n",
    "\r\n",
    "\r",
    "\r\r",
    " \n",
    "\n ",
    "  \n  ",
    "12345",
    "'s",
    "🙂",
    "👩\u200d👩\u200d👧",
    "caf\u00e9",
    "cafe\u0301",
    "猫",
    "<|endoftext|>",
    "<s>",
    "\u2028",
    "\x0c",
]
texts = st.lists(st.sampled_from(FRAGMENTS), max_size=14).map("".join)


@functools.cache
def tokenizer(name: str) -> ModelTokenizer:
    found = load_model(model_file(name))
    assert isinstance(found, ModelTokenizer)
    return found


@functools.cache
def model_road(name: str) -> LineTokenizer:
    return ModelLineTokenizer(tokenizer(name), name)


def expected_lines(tok: AnyTokenizer, text: str) -> list[list[tuple[int, int, int]]]:
    """Each LSP line's ``(id, start, end)``: the library's tokens of the whole text, each
    cut at the line breaks it crosses (a part on every line it reaches)."""
    lines = lsp_lines(text)
    starts = [sum(map(len, lines[:number])) for number in range(len(lines) + 1)]
    found: list[list[tuple[int, int, int]]] = [[] for _ in lines]
    for span in tok.encode_spans(text):
        number = max(line for line in range(len(lines)) if starts[line] <= span.start)
        found[number].append((span.id, span.start - starts[number], min(span.end, starts[number + 1]) - starts[number]))
        for following in range(number + 1, len(lines)):
            if span.end <= starts[following]:
                break
            found[following].append((span.id, 0, min(span.end, starts[following + 1]) - starts[following]))
    return found


def document_lines(document: Document) -> list[list[tuple[int, int, int]]]:
    return [[(s.id, s.start, s.end) for s in document.line_spans(n)] for n in range(len(document.lines))]


def random_edit(document: Document, data: st.DataObject) -> None:
    """Replace a range hypothesis draws from ``document`` with text it draws."""
    lines = document.lines
    start_line = data.draw(st.integers(0, len(lines) - 1))
    start = Point(start_line, data.draw(st.integers(0, len(lines[start_line]))))
    end_line = data.draw(st.integers(start_line, len(lines) - 1))
    low = start.column if end_line == start_line else 0
    end = Point(end_line, data.draw(st.integers(low, len(lines[end_line]))))
    document.apply_change(start, end, data.draw(texts))


def check(document: Document, tok: ModelTokenizer) -> None:
    assert_missing_is_counted(document)
    text = document.text
    assert document_lines(document) == expected_lines(tok, text)
    stats = document.stats()
    assert_missing_is_counted(document)
    assert (stats.tokens, stats.chunks, stats.characters) == (
        len(tok.encode(text)),
        len(tok.chunk_spans(text)),
        len(text),
    )


@pytest.mark.parametrize("name", MODELS)
def test_the_tricky_document_has_the_library_tokens_line_by_line(name):
    document = Document("u", TRICKY + ".\n\n\n  Fim.\r\n\r\n<|endoftext|>", 1, model_road(name))
    check(document, tokenizer(name))


@pytest.mark.parametrize("name", MODELS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts, data=st.data())
def test_edits_keep_the_library_tokens(name, text, data):
    tok = tokenizer(name)
    document = Document("u", text, 1, model_road(name))
    check(document, tok)
    for _ in range(4):
        random_edit(document, data)
        check(document, tok)


@pytest.mark.parametrize("name", ["llama3", "mistral-v1"])
@settings(max_examples=60, deadline=None)
@given(text=texts, data=st.data())
def test_range_stats_count_the_library_tokens_that_overlap(name, text, data):
    tok = tokenizer(name)
    document = Document("u", text, 1, model_road(name))
    lines = lsp_lines(text)
    starts = [sum(map(len, lines[:number])) for number in range(len(lines))]
    first = data.draw(st.integers(0, len(text)))
    last = data.draw(st.integers(first, len(text)))

    def point(offset: int) -> Point:
        line = max(number for number in range(len(lines)) if starts[number] <= offset)
        return Point(line, offset - starts[line])

    spans = tok.encode_spans(text)
    touched = [
        index
        for index, span in enumerate(spans)
        if first < last
        and (first < span.start <= last if span.start == span.end else span.start < last and span.end > first)
    ]
    stats = document.stats(point(first), point(last))
    assert stats.tokens == len(touched)
    assert stats.chunks == len({spans[index].chunk for index in touched})


def test_a_token_across_a_blank_line_has_its_whole_range_and_its_index():
    tok = tokenizer("llama3")
    text = "Era uma vez.\n\nOutra"
    document = Document("u", text, 1, model_road("llama3"))
    ids = tok.encode(text)
    token = document.token_at(Point(1, 0))
    assert token is not None
    assert tok.readable(token.piece) == ".\n\n" and token.index == ids.index(token.id)
    assert (token.start_point, token.end_point) == (Point(0, 11), Point(2, 0))
    line = document.line_tokens(1)
    assert isinstance(line, ModelLineTokens) and line.first == -1 and line.tokens == 0
    assert document.block_of(1) == (0, 3)


def test_sentencepiece_adds_its_dummy_prefix_to_the_first_line_only():
    tok = tokenizer("mistral-v1")
    document = Document("u", "um\ndois\n", 1, model_road("mistral-v1"))
    assert document.block_of(1) == (1, 2)  # every line is a block of its own
    first, second = document.line_spans(0), document.line_spans(1)
    assert first[0].start == 0 and tok.readable(first[0].piece).startswith("▁")
    assert not second[0].piece.startswith("▁")
    assert [s.id for n in range(3) for s in document.line_spans(n)] == tok.encode("um\ndois\n")


def test_a_range_from_the_start_leaves_out_the_dummy_prefix_as_the_library_rule_does():
    # The dummy prefix holds no character: a range counts an empty token only where it
    # ends one (after the range's start), as for glassllm's own NFC leftovers.
    document = Document("u", "\n  ", 1, model_road("mistral-v1"))
    assert document.stats(Point(0, 0), Point(1, 0)).tokens == 1
    assert document.stats().tokens == len(tokenizer("mistral-v1").encode("\n  "))


@pytest.mark.parametrize("name", ["llama3", "mistral-v1"])
@settings(max_examples=30, deadline=None)
@given(text=texts, data=st.data())
def test_a_compared_model_counts_the_document_through_edits(name, text, data):
    tok = tokenizer(name)
    compared = ComparedTokenizer(tok, name)
    document = Document("u", text, 1, line_tokenizer(packaged("pt"), "pt"))
    for _ in range(3):
        counts = compared.document(document)
        assert counts.count_pending(compared, document.lines, 10**6)
        assert counts.totals(name) == ComparedCounts(
            name, len(tok.encode(document.text)), len(tok.chunk_spans(document.text)), 0
        )
        lines = document.lines
        line = data.draw(st.integers(0, len(lines) - 1))
        column = data.draw(st.integers(0, len(lines[line])))
        document.apply_change(Point(line, column), Point(line, column), data.draw(texts))


@pytest.mark.parametrize("name", ["llama3", "mistral-v1"])
@settings(max_examples=40, deadline=None)
@given(text=texts, data=st.data())
def test_snapshots_held_across_edits_keep_their_text_tokens_and_compared_counts(name, text, data):
    """An edit changes the per-line lists in place only when no snapshot holds them."""
    tok = tokenizer(name)
    compared = ComparedTokenizer(tok, name)
    document = Document("u", text, 1, model_road(name))
    held: list[tuple[ReadOnlyDocument, str]] = []
    for _ in range(6):
        requests_between_edits(document, compared, held, data)
        random_edit(document, data)
    for kept, kept_text in [*held, (document, document.text)]:
        assert kept.text == kept_text
        check(kept, tok)
        lines = range(len(kept.lines))
        per_line = (kept.line_tokens(line).tokens for line in lines[:-1])
        assert [kept.tokens_before(line) for line in lines] == list(accumulate(per_line, initial=0))
        counts = compared.document(kept)
        assert counts.count_pending(compared, kept.lines, 10**6)
        assert counts.totals(name).tokens == len(tok.encode(kept_text))


@pytest.mark.parametrize("name", ["llama3", "mistral-v1"])
@settings(max_examples=40, deadline=None)
@given(text=texts, data=st.data())
def test_a_compared_models_range_counts_take_whole_blocks_from_the_document_counts(name, text, data):
    tok = tokenizer(name)
    compared = ComparedTokenizer(tok, name)
    document = Document("u", text, 1, line_tokenizer(packaged("pt"), "pt"))
    for _ in range(3):
        text, lines = document.text, document.lines
        first = data.draw(st.integers(0, len(text)))
        last = data.draw(st.integers(first, len(text)))
        spans = tok.encode_spans(text)
        touched = [
            span
            for span in spans
            if first < last
            and (first < span.start <= last if span.start == span.end else span.start < last and span.end > first)
        ]
        expected = ComparedCounts(name, len(touched), len({span.chunk for span in touched}), 0)
        start, end = point_of(lines, first), point_of(lines, last)
        assert compared.counts_in(lines, start, end, 0, compared.document(document)) == expected
        assert compared.counts_in(lines, start, end, 0) == expected
        line = data.draw(st.integers(0, len(lines) - 1))
        column = data.draw(st.integers(0, len(lines[line])))
        document.apply_change(Point(line, column), Point(line, column), data.draw(texts))


def point_of(lines: list[str], offset: int) -> tuple[int, int]:
    """The (line, column) of ``offset`` in the text of ``lines``."""
    line = 0
    while line + 1 < len(lines) and offset >= len(lines[line]):
        offset -= len(lines[line])
        line += 1
    return line, offset
