"""Shared fixtures: the corpora live beside the repository, in ../shared (never copied in)."""

from collections.abc import Callable
from pathlib import Path

import pytest

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"


@pytest.fixture(scope="session")
def corpus_text() -> Callable[[str, int], str]:
    """``corpus_text(language, characters)``: the start of a training corpus, cut at a line end."""

    def read(language: str, characters: int) -> str:
        text = (CORPORA / language / "train.txt").read_text(encoding="utf-8")
        if len(text) <= characters:
            return text
        return text[: text.index("\n", characters) + 1]

    return read
