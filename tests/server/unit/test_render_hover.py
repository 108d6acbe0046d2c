"""Hover text without a server: the derivation line and the Markdown of a token."""

from __future__ import annotations

import pytest

from glassllm_server.document import Document, DocumentToken
from glassllm_server.messages import Messages
from glassllm_server.positions import Point
from glassllm_server.render.hover import derivation_line, hover_markdown


def test_derivation_line_follows_the_issue_format():
    assert derivation_line([("▁vez", "▁v", "ez"), ("ez", "e", "z")]) == "▁vez ← ▁v + ez ← e + z"
    assert derivation_line([]) == ""


def token_at(document: Document, point: Point) -> DocumentToken:
    """The token at ``point`` of a document tokenized whole when it was made."""
    token = document.token_at(point)
    assert token is not None, point
    return token


@pytest.mark.parametrize(
    ("locale", "expected"),
    [
        (
            "en",
            [
                "**`▁vez`** · ID",
                " · at 1:8–1:11 · ",
                "index 3 in the document",
                "Chunk `▁vez` → **`▁vez`**",
                "Merges: `▁vez ← ",
                "Tokenizer: Portuguese (pt)",
                "Explain BPE merges",
            ],
        ),
        (
            "pt",
            [
                "**`▁vez`** · ID",
                " · em 1:8–1:11 · ",
                "índice 3 no documento",
                "Trecho `▁vez` → **`▁vez`**",
                "Fusões: `▁vez ← ",
                "Tokenizador: português (pt)",
                "Explicar fusões BPE",
            ],
        ),
    ],
)
def test_hover_markdown(tokenizer, locale, expected):
    document = Document("u", "Era uma vez", 1, tokenizer)
    token = token_at(document, Point(0, 8))
    derivation = tokenizer.tokenizer.derivation(token.piece)
    messages = Messages(locale)
    label = f"{messages('tokenizer.pt')} (pt)"
    text = hover_markdown(token, derivation, label, messages)
    for part in expected:
        assert part in text
    assert derivation_line(derivation) in text


def test_hover_markdown_for_an_unknown_character_and_a_single_character(tokenizer):
    document = Document("u", "a🧪", 1, tokenizer)
    unknown = token_at(document, Point(0, 1))
    text = hover_markdown(unknown, [], "x", Messages("en"), unknown=unknown.id == tokenizer.unk_id)
    assert "**`🧪`** · ID 1 · not in the alphabet: `<unk>`, decoded as ⁇ · at 1:2 · " in text
    assert "A single character: no merges." in text
