"""A real model's line kept as its chunks' counts until something reads its tokens
(``ModelLineTokens.counted``) reads as a line tokenized at once."""

# The model fixtures are imported from tests/library/formats/fixtures.py (see there why), so a
# test's parameter of the same name is the fixture, not a redefinition.
# ruff: noqa: F811

from __future__ import annotations

from typing import Any

import pytest

from glassllm.formats.load import load_model
from glassllm.formats.model_tokenizer import ModelTokenizer
from glassllm_server.blocks import ModelLineTokens, tokenize_block
from tests.conftest import CORPORA
from tests.library.formats.fixtures import (  # noqa: F401 (fixtures)
    HF_MODELS,
    UNKNOWN_MODEL,
    converted,
    model,
    model_path,
)
from tests.server.oracle import TEXTS, lsp_lines

LINES = [
    *(line for text in TEXTS.values() for line in lsp_lines(text)),
    *lsp_lines((CORPORA / "pt" / "heldout.txt").read_text(encoding="utf-8")[:20_000]),
    *("猫☃\n", "猫\n", "abc\n", "🙂🙂\n", "x\r\n", "\t1\n", "  \n", "<|endoftext|>\n", "a<s>b\n", ""),
]


def read(line: ModelLineTokens) -> tuple[Any, ...]:
    """Everything a document's readers ask of a line."""
    counts = (line.tokens, line.chunk_count, line.unknown, line.leading_empty, line.first, line.continued)
    return (*counts, list(line.starts_of_chunks), line.chunk_starts(), line.spans(), line.window(0, line.length))


@pytest.mark.parametrize("name", [*HF_MODELS, "tekken", "mistral-v7", UNKNOWN_MODEL])
def test_a_line_counted_first_reads_as_one_tokenized_at_once(model, name):
    tok = model(name)
    assert isinstance(tok, ModelTokenizer)
    at_once = load_model(model_path(name))
    assert isinstance(at_once, ModelTokenizer)
    at_once.plain_chunk_ids = lambda *_, **__: None  # type: ignore[method-assign]
    counted = unknown = 0
    for text in LINES:
        for at_start in (True, False):
            (line,) = tokenize_block(tok, [text], at_start)
            if line._data is None:  # nothing has read its columns yet
                counted += 1
                unknown += line.unknown
            (expected,) = tokenize_block(at_once, [text], at_start)
            assert expected._data is not None
            assert read(line) == read(expected), (text, at_start)
    # Byte-level models read most lines as they are; a Metaspace model, a line without a
    # space that continues a text (the unknown-token model's "猫" among them).
    assert counted > (len(LINES) if name in (*HF_MODELS, "tekken") else 0)
    assert (unknown > 0) == (name == UNKNOWN_MODEL)
