"""How a model that does not merge cut a chunk, worded for a person in English or
Portuguese: a tokenizer's ``method`` and its ``search(chunk)`` (the data ``glassllm
explain --json`` gives as ``"search"``, documented in docs/models).

The language server words any kind through these two functions and never names a kind,
so a new kind of model is added in the library alone: its ``method``, its ``search``
and, here, their wording::

    >>> search = {"kind": "WordLevel", "lookup": "casa", "found": True}
    >>> search_lines(search, "pt", repr)
    ["procura de 'casa': está no vocabulário"]
    >>> method_text("each word looked up whole", "pt")
    'cada palavra procurada inteira'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from glassllm.shown.problems import Locale

__all__ = ["MERGES", "method_text", "search_lines"]

# The ``method`` of a model that merges (BPE): its steps say how it cut a chunk.
MERGES = "merges"

# Each ``method`` (English, as the tokenizer gives it) in Portuguese.
_METHODS_PT = {
    MERGES: "fusões",
    "the longest vocabulary entry at each position, greedily": (
        "a entrada mais longa do vocabulário em cada posição, gulosamente"
    ),
    "each word looked up whole": "cada palavra procurada inteira",
    "the cut whose pieces' scores sum highest": "o corte cujas peças somam a maior pontuação",
}

# code → (English, Portuguese).
_WORDS: dict[str, tuple[str, str]] = {
    "lookup.found": ("lookup of {word}: found", "procura de {word}: está no vocabulário"),
    "lookup.missing": (
        "lookup of {word}: not in the vocabulary, so the unknown token",
        "procura de {word}: não está no vocabulário, então o token desconhecido",
    ),
    "prefix.found": (
        "at offset {start}: tried {tried} → found {found}",
        "na posição {start}: tentou {tried} → achou {found}",
    ),
    "prefix.missing": (
        "at offset {start}: tried {tried} → none found, so the whole word is the unknown token",
        "na posição {start}: tentou {tried} → nenhuma achada, então a palavra inteira é o token desconhecido",
    ),
    "more": ("… {count} shorter", "… mais {count} menores"),
    "too_long": (
        "the word is longer than max_input_chars_per_word, so the unknown token",
        "a palavra é mais longa que max_input_chars_per_word, então o token desconhecido",
    ),
    "cut.best": ("cut taken: {pieces}, total {total}", "corte escolhido: {pieces}, total {total}"),
    "cut.next": ("best other cut: {pieces}, total {total}", "melhor outro corte: {pieces}, total {total}"),
    "cut.alone": (
        "no other cut: these pieces are the only way to spell the chunk",
        "nenhum outro corte: estas peças são o único jeito de escrever o trecho",
    ),
}


def method_text(method: str, locale: Locale = "en") -> str:
    """A tokenizer's ``method`` in ``locale`` (a method without a translation stays English)."""
    return _METHODS_PT.get(method, method) if locale == "pt" else method


def search_lines(
    search: Mapping[str, Any] | None,
    locale: Locale,
    piece: Callable[[str], str],
    score: Callable[[float], str] = "{:g}".format,
    most: int | None = None,
) -> list[str]:
    """A tokenizer's ``search(chunk)`` as lines in ``locale``, one a step; ``piece``
    writes a piece or a word (as code, say), ``score`` a score or a total. None (a model
    that merges) gives none. ``most``: the candidates a step names at most, the longest,
    the others counted (a hover: a word of 100 characters tries 5,050 prefixes)."""

    def say(code: str, **fields: Any) -> str:
        english, portuguese = _WORDS[code]
        return (portuguese if locale == "pt" else english).format(**fields)

    if search is None:
        return []
    if search["kind"] == "WordLevel":
        return [say("lookup.found" if search["found"] else "lookup.missing", word=piece(search["lookup"]))]
    if search["kind"] == "WordPiece":
        if search["too_long"]:
            return [say("too_long")]
        return [
            say(
                "prefix.found" if step["found"] else "prefix.missing",
                start=step["start"],
                tried=_tried(step["tried"], piece, most, say),
                found=step["found"] and piece(step["found"]),
            )
            for step in search["lookups"]
        ]
    lines = []
    for code, path in (("cut.best", search["best"]), ("cut.next", search["alternative"])):
        if path is not None:
            pieces = " ".join(
                f"{piece(part)} ({score(value)})" for part, value in zip(path["pieces"], path["scores"], strict=True)
            )
            lines.append(say(code, pieces=pieces, total=score(path["total"])))
    if search["best"] is not None and search["alternative"] is None:
        lines.append(say("cut.alone"))
    return lines


def _tried(tried: list[str], piece: Callable[[str], str], most: int | None, say: Callable[..., str]) -> str:
    """The candidates a step tried, longest first: ``most`` of them at most, then how many more."""
    if most is None or len(tried) <= most:
        return ", ".join(map(piece, tried))
    return ", ".join(map(piece, tried[:most])) + " " + say("more", count=len(tried) - most)
