"""glassllm's reading of real models against each format's own implementation.

The text's own IDs must be exactly what HF ``tokenizers`` (``encode(text,
add_special_tokens=False)``, for byte-level files and the Metaspace ones HF converts from a
SentencePiece model), ``sentencepiece`` (``encode``) and mistral-common's
Tekkenizer (``encode(text, bos=False, eos=False)``) give: on the held-out books of the
corpora (pt and en, whole), the seeds' examples, and hypothesis text from all of
Unicode with the hard cases mixed in. Offsets are checked against HF's where it gives
them, and against the bytes everywhere.
"""

# The fixtures are imported from tests/library/formats/fixtures.py (see there why), so a test's
# parameter of the same name is the fixture, not a redefinition.
# ruff: noqa: F811

from __future__ import annotations

import json
import string
import unicodedata
from functools import cache
from itertools import pairwise

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glassllm.formats.byte_level import ByteLevelModel
from glassllm.formats.load import load_model
from tests.conftest import CORPORA
from tests.library.formats.fixtures import (  # noqa: F401 (fixtures)
    FILES,
    HF_MODELS,
    METASPACE_MODELS,
    SENTENCEPIECE_MODELS,
    UNKNOWN_MODEL,
    converted,
    hf_tokenizer,
    ids_by_chunk,
    model,
    model_file,
    model_path,
    reference,
)

ALL = (*FILES, *METASPACE_MODELS)
# Encoded exactly: with the Metaspace file whose unknown characters are "<unk>" (lossy).
ENCODED = (*ALL, UNKNOWN_MODEL)
# Read by HF tokenizers, which is their oracle for special tokens and offsets too.
HF_FILES = (*HF_MODELS, *METASPACE_MODELS, UNKNOWN_MODEL)

SEED_TEXTS = [
    "Olá mundo\n",
    "banana banana\n",
    "banana banana",
    "🧪",
    "🙂",
    "banana",
    "Era uma vez\n",
    "Era uma vez",
    "Era uma vez, na chuva",
    "menina bonita",
    "A menina bonita",
    "",
]

HARD = [
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "\r",
    "\u00a0",
    "\u2028",
    "\u200d",
    "\x1c",
    "\x85",
    "\x00",
    "\x7f",
    "0",
    "12345",
    "٣",
    "½",
    "👍🏽",
    "👨‍👩‍👧",
    "🇧🇷",
    "e\u0301",
    "ſ",
    "'S",
    "'ll",
    "ﬁ",
    "שלום",
    "مرحبا",
    "中文",
    "日本語",
    "한국어",
    "▁",
    "Ġ",
    "<|endoftext|>",
    "<|begin_of_text|>",
    "[INST]",
    "<s>",
    "</s>",
    "[REF]",
]

# Every assigned character but surrogates (which UTF-8 cannot hold): a character that a
# later Unicode version than this Python's assigns has no category here (docs/models.md).
ANY_CHARACTER = st.characters(exclude_categories=("Cs", "Cn"))
TEXT = st.lists(st.one_of(ANY_CHARACTER, st.sampled_from(HARD)), max_size=40).map("".join)


@cache
def same_marks(character: str) -> bool:
    """Whether HF's Unicode tables (older than Python 3.11's Unicode 14) and Python's
    agree on which marks StripAccents and BertNormalizer remove, and on what the
    Punctuation pre-tokenizer cuts: they differ on a few hundred characters assigned or
    recategorized since (docs/models, "Unicode")."""
    import tokenizers

    hf = tokenizers.normalizers
    category = unicodedata.category(character)
    strips = hf.StripAccents().normalize_str(character) == ""
    bert = hf.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False)
    cut = len(tokenizers.pre_tokenizers.Punctuation().pre_tokenize_str(f"a{character}a")) == 3
    return (
        strips == (category in ("Mn", "Mc", "Me"))
        and (bert.normalize_str(character) == "") == (category == "Mn")
        and cut == (character in string.punctuation or category.startswith("P"))
    )


# TEXT without those characters, for tokenizers whose normalizer strips marks or whose
# pre-tokenizer cuts at punctuation.
MARKS_AGREED_TEXT = TEXT.map(lambda text: "".join(character for character in text if same_marks(character)))


def _book(language: str) -> str:
    return (CORPORA / language / "heldout.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("language", ["pt", "en"])
@pytest.mark.parametrize("name", ENCODED)
def test_held_out_books_encode_exactly(model, reference, name, language):
    text = _book(language)
    assert model(name).encode(text) == reference(name)(text)


@pytest.mark.parametrize("name", ENCODED)
def test_seed_examples_encode_exactly(model, reference, name):
    for text in SEED_TEXTS + HARD:
        assert model(name).encode(text) == reference(name)(text), text


@pytest.mark.parametrize("name", ENCODED)
def test_hypothesis_text_encodes_exactly(model, reference, name):
    tok, oracle = model(name), reference(name)

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(TEXT)
    def check(text):
        assert tok.encode(text) == oracle(text)

    check()


@pytest.mark.parametrize("name", ENCODED)
def test_special_token_text_both_ways(model, reference, name):
    text = "a<|endoftext|>b <|begin_of_text|>[INST] hi [/INST]</s><s>[REF]"
    assert model(name).encode(text) == reference(name)(text)
    matched = model(name, match_specials=True)
    ids = matched.encode(text)
    if name in HF_FILES:
        assert ids == reference(name, match_specials=True)(text)
    assert set(ids) & set(matched.specials.values())  # type: ignore[attr-defined]
    for special, token_id in matched.specials.items():  # type: ignore[attr-defined]
        assert matched.encode(special) == [token_id]
        assert model(name).encode(special) == reference(name)(special)


@pytest.mark.parametrize("name", HF_MODELS)
def test_offsets_are_hf_offsets(model, hf_tokenizer, name):
    hf = hf_tokenizer(name)
    text = _book("pt")[:20000] + " ⿰ 👍🏽 e\u0301 \r\n\t中文 <|endoftext|>\n"
    spans = model(name).encode_spans(text)
    assert [(span.start, span.end) for span in spans] == hf.encode(text, add_special_tokens=False).offsets


@pytest.mark.parametrize("match_specials", [False, True])
@pytest.mark.parametrize("name", METASPACE_MODELS)
def test_metaspace_offsets_are_hf_offsets_but_the_dummy_prefix_holds_nothing(model, hf_tokenizer, name, match_specials):
    hf = hf_tokenizer(name, match_specials)
    text = "\n\n" + _book("pt")[:20000] + "  ⿰ 👍🏽 e\u0301 \r\n\t中文 </s>x <s> y\n"
    spans = model(name, match_specials).encode_spans(text)
    found = hf.encode(text, add_special_tokens=False)
    assert [span.id for span in spans] == found.ids
    prefixes = 0
    for span, (start, end) in zip(spans, found.offsets, strict=True):
        if span.start == span.end:
            # HF gives the dummy prefix the span of the character it was put before.
            assert (span.piece, span.start) == ("\u2581", start) and end == start + 1
            prefixes += 1
        else:
            assert (span.start, span.end) == (start, end), span
    assert prefixes >= 1


@pytest.mark.parametrize("name", METASPACE_MODELS)
def test_metaspace_byte_fallback_covers_the_character_with_each_byte(model, name):
    tok = model(name)
    spans = tok.encode_spans("a ⿰b")
    fallen = [span for span in spans if tok.readable(span.piece).startswith("<")]
    assert [tok.readable(span.piece) for span in fallen] == ["<E2>", "<BF>", "<B0>"]
    assert {(span.start, span.end) for span in fallen} == {(2, 3)}
    assert tok.derivation(fallen[0].piece) == []


@pytest.mark.parametrize("name", ALL)
def test_spans_cover_each_character_with_the_tokens_that_hold_its_bytes(model, name):
    tok = model(name)
    text = "Olá, mundo!  ⿰ 👍🏽\r\n\tשלום 123456 ﬁ e\u0301\n"
    spans = tok.encode_spans(text)
    assert [span.id for span in spans] == tok.encode(text)
    covered = set()
    for before, after in pairwise(spans):
        assert before.start <= after.start and before.end <= after.end
    for span in spans:
        assert 0 <= span.start <= span.end <= len(text)
        covered.update(range(span.start, span.end))
        # A token's bytes lie within the UTF-8 of the characters it covers.
        held = tok.decode([span.id]).encode("utf-8", "replace") if span.end > span.start else b""
        if "\ufffd" not in tok.decode([span.id]):
            assert held.strip() in text[span.start : span.end].encode("utf-8")
    assert covered == set(range(len(text)))


@pytest.mark.parametrize("shared_id", [False, True])
@pytest.mark.parametrize("name", ALL)
def test_spans_after_encode_are_a_fresh_loads_spans(model, name, shared_id, monkeypatch):
    """``encode`` keeps only a chunk's IDs; spans of the same chunks then read the pieces
    back from them (a byte-level model, unless two pieces share an ID) or merge again."""
    text = _book("pt")[:6000] + " ⿰ 👍🏽 e\u0301 \r\n\t中文 ﬁ\n"
    expected = model(name).encode_spans(text)
    tok = load_model(model_path(name))
    if shared_id:
        tok.ids = {**tok.ids, "\x00 a second piece for ID 0": 0}  # type: ignore[union-attr]
    assert tok.encode(text) == [span.id for span in expected]
    if isinstance(tok, ByteLevelModel) and not shared_id:

        def merged_again(symbols: list[str]) -> list[str]:
            raise AssertionError(f"{symbols} merged again")

        monkeypatch.setattr(tok, "_merged", merged_again)
    assert tok.encode_spans(text) == expected


@pytest.mark.parametrize("name", ENCODED)
def test_chunk_by_chunk_ids_are_the_spans_ids_grouped_by_chunk(model, name):
    """``encode_chunks`` (what the server counts a compared model's lines with) gives
    ``encode_spans``' IDs chunk by chunk, at a text's start and in its middle; so does
    ``plain_chunk_ids``, with the chunks' texts, where it answers."""
    tok = model(name)
    texts = [_book("pt")[:6000], *SEED_TEXTS, *HARD, "a<|endoftext|>b <|begin_of_text|>[INST] hi [/INST]</s><s>"]

    @settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(TEXT)
    def gather(text: str) -> None:
        texts.append(text)

    gather()
    plain_ones = 0
    for text in texts:
        for at_start in (True, False):
            expected = ids_by_chunk(tok.encode_spans(text, at_start=at_start))
            assert tok.encode_chunks(text, at_start=at_start) == expected, text  # type: ignore[union-attr]
            plain = tok.plain_chunk_ids(text, at_start=at_start)  # type: ignore[union-attr]
            if plain is not None:
                chunks = [chunk for chunk, _, _ in tok.chunk_spans(text, at_start=at_start)]  # type: ignore[union-attr]
                assert plain == (chunks, expected), text
                assert "".join(chunks) == text
                plain_ones += 1
    # Byte-level models read most text as it is; never one that adds a dummy prefix.
    assert (plain_ones > len(texts)) == (name in HF_MODELS or name == "tekken")


@pytest.mark.parametrize("name", ENCODED)
def test_a_cut_between_lines_is_judged_by_chunk_texts_as_by_spans(model, name, monkeypatch):
    """``can_cut`` compares the chunks' texts where normalizing changes nothing and they
    tile the window: the same answers as comparing their spans, on a book's lines and on
    hypothesis lines."""
    tok = model(name)
    lines = [*_book("pt").splitlines(keepends=True)[:300], "a  \n", "\n  b\n", " \n", "x\r\n", "\t1\n", "'s\n"]
    samples: list[tuple[str, str]] = list(pairwise(lines))

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(TEXT.map(lambda text: text + "\n"), min_size=2, max_size=4))
    def gather(drawn: list[str]) -> None:
        samples.extend(pairwise(drawn))

    gather()
    by_texts = [tok.can_cut(before, after) for before, after in samples]
    monkeypatch.setattr(tok, "_cut_in_window", tok._spans_agree)  # type: ignore[union-attr]
    assert by_texts == [tok.can_cut(before, after) for before, after in samples]
    if name in HF_MODELS or name == "tekken":
        assert tok._plain_chunks("Olá mundo\n", True) is not None  # type: ignore[union-attr]


@pytest.mark.parametrize("name", ALL)
def test_decode_gives_the_text_back(model, name):
    tok = model(name)
    for text in [*SEED_TEXTS, "Olá 👍🏽 ⿰\r\n\t  x", _book("en")[:3000]]:
        assert tok.decode(tok.encode(text)) == text


@pytest.mark.parametrize("name", ALL)
def test_explanations_replay_to_the_tokens(model, name):
    tok = model(name)
    text = "tokenization Olá, mundo! 👍🏽 1234567 " + _book("pt")[:2000]
    explanations = tok.explain(text)
    assert [i for item in explanations for i in item.ids] == tok.encode(text)
    for item in explanations:
        state = list(item.characters)
        for step in item.steps:
            assert step.count is None  # models ship no training counts
            assert step.pair[0] + step.pair[1] == step.result
            assert step.pieces.count(step.result) >= 1
            state = step.pieces
        bytes_fell_back = any(piece.startswith("<0x") for piece in item.pieces)
        if item.steps and not bytes_fell_back:
            assert state == item.pieces


@pytest.mark.parametrize("name", ["llama3", "hf-metaspace-legacy"])
def test_hf_steps_are_in_merge_rank_order_with_the_files_ranks(model, converted, name):
    path = converted(name) if name in METASPACE_MODELS else model_file(name)
    merges = json.loads(path.read_text(encoding="utf-8"))["model"]["merges"]
    (item,) = model(name).explain("tokenization")
    for step in item.steps:
        assert merges[step.rank] in (f"{step.pair[0]} {step.pair[1]}", list(step.pair))
        assert step.score is None
    assert [step.rank for step in item.steps] == sorted(step.rank for step in item.steps)
    assert item.pieces == (["token", "ization"] if name == "llama3" else ["\u2581token", "ization"])


@pytest.mark.parametrize("name", SENTENCEPIECE_MODELS)
def test_sentencepiece_steps_give_the_score_that_ordered_them_and_its_rank(model, name):
    tok = model(name)
    (item,) = tok.explain("tokenization")
    scores = [step.score for step in item.steps]
    assert scores == [tok.scores[step.result] for step in item.steps]
    assert scores == sorted(scores, reverse=True)  # highest score first
    # The rank is the place among the pieces merging can make, highest score first.
    makeable = sorted((score for piece, score in tok.scores.items() if len(piece) > 1), reverse=True)
    for step in item.steps:
        assert step.rank == makeable.index(step.score)
    assert [step.rank for step in item.steps] == sorted(step.rank for step in item.steps)


def test_what_the_model_adds_around_a_text_is_apart(model, hf_tokenizer):
    text = "Era uma vez"
    for name in (*HF_MODELS, "hf-metaspace-legacy"):
        hf = hf_tokenizer(name)
        before, after = model(name).around
        assert hf.encode(text).ids == [*before, *model(name).encode(text), *after]
    sentencepiece = pytest.importorskip("sentencepiece")
    for name in SENTENCEPIECE_MODELS:
        processor = sentencepiece.SentencePieceProcessor(model_file=str(model_file(name)))
        assert model(name).around == ((processor.bos_id(),), ())
    tekken = pytest.importorskip("mistral_common.tokens.tokenizers.tekken")
    tekkenizer = tekken.Tekkenizer.from_file(str(model_file("tekken")))
    assert tekkenizer.encode(text, bos=True, eos=False) == [*model("tekken").around[0], *model("tekken").encode(text)]
