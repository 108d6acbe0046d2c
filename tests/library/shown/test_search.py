"""The wording of a model's search (glassllm.shown.search): every kind's ``search`` data
and every tokenizer class's ``method`` in English and Portuguese, so the language server
words any kind without naming one."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import glassllm.formats
from glassllm.formats.model_tokenizer import ModelTokenizer
from glassllm.shown.search import MERGES, method_text, search_lines

WORDPIECE = {
    "kind": "WordPiece",
    "lookups": [
        {"start": 0, "tried": ["casas", "casa"], "found": "casa"},
        {"start": 4, "tried": ["##s"], "found": None},
    ],
    "too_long": False,
    "unknown": True,
}
UNIGRAM = {
    "kind": "Unigram",
    "best": {"pieces": ["▁ca", "sa"], "scores": [-3.5, -2.25], "total": -5.75},
    "alternative": {"pieces": ["▁c", "asa"], "scores": [-4.0, -2.0], "total": -6.0},
}


def _classes() -> set[type[ModelTokenizer]]:
    for info in pkgutil.walk_packages(glassllm.formats.__path__, "glassllm.formats."):
        importlib.import_module(info.name)
    found, waiting = set(), [ModelTokenizer]
    while waiting:
        found.add(cls := waiting.pop())
        waiting += cls.__subclasses__()
    return found


def test_every_tokenizer_class_method_is_worded_in_portuguese():
    methods = {cls.method for cls in _classes()}
    assert MERGES in methods and len(methods) >= 4
    for method in methods:
        assert method_text(method, "pt") != method, method
        assert method_text(method, "en") == method


@pytest.mark.parametrize(
    ("search", "locale", "expected"),
    [
        (None, "pt", []),
        ({"kind": "WordLevel", "lookup": "casa", "found": False}, "en",
         ["lookup of <casa>: not in the vocabulary, so the unknown token"]),
        (WORDPIECE, "en", [
            "at offset 0: tried <casas>, <casa> → found <casa>",
            "at offset 4: tried <##s> → none found, so the whole word is the unknown token",
        ]),
        (WORDPIECE, "pt", [
            "na posição 0: tentou <casas>, <casa> → achou <casa>",
            "na posição 4: tentou <##s> → nenhuma achada, então a palavra inteira é o token desconhecido",
        ]),
        ({**WORDPIECE, "lookups": [], "too_long": True}, "en",
         ["the word is longer than max_input_chars_per_word, so the unknown token"]),
        (UNIGRAM, "en", [
            "cut taken: <▁ca> (-3.5) <sa> (-2.25), total -5.75",
            "best other cut: <▁c> (-4) <asa> (-2), total -6",
        ]),
        ({**UNIGRAM, "alternative": None}, "pt", [
            "corte escolhido: <▁ca> (-3.5) <sa> (-2.25), total -5.75",
            "nenhum outro corte: estas peças são o único jeito de escrever o trecho",
        ]),
    ],
)  # fmt: skip
def test_search_lines(search, locale, expected):
    assert search_lines(search, locale, lambda piece: f"<{piece}>") == expected


def test_a_step_names_at_most_so_many_candidates():
    step = {"start": 0, "tried": ["abcd", "abc", "ab", "a"], "found": "a"}
    search = {**WORDPIECE, "lookups": [step], "unknown": False}
    assert search_lines(search, "en", str, most=2) == ["at offset 0: tried abcd, abc … 2 shorter → found a"]
    assert search_lines(search, "pt", str, most=4) == ["na posição 0: tentou abcd, abc, ab, a → achou a"]
