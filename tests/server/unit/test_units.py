"""The units a document is counted in (``glassllm_server.units``): every token of each
unit placed where the library puts it — the whole document through its own tokens
(glassllm's tokenizer and real models', whose tokens cross line breaks) or encoded with
another tokenizer, and each record of a ``.jsonl`` dataset through its JSON escapes."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glassllm import AnyTokenizer, packaged
from glassllm_server.compare import ComparedTokenizer
from glassllm_server.counted import CountedUnit
from glassllm_server.document import Document
from glassllm_server.line_tokenizer import OwnLineTokenizer
from glassllm_server.positions import Point
from glassllm_server.units import DocumentUnit, count_document, counted_units, record_units
from tests.server.oracle import TRICKY
from tests.server.unit.test_model_document import MODELS, model_road, texts, tokenizer

PT = packaged("pt")
PT_ROAD = OwnLineTokenizer(PT, "pt")
DOCUMENTS = [TRICKY, TRICKY + ".\n\n\n  Fim.\r\n\r\n<|endoftext|>", "", "\n\n", "Era uma vez.\n\n\nFim"]


def ranges(unit: CountedUnit) -> list[tuple[Point, Point]]:
    return [unit.token_range(index) for index in range(unit.count)]


def library_ranges(tok: AnyTokenizer, text: str) -> list[tuple[int, int]]:
    """Oracle: each of the library's tokens of the whole text, as offsets."""
    return [(span.start, span.end) for span in tok.encode_spans(text)]


def offsets(document: Document, unit: CountedUnit) -> list[tuple[int, int]]:
    """Each token's range as offsets (the end of a line after its ending and the start of
    the next are one place)."""
    index = document.index
    return [(index.point_offset(start), index.point_offset(end)) for start, end in ranges(unit)]


@pytest.mark.parametrize("text", DOCUMENTS)
def test_the_whole_document_with_glassllm_s_tokenizer_is_the_library_s_tokens(text):
    (unit,) = counted_units(Document("file:///a.txt", text, 1, PT_ROAD))
    assert isinstance(unit, DocumentUnit)
    expected = [span for line in Document("u", text, 1, PT_ROAD).lines for span in PT.encode_spans(line)]
    assert unit.count == len(expected)
    assert (unit.template_count, unit.first_line) == (0, 0)
    document = Document("u", text, 1, PT_ROAD)
    assert ranges(unit) == [
        (Point(line, span.start), Point(line, span.end))
        for line in range(len(document.lines))
        for span in PT.encode_spans(document.lines[line])
    ]


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("text", DOCUMENTS)
def test_the_whole_document_with_a_real_model_has_its_tokens_across_lines(name, text):
    document = Document("file:///a.txt", text, 1, model_road(name))
    (unit,) = counted_units(document)
    assert unit.count == len(tokenizer(name).encode(text))
    assert offsets(document, unit) == library_ranges(tokenizer(name), text)


@settings(max_examples=40, deadline=None)
@given(text=texts)
def test_a_budget_s_other_tokenizer_counts_the_text_and_places_each_token(text):
    document = Document("file:///a.txt", text, 1, PT_ROAD)
    unit = asyncio.run(count_document(document, ComparedTokenizer(tokenizer("llama3"), "llama3")))
    assert unit.count == len(tokenizer("llama3").encode(text))
    assert offsets(document, unit) == library_ranges(tokenizer("llama3"), text)


def source_offsets(line: str, value: str) -> list[int]:
    """Oracle: the column of each code point of ``value`` in its record ``line`` (and of
    the closing quote): json.dumps escapes a string one code point at a time."""
    start = line.index('"text": "') + len('"text": "')
    ascii_only = line.isascii()
    offsets, at = [], start
    for character in value:
        offsets.append(at)
        at += len(json.dumps(character, ensure_ascii=ascii_only)) - 2
    return [*offsets, at]


values = st.lists(
    st.sampled_from(["a", " ", "é", "e\u0301", "\n", '"', "\\", "/", "\t", "🙂", "\u2028", "\x85", "猫", "\x00", "ab"]),
    max_size=30,
).map("".join)


@settings(max_examples=60, deadline=None)
@given(
    records=st.lists(st.tuples(values, st.booleans()), min_size=1, max_size=4), ending=st.sampled_from(["\n", "\r\n"])
)
def test_each_record_of_a_dataset_is_a_unit_placed_through_its_escapes(records, ending):
    lines = [json.dumps({"text": value}, ensure_ascii=ascii_only) for value, ascii_only in records]
    text = ending.join([*lines, "not a record", '{"text": 3}', ""])
    document = Document("file:///d/data.jsonl", text, 1, PT_ROAD)
    units = counted_units(document)
    assert [unit.first_line for unit in units] == list(range(len(records)))
    for unit, line, (value, _) in zip(units, lines, records, strict=True):
        spans = PT.encode_spans(value)
        assert unit.count == len(spans)
        offsets = source_offsets(line, value)
        assert ranges(unit) == [
            (Point(unit.first_line, offsets[span.start]), Point(unit.first_line, offsets[span.end])) for span in spans
        ]


def test_a_dataset_without_records_is_one_document_and_a_text_file_is_never_records():
    assert [type(unit) for unit in counted_units(Document("file:///d/x.jsonl", "a\nb", 1, PT_ROAD))] == [DocumentUnit]
    record = '{"text": "Era uma vez"}\n'
    assert [type(unit) for unit in counted_units(Document("file:///d/x.txt", record, 1, PT_ROAD))] == [DocumentUnit]
    assert len(record_units(Document("file:///d/x.jsonl", record * 3, 1, PT_ROAD), PT)) == 3


class CountingTokenizer:
    """The Portuguese tokenizer, counting the texts it encodes."""

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def encode_spans(self, text: str, *, at_start: bool = True):
        self.encoded.append(text)
        return PT.encode_spans(text, at_start=at_start)


def test_an_edit_encodes_again_only_the_records_it_changed():
    counting = CountingTokenizer()
    lines = [json.dumps({"text": f"registro {number} de um gato"}) for number in range(50)]
    document = Document("file:///d/data.jsonl", "\n".join(lines) + "\n", 1, PT_ROAD)
    before = record_units(document.snapshot(), counting)  # type: ignore[arg-type]
    assert len(before) == 50 and len(counting.encoded) == 50
    counting.encoded.clear()
    column = lines[10].index("gato")
    document.apply_change(Point(10, column), Point(10, column + 4), "cão")
    after = record_units(document.snapshot(), counting)  # type: ignore[arg-type]
    assert counting.encoded == ["registro 10 de um cão"]
    fresh = record_units(Document("file:///d/data.jsonl", document.text, 1, PT_ROAD), PT)
    assert [ranges(unit) for unit in after] == [ranges(unit) for unit in fresh]
    # The snapshot taken before the edit keeps its own encodings.
    assert [unit.count for unit in before] == [len(PT.encode(json.loads(line)["text"])) for line in lines]


@pytest.mark.parametrize("name", ["en", *MODELS])
@pytest.mark.parametrize("text", DOCUMENTS)
def test_a_budget_s_other_tokenizer_places_each_token_of_the_tricky_documents(name, text):
    other = packaged("en") if name == "en" else tokenizer(name)
    document = Document("file:///a.txt", text, 1, PT_ROAD)
    unit = asyncio.run(count_document(document, ComparedTokenizer(other, name)))
    assert unit.count == len(other.encode(text))
    assert offsets(document, unit) == library_ranges(other, text)


def test_an_edit_counts_again_only_the_lines_it_changed_for_a_budget_s_tokenizer():
    other = ComparedTokenizer(tokenizer("llama3"), "llama3")
    counted: list[int] = []
    count_block = other.lines.count_block

    def counting(lines, at_start):  # the lines each block it counts holds
        counted.append(len(lines))
        return count_block(lines, at_start)

    other.lines.count_block = counting  # type: ignore[method-assign]
    lines = [f"Linha {number} de um gato que comia muito.\n" for number in range(200)]
    document = Document("file:///a.txt", "".join(lines), 1, PT_ROAD)
    before = asyncio.run(count_document(document.snapshot(), other))
    assert sum(counted) == len(document.lines)  # every line once (the last, empty, too)
    counted.clear()
    column = lines[120].index("gato")
    document.apply_change(Point(120, column), Point(120, column + 4), "cão")
    after = asyncio.run(count_document(document.snapshot(), other))
    assert 0 < sum(counted) <= 3  # the edited line's block, not the document
    assert after.count == len(tokenizer("llama3").encode(document.text))
    assert offsets(document, after) == library_ranges(tokenizer("llama3"), document.text)
    assert before.count == len(tokenizer("llama3").encode("".join(lines)))
