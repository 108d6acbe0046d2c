"""glassllm's Hugging Face pre-tokenizers against HF ``tokenizers``' own
``pre_tokenize_str``: the same chunks at the same offsets."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from glassllm.formats.hf_pre_tokenizers import build_pre_tokenizer
from glassllm.formats.unicode_scripts import script_of
from tests.library.formats.test_differential import HARD, SEED_TEXTS, TEXT

tokenizers = pytest.importorskip("tokenizers")
hf = tokenizers.pre_tokenizers
Regex = tokenizers.Regex

# Script changes HF's UnicodeScripts cuts at, and the characters it does not (spaces,
# code points Unicode 9.0.0 leaves unassigned), leading ones too; Japanese is one script.
SCRIPTS = [
    "どこで生れ。Yes",
    "  Apples are りんご 林檎",
    "\u0378a \u0378b",
    "   ",
    "Ελλάδα, Россия! a1٣",
    "カタカナー漢字",
]

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
    "UnicodeScripts": hf.UnicodeScripts(),
    "Sequence-scripts": hf.Sequence([hf.WhitespaceSplit(), hf.UnicodeScripts(), hf.Digits()]),
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
    for text in [*SEED_TEXTS, *HARD, "a1b22!!c  d,,e", "x  ▁y▁▁z", " 12ab ", *SCRIPTS]:
        assert _ours(PRE_TOKENIZERS[name], text) == PRE_TOKENIZERS[name].pre_tokenize_str(text), repr(text)


@pytest.mark.parametrize("name", PRE_TOKENIZERS)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_pre_tokenizers_match_hf_on_any_text(name, text):
    assert _ours(PRE_TOKENIZERS[name], text) == PRE_TOKENIZERS[name].pre_tokenize_str(text)


def test_every_code_point_has_hfs_script():
    """Each code point HF's table (Unicode 9.0.0) can name, in three runs: grouped by the
    script glassllm gives, in a row (a code point HF puts in another script cuts its
    group), each after a character of another script (one HF gives no script joins it);
    and those glassllm gives no script, between two Latin letters and two Greek ones (one
    HF gives a script cuts the run)."""
    groups: dict[str | None, list[str]] = {}
    # Unicode 9.0.0 assigns nothing in planes 4 to 13; 15 and 16 are private use.
    for code in [*range(0xD800), *range(0xE000, 0x40000), *range(0xE0000, 0xF0000)]:
        groups.setdefault(script_of(chr(code)), []).append(chr(code))
    none = "".join(groups.pop(None))
    text = "".join(
        [
            *("".join(group) for group in groups.values()),
            *("".join(c + ("α" if script == "Latin" else "a") for c in group) for script, group in groups.items()),
            f"a{none}a",
            f"α{none}α",
        ]
    )
    assert len(groups) == 135  # HF's 137 scripts, Hiragana and Katakana counted as Han
    assert _ours(hf.UnicodeScripts(), text) == hf.UnicodeScripts().pre_tokenize_str(text)


def test_the_planes_left_out_above_have_no_script():
    """Planes 4 to 13 and the private use ones, which the test above leaves out (HF gives
    them no script, as a plane 14 tag is Common and ー, カ are Han)."""
    outside = ["\U00040000", "\U000dffff", "\ue000", "\U000f0000", "\U0010ffff", " "]
    assert [script_of(c) for c in outside] == [None] * 6
    assert [script_of(c) for c in "\U000e0001aーカ"] == ["Common", "Latin", "Han", "Han"]
    text = "".join(outside)
    assert hf.UnicodeScripts().pre_tokenize_str(f"a{text}b{text}α") == [(f"a{text}b{text}", (0, 14)), ("α", (14, 15))]


def test_an_unknown_pre_tokenizer_is_refused_by_name():
    refused = r"^odd\.json: the pre-tokenizer 'Chinese' is not supported here$"
    with pytest.raises(ValueError, match=refused):
        build_pre_tokenizer("odd.json", {"type": "Chinese"})
