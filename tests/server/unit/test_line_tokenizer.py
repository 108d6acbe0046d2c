"""One road for every tokenizer (issue 28): :func:`line_tokenizer` is the one place the
server tells kinds apart, and a document, its edits and its counts answer through the
same code whether glassllm's own tokenizer or a real model's tokenizes it."""

from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glassllm import AnyTokenizer, packaged
from glassllm.caches import LruCache
from glassllm.formats.load import load_model
from glassllm_server.document import Document
from glassllm_server.explanation import explain_document
from glassllm_server.line_tokenizer import LineTokenizer, ModelLineTokenizer, OwnLineTokenizer, line_tokenizer
from glassllm_server.line_tokens import AnyLineTokens, LineTokens
from glassllm_server.messages import Messages
from glassllm_server.positions import Point
from glassllm_server.render.model import facts_lines
from tests.library.formats.fixtures import model_file
from tests.server.unit.test_model_document import document_lines, expected_lines, random_edit, texts

# glassllm's own tokenizer, a byte-level model whose chunks cross line breaks, and a
# SentencePiece model with a dummy prefix.
NAMES = ["pt", "llama3", "mistral-v1"]


@functools.cache
def library(name: str) -> AnyTokenizer:
    return packaged(name) if name == "pt" else load_model(model_file(name))


@functools.cache
def road(name: str) -> LineTokenizer:
    return line_tokenizer(library(name), name)


def test_the_kind_decides_the_road_and_nothing_else_does():
    assert type(road("pt")) is OwnLineTokenizer
    assert type(road("llama3")) is ModelLineTokenizer
    assert (road("pt").lines_alone, road("pt").undecided_cut) == (True, True)
    assert (road("llama3").lines_alone, road("llama3").undecided_cut) == (False, None)


def test_a_tokenizer_of_no_known_kind_is_refused():
    class Stranger:
        unk_id = None

    with pytest.raises(TypeError, match="Stranger is no tokenizer the server knows"):
        line_tokenizer(Stranger(), "stranger")  # type: ignore[arg-type]


def test_what_the_hover_and_the_stats_say_beside_the_name():
    own = road("pt").facts
    assert (own.kind, own.priority_name, own.has_counts, own.match_specials, own.around) == (
        "glassllm BPE",
        "rank",
        True,
        False,
        ((), ()),
    )
    assert facts_lines(own, Messages("en")) == []
    assert road("pt").merge_order("▁", "d") is None and not road("pt").is_matched(5)
    facts = road("mistral-v1").facts
    model = library("mistral-v1")
    assert (facts.kind, facts.priority_name, facts.has_counts) == (model.kind, "score", False)
    assert facts.around == model.around and facts.around_pieces[0] == model.tokens(model.around[0])
    said = facts_lines(facts, Messages("en"))
    assert len(said) == 3 and model.kind in said[0] and "glassllm.matchSpecialTokens: false" in said[1]


@pytest.mark.parametrize("name", NAMES)
def test_every_kind_answers_whether_a_document_can_be_cut_between_two_lines(name):
    # The library's answer, whatever the kind: glassllm's own can always cut there.
    for before, after in [("Era uma vez.\n", "Fim.\n"), ("Era uma vez.\n", ""), ("a  \n", "\n  b\n")]:
        answer = road(name).can_cut(before, after)
        assert answer is library(name).can_cut(before, after)
        assert answer or name != "pt"
    assert road("llama3").can_cut("a  \n", "\n  b\n") is False  # its \s*[\r\n]+ crosses the break


@pytest.mark.parametrize("name", NAMES)
def test_every_line_is_in_one_block_and_blocks_tile_the_document(name):
    document = Document("u", "Era uma vez.\n\n  Fim.\r\noutra\n", 1, road(name))
    line = 0
    while line < len(document.lines):
        first, stop = document.block_of(line)
        assert first == line < stop
        assert all(document.block_of(inside) == (first, stop) for inside in range(first, stop))
        line = stop
    if name == "pt":
        assert [document.block_of(n) for n in range(4)] == [(0, 1), (1, 2), (2, 3), (3, 4)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@pytest.mark.parametrize("name", NAMES)
@given(text=texts, data=st.data())
def test_the_same_code_gives_the_librarys_tokens_before_and_after_edits(name, text, data):
    tok = library(name)
    document = Document("u", text, 1, road(name))
    for _ in range(data.draw(st.integers(0, 3))):
        assert document_lines(document) == expected_lines(tok, document.text)
        random_edit(document, data)
    assert document_lines(document) == expected_lines(tok, document.text)
    stats = document.stats()
    assert (stats.tokens, stats.chunks, stats.characters) == (
        len(tok.encode(document.text)),
        len(tok.chunk_spans(document.text)),
        len(document.text),
    )


@pytest.mark.parametrize("name", NAMES)
def test_background_work_ends_with_every_line_tokenized(name):
    document = Document("u", ("Era uma vez um gato. " * 400 + "\n") * 3, 1, road(name))
    while not document.tokenize_for(0.001):
        pass
    assert document.complete
    assert document_lines(document) == expected_lines(library(name), document.text)


@pytest.mark.parametrize("name", NAMES)
def test_one_explanation_for_every_tokenizer(name):
    text = "Era uma vez.\n\n  Fim.\r\noutra vez, a última"
    document = Document("u", text, 1, road(name))
    lines = document.lines
    explanation = explain_document(document, Point(0, 0), Point(len(lines) - 1, len(lines[-1])))
    assert "".join(item.text for item in explanation.chunks) == text
    assert [i for item in explanation.chunks for i in item.explanation.ids] == library(name).encode(text)
    # A selection inside the last line: the chunks it touches, placed in the document.
    base = len(text) - len(lines[3])
    inside = explain_document(document, Point(3, 6), Point(3, 9))
    chunks = library(name).chunk_spans(text)
    assert [item.text for item in inside.chunks] == [text[a:b] for _, a, b in chunks if a < base + 9 and b > base + 6]
    assert [item.line for item in inside.chunks] == [3] * len(inside.chunks) and inside.chunks[0].start == 5


def test_a_pass_merges_each_chunk_once_whatever_the_cache_holds_and_keeps_nothing_after():
    tok = OwnLineTokenizer(packaged("pt"), "pt")
    tok._chunks = LruCache(4)  # far fewer chunks than the text has
    lines = [f"palavra{n} outra{n} casa\n" for n in range(50)] * 2
    fresh = [_chunks(tok.line(line)) for line in lines[:50]]
    tok.begin_pass()
    again = [_chunks(tok.line(line.replace("\n", " \n"))) for line in lines]  # new lines, cached chunks
    tok.begin_pass()  # a second document's pass
    tok.end_pass()
    assert tok._pass_chunks, "kept while a pass runs"
    tok.end_pass()
    assert tok._pass_chunks == {}
    # The second time a chunk is met in the pass, it is the entry made the first time.
    for first, second in zip(again[:50], again[50:], strict=True):
        assert all(a is b for a, b in zip(first, second, strict=True))
    assert [chunks[:3] for chunks in again[:50]] == [chunks[:3] for chunks in fresh]


def _chunks(tokens: AnyLineTokens) -> tuple[object, ...]:
    assert isinstance(tokens, LineTokens), "a short line"
    return tokens.chunks
