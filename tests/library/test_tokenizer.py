"""encode_spans: offsets into the text as given, through NFC, that tile the whole text."""

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glassllm import Tokenizer, TokenSpan, packaged
from glassllm.pipeline.normalize import normalize_with_offsets


@pytest.fixture(scope="module")
def pt() -> Tokenizer:
    return packaged("pt")


def assert_tiles(text: str, spans: list[TokenSpan]) -> None:
    position = 0
    for span in spans:
        assert span.start == position, (span, position)
        assert span.end >= span.start
        position = span.end
    assert position == len(text)
    chunks = [span.chunk for span in spans]
    assert chunks == sorted(chunks)
    assert not chunks or chunks[0] == 0


def test_spans_match_encode_and_carry_pieces(pt):
    text = "Era uma vez\n"
    spans = pt.encode_spans(text)
    assert [span.id for span in spans] == pt.encode(text)
    assert [span.piece for span in spans] == ["E", "ra", "▁uma", "▁vez", "\n"]
    assert [(span.start, span.end) for span in spans] == [(0, 1), (1, 3), (3, 7), (7, 11), (11, 12)]
    assert [span.chunk for span in spans] == [0, 0, 1, 2, 3]
    assert spans[2] == TokenSpan(id=pt.encode(" uma")[0], piece="▁uma", start=3, end=7, chunk=1)


def test_a_composed_accent_covers_all_its_original_code_points(pt):
    text = "cafe\u0301 ok"  # "é" written as e + COMBINING ACUTE ACCENT
    spans = pt.encode_spans(text)
    assert_tiles(text, spans)
    holder = next(span for span in spans if "é" in span.piece)
    assert text[holder.start : holder.end].endswith("e\u0301")
    assert "".join(text[s.start : s.end] for s in spans if s.chunk == 1) == " ok"


def test_emoji_and_unknown_characters_are_single_code_point_tokens(pt):
    text = "oi 🧪🧪!"
    spans = pt.encode_spans(text)
    assert_tiles(text, spans)
    unknown = [span for span in spans if span.id == pt.unk_id]
    assert [text[s.start : s.end] for s in unknown] == ["🧪", "🧪"]


def test_a_decomposing_character_gives_its_whole_run_to_the_first_piece():
    # U+0958 has a composition exclusion: NFC turns it into two code points.
    text = "\u0958a"
    normalized, origin = normalize_with_offsets(text)
    assert normalized == "\u0915\u093ca"
    assert origin == [0, 1, 1, 2]
    tok = Tokenizer(["\u0915", "a"], [])
    spans = tok.encode_spans(text)
    assert_tiles(text, spans)
    assert [(s.start, s.end) for s in spans] == [(0, 1), (1, 1), (1, 2)]


def test_hangul_jamo_compose_across_starters():
    text = "\u1100\u1161\u11a8 x"  # three conjoining jamo → one syllable 각
    normalized, origin = normalize_with_offsets(text)
    assert normalized == "각 x"
    assert origin == [0, 3, 4, 5]


def test_empty_text_has_no_spans(pt):
    assert pt.encode_spans("") == []


def test_crlf_and_tabs_keep_their_own_spans(pt):
    text = "a\tb\r\nc\rd\u2028e"
    spans = pt.encode_spans(text)
    assert_tiles(text, spans)
    assert [s.piece for s in spans if s.piece in "\r\n\t\u2028"] == ["\t", "\r", "\n", "\r", "\u2028"]


unicode_text = st.text(st.characters(codec="utf-8", categories=["L", "M", "N", "P", "S", "Z", "Cc"]), max_size=60)


@settings(max_examples=400, deadline=None)
@given(unicode_text)
def test_spans_tile_any_text_and_agree_with_encode(text):
    tok = packaged("en")
    spans = tok.encode_spans(text)
    assert_tiles(text, spans)
    assert [span.id for span in spans] == tok.encode(text)
    # A span keeps the character BPE saw even where its ID is <unk>.
    assert [span.piece if span.id != tok.unk_id else "<unk>" for span in spans] == tok.tokens(tok.encode(text))


@settings(max_examples=400, deadline=None)
@given(unicode_text)
def test_spans_after_encode_read_its_ids_back_as_merging_would(text):
    # encode merges a new chunk IDs only; spans asked next read its pieces back from them.
    pt = packaged("pt")
    encoded_first = Tokenizer(pt.alphabet, pt.merges)
    ids = encoded_first.encode(text)
    spans = encoded_first.encode_spans(text)
    assert spans == Tokenizer(pt.alphabet, pt.merges).encode_spans(text)
    assert [span.id for span in spans] == ids


@settings(max_examples=400, deadline=None)
@given(unicode_text)
def test_each_span_normalizes_to_its_piece_when_nfc_keeps_runs_apart(text):
    tok = packaged("pt")
    normalized, origin = normalize_with_offsets(text)
    spans = tok.encode_spans(text)
    assert "".join(span.piece for span in spans) == normalized.replace(" ", "▁")
    if origin is None:
        for span in spans:
            assert text[span.start : span.end].replace(" ", "▁") == span.piece
    else:
        assert unicodedata.normalize("NFC", text) == normalized


def shifted(spans: list[TokenSpan], offset: int, chunks: int) -> list[TokenSpan]:
    return [
        span._replace(start=span.start + offset, end=span.end + offset, chunk=span.chunk + chunks) for span in spans
    ]


def spans_line_by_line(tok: Tokenizer, text: str) -> list[TokenSpan]:
    """encode_spans of each line (its ending kept, LSP's breaks), shifted into place."""
    spans: list[TokenSpan] = []
    offset = 0
    for line in re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text):
        spans += shifted(tok.encode_spans(line), offset, spans[-1].chunk + 1 if spans else 0)
        offset += len(line)
    return spans


@pytest.mark.parametrize(
    "text",
    [
        "q\u0301 e\u0301",
        "4\u0327 e\u0301",
        "a \u0301e\u0301",
        "e\u0301\n\u0301",
        "a\u0300\r\u0301",
        "a\u0308\n\u0301",
        "a\u0308\u0301 q\u0301\u0327",
    ],
)
def test_what_nfc_left_in_place_keeps_its_own_offsets(pt, text):
    assert pt.encode_spans(text) == spans_line_by_line(pt, text)
    normalized, origin = normalize_with_offsets(text)
    assert origin is not None  # NFC changes each of these texts
    for k, character in enumerate(normalized):
        if origin[k + 1] - origin[k] == 1 and text[origin[k]] == character:
            continue
        # Only code points NFC changed share offsets, and then not with a line break.
        assert "\n" not in text[origin[k] : origin[k + 1]] and "\r" not in text[origin[k] : origin[k + 1]]


def test_a_letter_nfc_does_not_compose_keeps_its_span_beside_other_lines(pt):
    assert pt.encode_spans("q\u0301 e\u0301")[0] == pt.encode_spans("q\u0301")[0] == TokenSpan(78, "q", 0, 1, 0)


line_text = st.lists(
    st.one_of(
        st.characters(codec="utf-8", categories=["L", "M", "N", "P", "S", "Z", "Cc"]),
        st.sampled_from(
            ["\n", "\r", "\r\n", "\u0301", "\u0327", "\u0308", "e\u0301", "\u1100\u1161", "\u0958", "\u0344"]
        ),
    ),
    max_size=40,
).map("".join)


@settings(max_examples=600, deadline=None)
@given(line_text)
def test_a_line_offsets_never_depend_on_other_lines(text):
    tok = packaged("pt")
    assert tok.encode_spans(text) == spans_line_by_line(tok, text)
