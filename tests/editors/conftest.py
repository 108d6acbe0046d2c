"""The real model tokenizers the real-editor tests name (from tests/fixtures/models/, as
tests/fixtures/fetch_models.sh fetches them), each loaded once for the whole run."""

from __future__ import annotations

from pathlib import Path

import pytest

from glassllm.formats.load import load_model
from glassllm.formats.model_tokenizer import ModelTokenizer
from tests.library.formats.fixtures import model_file


@pytest.fixture(scope="session")
def mistral_file() -> Path:
    return model_file("mistral-v1")


@pytest.fixture(scope="session")
def mistral(mistral_file: Path) -> ModelTokenizer:
    return _loaded(mistral_file)


@pytest.fixture(scope="session")
def llama_file() -> Path:
    return model_file("llama3")


@pytest.fixture(scope="session")
def llama(llama_file: Path) -> ModelTokenizer:
    return _loaded(llama_file)


def _loaded(path: Path) -> ModelTokenizer:
    found = load_model(path)
    assert isinstance(found, ModelTokenizer), f"{path} is not a real model's tokenizer"
    return found
