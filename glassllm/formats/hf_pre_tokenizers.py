"""Hugging Face ``tokenizer.json`` pre-tokenizers that cut the normalized text without
changing it: where each chunk starts and ends.

Each is a split as HF ``tokenizers`` writes it: the text's pieces are cut at the
matches of a pattern (a regex, a string, or a kind of character, each character a match
of its own), and a ``behavior`` says what becomes of the matches: ``Removed`` (dropped),
``Isolated`` (a chunk each), ``MergedWithPrevious``, ``MergedWithNext`` (joined to the
chunk before or after) or ``Contiguous`` (a run of matches is one chunk); ``invert``
swaps matches and the text between them. Empty chunks are dropped.

:func:`build_pre_tokenizer` reads ``Whitespace`` (``\\w+|[^\\w\\s]+``), ``WhitespaceSplit``,
``BertPreTokenizer``, ``Punctuation``, ``Digits``, ``CharDelimiterSplit``, ``Split``,
``FixedLength``, ``UnicodeScripts`` (see :mod:`glassllm.formats.unicode_scripts`) and
``Sequence``; any other gets a ``ValueError`` that names it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import partial
from typing import Any

from glassllm.formats.hf_normalizers import WHITE_SPACE
from glassllm.formats.patterns import compile_pattern
from glassllm.formats.unicode_scripts import split_scripts

__all__ = ["Bounds", "PreTokenizer", "build_pre_tokenizer"]

Bounds = list[tuple[int, int]]
PreTokenizer = Callable[[str, Bounds], Bounds]
# Where a pattern matches in a piece: ``(start, end, is_match)`` covering it in order.
_Finder = Callable[[str], list[tuple[int, int, bool]]]

_BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")
# Oniguruma's \w: Alphabetic (letters, letter numbers, and the circled and squared
# letters), marks, decimal digits, connector punctuation and the joiners.
_WORD_CATEGORIES = frozenset(("Lu", "Ll", "Lt", "Lm", "Lo", "Nl", "Mn", "Mc", "Me", "Nd", "Pc"))
_WORD_EXTRA = (
    frozenset("\u200c\u200d")
    | frozenset(map(chr, range(0x24B6, 0x24EA)))
    | frozenset(map(chr, range(0x1F130, 0x1F14A)))
    | frozenset(map(chr, range(0x1F150, 0x1F16A)))
    | frozenset(map(chr, range(0x1F170, 0x1F18A)))
)
_PUNCTUATION = frozenset(("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"))
_NUMERIC = frozenset(("Nd", "Nl", "No"))


def _is_word(character: str) -> bool:
    return unicodedata.category(character) in _WORD_CATEGORIES or character in _WORD_EXTRA


def _is_punctuation(character: str) -> bool:
    # Rust's is_ascii_punctuation holds the ASCII symbols ($, +, <, =, >, ^, `, |, ~) too.
    if character.isascii():
        return character.isprintable() and not character.isalnum() and character != " "
    return unicodedata.category(character) in _PUNCTUATION


def _is_numeric(character: str) -> bool:
    return unicodedata.category(character) in _NUMERIC


def _characters(keep: Callable[[str], bool], piece: str) -> list[tuple[int, int, bool]]:
    """Each character for which ``keep`` holds is a match of its own."""
    found: list[tuple[int, int, bool]] = []
    at = 0
    for index, character in enumerate(piece):
        if keep(character):
            if at < index:
                found.append((at, index, False))
            found.append((index, index + 1, True))
            at = index + 1
    if at < len(piece):
        found.append((at, len(piece), False))
    return found


def _regex(pattern: re.Pattern[str], piece: str) -> list[tuple[int, int, bool]]:
    found: list[tuple[int, int, bool]] = []
    at = 0
    for match in pattern.finditer(piece):
        start, end = match.span()
        if at < start:
            found.append((at, start, False))
        found.append((start, end, True))
        at = end
    if at < len(piece):
        found.append((at, len(piece), False))
    return found


def _apply(behavior: str, found: list[tuple[int, int, bool]]) -> Bounds:
    """The chunks of one piece from its matches, as HF's ``NormalizedString::split``."""
    if behavior == "Removed":
        return [(start, end) for start, end, matched in found if not matched and start < end]
    if behavior == "Isolated":
        return [(start, end) for start, end, _ in found if start < end]
    if behavior in ("MergedWithPrevious", "MergedWithNext"):
        return [(start, end) for start, end in _merge(found, behavior == "MergedWithPrevious") if start < end]
    chunks: list[list[int]] = []
    previous = False
    for start, end, matched in found:
        if matched == previous and chunks:
            chunks[-1][1] = end
        else:
            chunks.append([start, end])
        previous = matched
    return [(start, end) for start, end in chunks if start < end]


def _merge(found: list[tuple[int, int, bool]], previous_side: bool) -> list[tuple[int, int]]:
    """A match (not next to another on that side) joins the chunk before it (or after)."""
    chunks: list[list[int]] = []
    last = False
    for start, end, matched in found if previous_side else reversed(found):
        if matched and not last and chunks:
            chunks[-1][1 if previous_side else 0] = end if previous_side else start
        else:
            chunks.append([start, end])
        last = matched
    return [(start, end) for start, end in (chunks if previous_side else reversed(chunks))]


def _split(finder: _Finder, behavior: str, invert: bool, text: str, bounds: Bounds) -> Bounds:
    cut: Bounds = []
    for start, end in bounds:
        found = finder(text[start:end])
        if invert:
            found = [(first, last, not matched) for first, last, matched in found]
        cut.extend((start + first, start + last) for first, last in _apply(behavior, found))
    return cut


def _fixed(length: int, text: str, bounds: Bounds) -> Bounds:
    return [(at, min(at + length, end)) for start, end in bounds for at in range(start, end, length)]


def _behavior(path: str, spec: dict[str, Any], default: str) -> str:
    behavior = spec.get("behavior", default)
    if behavior not in _BEHAVIORS:
        raise ValueError(f"{path}: the {spec.get('type')} behavior {behavior!r} is not supported")
    return behavior


def _split_pattern(path: str, spec: dict[str, Any]) -> _Finder:
    pattern = spec.get("pattern") or {}
    if isinstance(pattern.get("String"), str):
        return partial(_regex, re.compile(re.escape(pattern["String"])))
    if isinstance(pattern.get("Regex"), str):
        return partial(_regex, compile_pattern(pattern["Regex"]))
    raise ValueError(f"{path}: the Split pattern {pattern!r:.80} is not supported")


def _steps(path: str, spec: Any) -> list[PreTokenizer]:
    """The splits ``spec`` stands for, in order."""
    if not isinstance(spec, dict):
        raise ValueError(f"{path}: a pre-tokenizer must be an object, found {spec!r:.80}")
    kind = spec.get("type")
    space = partial(_characters, WHITE_SPACE.__contains__)
    if kind == "Sequence":
        return [step for part in spec.get("pretokenizers") or [] for step in _steps(path, part)]
    if kind == "Whitespace":
        return [partial(_split, _word_runs, "Removed", True)]
    if kind == "WhitespaceSplit":
        return [partial(_split, space, "Removed", False)]
    if kind == "BertPreTokenizer":
        return [partial(_split, space, "Removed", False), partial(_split, _punctuation, "Isolated", False)]
    if kind == "Punctuation":
        return [partial(_split, _punctuation, _behavior(path, spec, "Isolated"), False)]
    if kind == "Digits":
        behavior = "Isolated" if spec.get("individual_digits") else "Contiguous"
        return [partial(_split, partial(_characters, _is_numeric), behavior, False)]
    if kind == "CharDelimiterSplit" and isinstance(spec.get("delimiter"), str):
        return [partial(_split, partial(_characters, spec["delimiter"].__eq__), "Removed", False)]
    if kind == "Split":
        finder = _split_pattern(path, spec)
        return [partial(_split, finder, _behavior(path, spec, "Isolated"), bool(spec.get("invert")))]
    if kind == "FixedLength" and isinstance(spec.get("length", 5), int) and spec.get("length", 5) > 0:
        return [partial(_fixed, spec.get("length", 5))]
    if kind == "UnicodeScripts":
        return [split_scripts]
    raise ValueError(f"{path}: the pre-tokenizer {kind!r} is not supported here")


def _punctuation(piece: str) -> list[tuple[int, int, bool]]:
    return _characters(_is_punctuation, piece)


def _word_runs(piece: str) -> list[tuple[int, int, bool]]:
    """``\\w+|[^\\w\\s]+``: runs of word characters and runs of the others but whitespace."""
    found: list[tuple[int, int, bool]] = []
    at = 0
    while at < len(piece):
        kind = 0 if piece[at] in WHITE_SPACE else 1 if _is_word(piece[at]) else 2
        end = at + 1
        while end < len(piece) and (0 if piece[end] in WHITE_SPACE else 1 if _is_word(piece[end]) else 2) == kind:
            end += 1
        found.append((at, end, kind != 0))
        at = end
    return found


def build_pre_tokenizer(path: str, spec: Any) -> PreTokenizer:
    """The chunks' bounds a ``tokenizer.json``'s ``pre_tokenizer`` gives (none: the whole)."""
    steps = [] if spec is None else _steps(path, spec)

    def cut(text: str, bounds: Bounds) -> Bounds:
        for step in steps:
            bounds = step(text, bounds)
        return bounds

    return cut
