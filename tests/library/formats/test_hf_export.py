"""The Hugging Face export encodes and decodes exactly as glassllm does.

Each check loads the exported ``tokenizer.json`` with the real ``tokenizers`` library and
compares IDs and decoded text with the glassllm tokenizer it came from.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st

from glassllm import Tokenizer, packaged
from glassllm.formats.files import is_hf_tokenizer_file
from glassllm.formats.hf_export import chunk_regex
from glassllm.tokenizer import SPECIALS
from tests.conftest import CORPORA

# Characters the tests below mix: composed and decomposed accents, emoji (with a skin
# tone and a ZWJ sequence), CJK, digits (ASCII and Devanagari), punctuation, every kind
# of space and line break, marks outside the BMP, the marker itself, and the underscore.
TRICKY = list(
    "abcdeéãçõAÉ ,.;:—-!?'\"()«»…_0123456789१२"
    "\u0301\u0303\u0327\u20dd\U0001d165"  # combining marks (the last one beyond the BMP)
    "🙂👍🏽👩‍💻🧪中文字日本語한국어"
    "\n\r\t\v\f\u00a0\u2028\u2029\u3000\u2581\u200d\ufeff²½Ⅻ"
)
tricky_text = st.text(st.sampled_from(TRICKY), max_size=120) | st.lists(
    st.sampled_from(["\r\n", "   ", " \t ", "e\u0301", "a\u0303o", "▁▁ x", "12.5%", "__init__", "…!?", "hmm,"]),
    max_size=20,
).map("".join)
# Any assigned character (unassigned ones may be assigned, and normalized, differently by
# the Unicode version inside tokenizers) and no lone surrogates (not valid UTF-8).
any_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cn", "Cs"]), max_size=150)


def export(tok: Tokenizer, folder: Path, name: str = "tokenizer.json") -> tokenizers.Tokenizer:
    path = folder / name
    tok.save_hf(path)
    return tokenizers.Tokenizer.from_file(str(path))


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, tuple[Tokenizer, tokenizers.Tokenizer]]:
    folder = tmp_path_factory.mktemp("hf")
    return {name: (packaged(name), export(packaged(name), folder, f"{name}.json")) for name in ("pt", "en")}


def assert_same(tok: Tokenizer, hf: tokenizers.Tokenizer, text: str) -> None:
    ids = tok.encode(text)
    # The one documented difference (a literal special name in the text) is pinned by
    # its own test below; here the text is read as glassllm reads it.
    hf.encode_special_tokens = any(special in text for special in ("<pad>", "<bos>", "<eos>"))
    try:
        assert hf.encode(text).ids == ids
    finally:
        hf.encode_special_tokens = False
    assert hf.decode(ids) == tok.decode(ids)
    assert hf.decode(ids, skip_special_tokens=False) == tok.decode(ids)


@pytest.mark.parametrize("name", ["pt", "en"])
@pytest.mark.parametrize("language", ["pt", "en"])
def test_heldout_corpora_encode_and_decode_exactly(exported, name, language):
    tok, hf = exported[name]
    text = (CORPORA / language / "heldout.txt").read_text(encoding="utf-8")
    assert_same(tok, hf, text)
    # Line by line too: a text that does not end with a line break.
    for line in text.splitlines()[:300]:
        assert hf.encode(line).ids == tok.encode(line)


def test_the_seeds_examples_hold_in_hugging_face(tmp_path):
    tok = Tokenizer.train("banana banana\n", vocab_size=32)
    hf = export(tok, tmp_path)
    for text in ["banana banana\n", "banana", "🧪", "Olá mundo\n"]:
        assert_same(tok, hf, text)
    assert hf.encode("🧪").ids == [tok.unk_id]
    assert hf.decode([tok.unk_id]) == "⁇"

    small = Tokenizer.train("banana banana", vocab_size=12)
    hf = export(small, tmp_path, "small.json")
    assert hf.encode("banana banana").ids == [11, 7, 11]
    assert hf.encode("banana banana").tokens == ["banana", "▁", "banana"]
    assert hf.decode([11, 7, 11]) == "banana banana"
    assert hf.encode("🙂").ids == [1]
    assert hf.get_vocab_size() == small.vocab_size


def test_the_file_has_the_vocabulary_merges_and_specials_in_order(tmp_path):
    tok = packaged("pt")
    tok.save_hf(tmp_path / "tokenizer.json")
    data = json.loads((tmp_path / "tokenizer.json").read_text(encoding="utf-8"))
    assert data["model"]["type"] == "BPE"
    assert data["model"]["merges"] == [list(pair) for pair in tok.merges]
    assert sorted(data["model"]["vocab"].items(), key=lambda item: item[1]) == [
        (piece, index) for index, piece in enumerate(tok.vocab)
    ]
    assert [(token["id"], token["content"], token["special"]) for token in data["added_tokens"]] == [
        (0, "<pad>", True),
        (2, "<bos>", True),
        (3, "<eos>", True),
    ]
    assert data["model"]["unk_token"] == "<unk>"
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert [hf.token_to_id(special) for special in SPECIALS] == [0, 1, 2, 3]
    assert is_hf_tokenizer_file(tmp_path / "tokenizer.json")


@settings(max_examples=300, deadline=None)
@given(tricky_text)
def test_tricky_text_encodes_exactly_with_the_packaged_tokenizers(exported, text):
    for tok, hf in exported.values():
        assert_same(tok, hf, text)


@settings(max_examples=300, deadline=None)
@given(any_text)
def test_any_text_encodes_exactly(exported, text):
    tok, hf = exported["pt"]
    assert_same(tok, hf, text)


@settings(max_examples=60, deadline=None)
@given(training=tricky_text, text=tricky_text)
def test_tokenizers_trained_on_tricky_text_export_exactly(tmp_path_factory, training, text):
    """Merges over whitespace runs, marks, emoji and the marker itself, at any vocabulary."""
    tok = Tokenizer.train(training + "\n" + text, 400)
    hf = export(tok, tmp_path_factory.mktemp("trained"))
    assert_same(tok, hf, training)
    assert_same(tok, hf, text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 1023), max_size=40))
def test_decoding_any_ids_agrees(exported, ids):
    for tok, hf in exported.values():
        assert hf.decode(ids) == tok.decode(ids)


def test_the_pre_tokenizer_cuts_the_same_chunks(exported):
    from glassllm.pipeline.chunks import pre_tokenize

    _, hf = exported["pt"]
    text = "Olá  mundo!\r\n\t12,5 e\u0301  \u2028🙂🙂 __x__ ▁▁a"
    normalized = hf.normalizer.normalize_str(text)
    assert [piece for piece, _ in hf.pre_tokenizer.pre_tokenize_str(normalized)] == pre_tokenize(text)
    assert "\\p" not in chunk_regex() and "\\w" not in chunk_regex()


def test_the_one_difference_literal_special_names_in_the_text(exported):
    """Hugging Face reads a literal ``<pad>``/``<bos>``/``<eos>`` as the special token;
    glassllm spells it out. ``encode_special_tokens = True`` gives glassllm's reading."""
    tok, hf = exported["en"]
    text = "<bos>hello<eos>"
    assert hf.encode(text).ids == [2, *tok.encode("hello"), 3]
    assert tok.encode(text) != hf.encode(text).ids
    hf.encode_special_tokens = True
    try:
        assert hf.encode(text).ids == tok.encode(text)
    finally:
        hf.encode_special_tokens = False
    # "<unk>" is no added token, so a literal one is just text in both.
    assert hf.encode("<unk>").ids == tok.encode("<unk>")


def test_normalization_is_the_same_nfc(exported):
    tok, hf = exported["pt"]
    decomposed = unicodedata.normalize("NFD", "ação é técnica")
    assert hf.encode(decomposed).ids == tok.encode(decomposed) == tok.encode("ação é técnica")


def test_the_file_loads_in_transformers_with_the_special_tokens_mapped(tmp_path):
    from transformers import PreTrainedTokenizerFast

    tok = packaged("pt")
    tok.save_hf(tmp_path / "tokenizer.json")
    fast = PreTrainedTokenizerFast(
        tokenizer_file=str(tmp_path / "tokenizer.json"),
        pad_token="<pad>",
        unk_token="<unk>",
        bos_token="<bos>",
        eos_token="<eos>",
    )
    assert (fast.pad_token_id, fast.unk_token_id, fast.bos_token_id, fast.eos_token_id) == (0, 1, 2, 3)
    assert len(fast) == tok.vocab_size
    text = (CORPORA / "pt" / "heldout.txt").read_text(encoding="utf-8")[:20000] + " 🧪 e\u0301\r\n"
    ids = tok.encode(text)
    assert fast.encode(text) == ids
    assert fast.decode(ids) == tok.decode(ids)
    assert fast.decode([2, *ids, 3, 0, 0]) == tok.decode(ids)
    # transformers counts <unk> among the special tokens, so skipping them drops it too.
    assert fast.decode(tok.encode("a🧪b"), skip_special_tokens=True) == "ab"
    batch = fast(["Olá", "Olá, mundo"], padding=True)
    assert batch["input_ids"][0] == tok.encode("Olá") + [0] * (len(tok.encode("Olá, mundo")) - len(tok.encode("Olá")))


def test_a_piece_learned_twice_keeps_its_first_id_only(tmp_path):
    """Hugging Face's vocabulary maps each piece to one ID: the first, which is the one
    glassllm's encode gives too; only decoding the second ID differs."""
    tok = Tokenizer(["a", "b", "c"], [("a", "b"), ("b", "c"), ("ab", "c"), ("a", "bc")])
    assert tok.vocab[9] == tok.vocab[10] == "abc"
    hf = export(tok, tmp_path)
    for text in ["abc", "abcabc", "bcab", "cab"]:
        assert_same(tok, hf, text)
    assert tok.decode([10]) == "abc" and hf.decode([10]) == ""
