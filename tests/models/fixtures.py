"""Real model tokenizers for the tests, fetched by tests/fixtures/fetch_models.sh.

The test modules import these fixtures by name: a second ``conftest.py`` would clash with
the server tests' ``from conftest import …``.

A test that needs one is skipped, naming the script, when the file is not there — and
fails instead under ``CI=true``, where the script runs first (.ci/run). Each model is
loaded once per session (a few seconds each); so is its reference implementation.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from glassllm.models import load_model
from glassllm.protocol import AnyTokenizer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MODELS = FIXTURES / "models"
FETCH = "tests/fixtures/fetch_models.sh"

# name → file under tests/fixtures/models/
FILES = {
    "llama3": "llama3/tokenizer.json",
    "gpt4o": "gpt4o/tokenizer.json",
    "mistral-v1": "mistral/tokenizer.model.v1",
    "mistral-v7": "mistral/mistral_instruct_tokenizer_241114.model.v7",
    "tekken": "mistral/tekken_240911.json",
}
HF_MODELS = ("llama3", "gpt4o")
SENTENCEPIECE_MODELS = ("mistral-v1", "mistral-v7")


def model_file(name: str) -> Path:
    """The fixture file of model ``name``; skips (fails under CI=true) when it is missing."""
    path = MODELS / FILES[name]
    if not path.is_file():
        message = f"{FILES[name]} is missing: run `bash {FETCH}` to fetch the real model tokenizers"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


_loaded: dict[tuple[str, bool], AnyTokenizer] = {}
_references: dict[tuple[str, bool], object] = {}


@pytest.fixture(scope="session")
def model() -> Callable[..., AnyTokenizer]:
    """``model(name, match_specials=False)``: glassllm's reading of a real model's file."""

    def get(name: str, match_specials: bool = False) -> AnyTokenizer:
        key = (name, match_specials)
        if key not in _loaded:
            _loaded[key] = load_model(model_file(name), match_specials=match_specials)
        return _loaded[key]

    return get


@pytest.fixture(scope="session")
def reference() -> Callable[..., Callable[[str], list[int]]]:
    """``reference(name, match_specials=False)``: the format's own implementation, as a
    function from text to the text's own IDs (nothing added around them)."""

    def get(name: str, match_specials: bool = False) -> Callable[[str], list[int]]:
        key = (name, match_specials)
        if key not in _references:
            _references[key] = _reference(name, match_specials)
        return _references[key]  # type: ignore[return-value]

    return get


@pytest.fixture(scope="session")
def hf_tokenizer() -> Callable[[str], object]:
    """``hf_tokenizer(name)``: HF ``tokenizers``' own reading of a tokenizer.json model
    (special-token text as ordinary text, as glassllm reads it by default)."""
    return _hf


def _hf(name: str, match_specials: bool = False) -> object:
    key = (f"hf:{name}", match_specials)
    if key not in _references:
        tokenizers = pytest.importorskip("tokenizers")
        hf = tokenizers.Tokenizer.from_file(str(model_file(name)))
        # HF reads special-token text as special tokens unless told otherwise.
        hf.encode_special_tokens = not match_specials
        _references[key] = hf
    return _references[key]


def _reference(name: str, match_specials: bool) -> Callable[[str], list[int]]:
    path = str(model_file(name))
    if name in HF_MODELS:
        hf = _hf(name, match_specials)
        return lambda text: hf.encode(text, add_special_tokens=False).ids  # type: ignore[attr-defined]
    if name in SENTENCEPIECE_MODELS:
        sentencepiece = pytest.importorskip("sentencepiece")
        processor = sentencepiece.SentencePieceProcessor(model_file=path)
        return lambda text: processor.encode(text)
    tekken = pytest.importorskip("mistral_common.tokens.tokenizers.tekken")
    tekkenizer = tekken.Tekkenizer.from_file(path)
    return lambda text: tekkenizer.encode(text, bos=False, eos=False)
