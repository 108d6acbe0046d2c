"""glassllm's Hugging Face normalizers against HF ``tokenizers``' own, character by
character: the normalized text, and where each normalized character came from (HF shows
it as the offsets of a WordLevel model over a pre-tokenizer that cuts every character
apart)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from glassllm.formats.hf_normalizers import build_normalizer
from tests.library.formats.test_differential import HARD, SEED_TEXTS, TEXT

tokenizers = pytest.importorskip("tokenizers")
hf = tokenizers.normalizers
Regex, Tokenizer, WordLevel = tokenizers.Regex, tokenizers.Tokenizer, tokenizers.models.WordLevel

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
}

EXTRA = [
    "e\u0301x",
    "a\u0308\u0301b",
    "\ufb01x",
    "\u0130b",
    "  ab  ",
    "x\x00y\u4e2dz",
    "\u1100\u1161\u11a8",
    "\u03a3\u03a3",
]


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
    assert _ours(NORMALIZERS[name], text) == _oracle(NORMALIZERS[name], text)


def test_an_unknown_normalizer_is_refused_by_name():
    with pytest.raises(ValueError, match=r"^odd\.json: the normalizer 'Nmt' is not supported$"):
        build_normalizer("odd.json", {"type": "Nmt"})
