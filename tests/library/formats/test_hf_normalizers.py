"""glassllm's Hugging Face normalizers against HF ``tokenizers``' own, character by
character: the normalized text, and where each normalized character came from (HF shows
it as the offsets of a WordLevel model over a pre-tokenizer that cuts every character
apart).

``Precompiled`` holds SentencePiece's character maps as ``sentencepiece`` compiles each
rule (``SentencePieceNormalizer(rule_name=…)``), and one compiled from a custom TSV rule
by ``spm_train``, in a temporary folder."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from glassllm.formats.hf_normalizers import build_normalizer
from glassllm.formats.protobuf import fields
from tests.conftest import CORPORA
from tests.library.formats.test_differential import HARD, SEED_TEXTS, TEXT, same_marks

tokenizers = pytest.importorskip("tokenizers")
hf = tokenizers.normalizers
Regex, Tokenizer, WordLevel = tokenizers.Regex, tokenizers.Tokenizer, tokenizers.models.WordLevel
sentencepiece = pytest.importorskip("sentencepiece")

NORMALIZERS = {
    "NFC": hf.NFC(),
    "NFD": hf.NFD(),
    "NFKC": hf.NFKC(),
    "NFKD": hf.NFKD(),
    "Lowercase": hf.Lowercase(),
    "Strip": hf.Strip(),
    "Strip-left": hf.Strip(left=True, right=False),
    "StripAccents": hf.Sequence([hf.NFD(), hf.StripAccents()]),
    "StripAccents-alone": hf.StripAccents(),
    "Replace-string": hf.Replace("a", "XY"),
    "Replace-longer": hf.Replace("ab", "X"),
    "Replace-removed": hf.Replace(" ", ""),
    "Replace-regex": hf.Replace(Regex(r"\s+"), " "),
    "Prepend": hf.Prepend("\u2581"),
    "BertNormalizer": hf.BertNormalizer(),
    "BertNormalizer-cased": hf.BertNormalizer(lowercase=False),
    "BertNormalizer-accents": hf.BertNormalizer(lowercase=False, strip_accents=True),
    "Sequence": hf.Sequence([hf.NFKC(), hf.Lowercase(), hf.Replace(" ", "\u2581"), hf.Prepend("\u2581")]),
    "Sequence-empty": hf.Sequence([]),
    "Nmt": hf.Nmt(),
}
RULES = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf")

EXTRA = [
    "e\u0301x",
    "a\u0308\u0301b",
    "\ufb01x",
    "\u0130b",
    "  ab  ",
    "x\x00y\u4e2dz",
    "\u1100\u1161\u11a8",
    "\u03a3\u03a3",
    "A\u030ax\r\n\u0600a\u0903 \u0301",
    "\u00c5\u212b\u1e9b\u0323\uff76\uff9e\u3000\u2028\ufeff",
    "\x00\u0301\u2122\x1eg\x1e\x1ea",
    "\u1100\u1161 \U0001f44d\U0001f3fd a\U0001f3fd \u00a9\u200d\u00a9",
]


def _charsmap(rule: str) -> bytes:
    spec = dict(fields(sentencepiece.SentencePieceNormalizer(rule_name=rule).serialized_normalizer_spec()))
    return spec[2]  # type: ignore[return-value]


@pytest.fixture(scope="module")
def custom_charsmap(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The character map ``spm_train`` compiles from a TSV rule (code points → code points)."""
    folder = tmp_path_factory.mktemp("custom-rule")
    (folder / "rule.tsv").write_text("41\t61\nFB01\t66 20 69\n41 30A\t212B\n2603\t\n3000\t20\n", encoding="utf-8")
    (folder / "corpus.txt").write_text(
        (CORPORA / "en" / "heldout.txt").read_text(encoding="utf-8")[:20000], encoding="utf-8"
    )
    sentencepiece.SentencePieceTrainer.train(
        input=str(folder / "corpus.txt"),
        model_prefix=str(folder / "m"),
        vocab_size=200,
        normalization_rule_tsv=str(folder / "rule.tsv"),
        minloglevel=2,
    )
    model = dict(fields((folder / "m.model").read_bytes()))
    return dict(fields(model[3]))[2]  # type: ignore[arg-type, return-value]


def _spec(normalizer: Any) -> object:
    tokenizer = Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizer
    return json.loads(tokenizer.to_str())["normalizer"]


def _oracle(normalizer: Any, text: str) -> tuple[str, list[tuple[int, int]]]:
    tokenizer = Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizer
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Split(Regex("(?m)."), "isolated")
    return normalizer.normalize_str(text), list(tokenizer.encode(text, add_special_tokens=False).offsets)


def _ours(normalizer: Any, text: str) -> tuple[str, list[tuple[int, int]]]:
    built = build_normalizer("test.json", _spec(normalizer))
    align = [(index, index + 1) for index in range(len(text))]
    return (text, align) if built is None else built(text, align)


@pytest.mark.parametrize("name", NORMALIZERS)
def test_normalizers_match_hf_on_seeds(name):
    for text in SEED_TEXTS + HARD + EXTRA:
        assert _ours(NORMALIZERS[name], text) == _oracle(NORMALIZERS[name], text), repr(text)


@pytest.mark.parametrize("name", NORMALIZERS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_normalizers_match_hf_on_any_text(name, text):
    text = "".join(character for character in text if same_marks(character))
    assert _ours(NORMALIZERS[name], text) == _oracle(NORMALIZERS[name], text)


def test_the_unicode_tables_disagree_only_on_marks_hf_does_not_know():
    # U+08CA (Unicode 14) is a nonspacing mark to Python and not to HF; "é" is to both.
    assert not same_marks("\u08ca")
    assert same_marks("\u0301") and same_marks("a")


@pytest.mark.parametrize("rule", RULES)
def test_precompiled_matches_hf_on_seeds(rule):
    normalizer = hf.Precompiled(_charsmap(rule))
    for text in SEED_TEXTS + HARD + EXTRA:
        assert _ours(normalizer, text) == _oracle(normalizer, text), repr(text)


@pytest.mark.parametrize("rule", RULES)
@settings(max_examples=150, deadline=None)
@given(text=TEXT)
def test_precompiled_matches_hf_on_any_text(rule, text):
    normalizer = hf.Precompiled(_charsmap(rule))
    assert _ours(normalizer, text) == _oracle(normalizer, text)


def test_a_custom_precompiled_map_matches_hf(custom_charsmap):
    normalizer = hf.Precompiled(custom_charsmap)
    for text in [*EXTRA, "A\u030a Ao \ufb01 \u2603\u2603x\u3000y", "\u2603", "x\u2603\u2603"]:
        assert _ours(normalizer, text) == _oracle(normalizer, text), repr(text)


def test_an_unknown_normalizer_is_refused_by_name():
    with pytest.raises(ValueError, match=r"^odd\.json: the normalizer 'Odd' is not supported$"):
        build_normalizer("odd.json", {"type": "Odd"})


def test_a_broken_charsmap_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"^odd\.json: the Precompiled normalizer's charsmap is not base64$"):
        build_normalizer("odd.json", {"type": "Precompiled", "precompiled_charsmap": "%%%"})
    with pytest.raises(ValueError, match=r"^odd\.json: the precompiled character map's trie size"):
        build_normalizer("odd.json", {"type": "Precompiled", "precompiled_charsmap": "/////wAAAAA="})
