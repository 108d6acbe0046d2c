"""glassllm's Hugging Face pre-tokenizers against HF ``tokenizers``' own
``pre_tokenize_str``: the same chunks at the same offsets."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from glassllm.formats.hf_pre_tokenizers import build_pre_tokenizer
from tests.library.formats.test_differential import HARD, SEED_TEXTS, TEXT

tokenizers = pytest.importorskip("tokenizers")
hf = tokenizers.pre_tokenizers
Regex = tokenizers.Regex

BEHAVIORS = ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous")

PRE_TOKENIZERS: dict[str, Any] = {
    "Whitespace": hf.Whitespace(),
    "WhitespaceSplit": hf.WhitespaceSplit(),
    "BertPreTokenizer": hf.BertPreTokenizer(),
    "Digits": hf.Digits(),
    "Digits-individual": hf.Digits(individual_digits=True),
    "CharDelimiterSplit": hf.CharDelimiterSplit("a"),
    "FixedLength": hf.FixedLength(3),
    "Sequence": hf.Sequence([hf.WhitespaceSplit(), hf.Digits(individual_digits=True), hf.Punctuation()]),
    "Sequence-empty": hf.Sequence([]),
    "Split-noop": hf.Split("\u2581", "merged_with_next"),
    **{f"Punctuation-{behavior}": hf.Punctuation(behavior) for behavior in BEHAVIORS},
    **{f"Split-string-{behavior}": hf.Split(" ", behavior) for behavior in BEHAVIORS},
    **{
        f"Split-regex-{behavior}-{invert}": hf.Split(Regex(r"\p{L}+|\d"), behavior, invert=invert)
        for behavior in BEHAVIORS
        for invert in (False, True)
    },
}


def _spec(pre_tokenizer: Any) -> object:
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizer
    return json.loads(tokenizer.to_str())["pre_tokenizer"]


def _ours(pre_tokenizer: Any, text: str) -> list[tuple[str, tuple[int, int]]]:
    cut = build_pre_tokenizer("test.json", _spec(pre_tokenizer))
    return [(text[start:end], (start, end)) for start, end in cut(text, [(0, len(text))])]


@pytest.mark.parametrize("name", PRE_TOKENIZERS)
def test_pre_tokenizers_match_hf_on_seeds(name):
    for text in [*SEED_TEXTS, *HARD, "a1b22!!c  d,,e", "x  ▁y▁▁z", " 12ab "]:
        assert _ours(PRE_TOKENIZERS[name], text) == PRE_TOKENIZERS[name].pre_tokenize_str(text), repr(text)


@pytest.mark.parametrize("name", PRE_TOKENIZERS)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_pre_tokenizers_match_hf_on_any_text(name, text):
    assert _ours(PRE_TOKENIZERS[name], text) == PRE_TOKENIZERS[name].pre_tokenize_str(text)


def test_an_unknown_pre_tokenizer_is_refused_by_name():
    why = "it cuts where the Unicode script changes, and Python's unicodedata has no script property"
    refused = rf"^odd\.json: the pre-tokenizer 'UnicodeScripts' is not supported here: {why}$"
    with pytest.raises(ValueError, match=refused):
        build_pre_tokenizer("odd.json", {"type": "UnicodeScripts"})
