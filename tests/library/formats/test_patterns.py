"""A real model's pre-tokenizer pattern in Python's ``re`` (glassllm/formats/patterns.py):
the form for texts without astral characters splits every such text as the whole
pattern does, and a split uses it only for those."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glassllm.formats.hf_bpe import GPT2_PATTERN, Split
from glassllm.formats.patterns import compile_pattern
from tests.library.formats.fixtures import model_file

# Characters beside which a pattern's alternatives change: letters of both cases, marks,
# digits, contractions, spaces, line breaks, punctuation.
NEIGHBOURS = ["", "a", "A", "é", "\u0301", "1", "1234", " ", "  ", "\n", "\r\n", "\t", "'s", "'S", ".", "_", "\u00a0"]


def model_pattern(name: str) -> str:
    """The pre-tokenizer pattern of the fixture model ``name`` (a tokenizer.json's Split,
    Tekken's configured one)."""
    data = json.loads(model_file(name).read_text(encoding="utf-8"))
    if name == "tekken":
        return data["config"]["pattern"]
    parts = data["pre_tokenizer"].get("pretokenizers", [data["pre_tokenizer"]])
    return next(part["pattern"]["Regex"] for part in parts if part["type"] == "Split")


@pytest.fixture(scope="module", params=["gpt2", "llama3", "gpt4o", "tekken"])
def pattern(request: pytest.FixtureRequest) -> str:
    return GPT2_PATTERN if request.param == "gpt2" else model_pattern(request.param)


def _same_matches(pattern: str, text: str) -> None:
    whole, bmp = compile_pattern(pattern), compile_pattern(pattern, bmp_only=True)
    assert [match.span() for match in bmp.finditer(text)] == [match.span() for match in whole.finditer(text)]


def test_every_bmp_character_splits_alike_beside_any_neighbour(pattern):
    characters = [chr(code) for code in range(0x10000)]
    _same_matches(pattern, "".join(characters))
    for neighbour in NEIGHBOURS:
        _same_matches(pattern, "".join(neighbour + character + " " for character in characters))
        _same_matches(pattern, "".join(" " + character * 2 + neighbour for character in characters))


bmp_text = st.lists(st.one_of(st.characters(max_codepoint=0xFFFF), st.sampled_from(NEIGHBOURS[1:])), max_size=40).map(
    "".join
)


@settings(max_examples=300, deadline=None)
@given(text=bmp_text)
def test_any_bmp_text_splits_alike(pattern, text):
    _same_matches(pattern, text)


def test_a_text_with_an_astral_character_is_split_by_the_whole_pattern(pattern):
    split, whole = Split.of(pattern, True), compile_pattern(pattern)
    for text in ["Olá 🙂 mundo", "𝐀𝐁c d", "x \U0001d165y"]:
        assert split.texts(text) == whole.findall(text)
        assert list(split.bounds(text, 0, len(text))) == [match.span() for match in whole.finditer(text)]
