"""Added tokens as HF ``tokenizers`` matches them (its ``added_vocabulary.rs``): found
leftmost-longest in the text, each with its flags:

- ``single_word``: matched only where no word character touches it on either side (HF's
  ``\\w``: the Unicode word characters of Rust's ``regex``, see :func:`is_word`);
- ``lstrip`` / ``rstrip``: the whitespace run on that side (``\\s``: Unicode
  ``White_Space``) belongs to the token's span, so no other token holds it; ``lstrip``
  never reaches back over the token matched before;
- ``normalized``: matched on the normalized text (its content normalized the same way),
  after the tokens matched on the text as given.

A special token read as text (``split_special_tokens``) is still found, then passed
over, as HF passes over it: the text it covers is ordinary text, not a place to look for
another added token.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Any, NamedTuple

__all__ = ["AddedFlags", "added_flags", "find_added", "is_word", "pattern_of"]

# Unicode White_Space (what Rust's \s holds): str.isspace but U+001C…U+001F.
_NOT_WHITE_SPACE = frozenset("\x1c\x1d\x1e\x1f")
# Other_Alphabetic characters that are neither letters nor marks (circled and squared
# letters): Rust's \w holds every Alphabetic character.
_ALPHABETIC_SYMBOLS = ((0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169), (0x1F170, 0x1F189))


class AddedFlags(NamedTuple):
    """How an added token is matched (see the module's docstring)."""

    lstrip: bool = False
    rstrip: bool = False
    single_word: bool = False
    normalized: bool = False


def added_flags(tokens: list[Any]) -> dict[int, AddedFlags]:
    """Each added token's flags by ID, as a ``tokenizer.json`` writes them (HF's default
    for a missing ``normalized``: true unless the token is special)."""
    return {
        token["id"]: AddedFlags(
            bool(token.get("lstrip")),
            bool(token.get("rstrip")),
            bool(token.get("single_word")),
            bool(token.get("normalized", not token.get("special"))),
        )
        for token in tokens
        if isinstance(token, dict) and isinstance(token.get("id"), int)
    }


def is_word(character: str) -> bool:
    """Rust's Unicode ``\\w``: Alphabetic, marks, decimal digits, connector punctuation,
    the joiners."""
    category = unicodedata.category(character)
    if category[0] in "LM" or category in ("Nd", "Nl", "Pc") or character in "\u200c\u200d":
        return True
    code = ord(character)
    return any(low <= code <= high for low, high in _ALPHABETIC_SYMBOLS)


def _is_space(character: str) -> bool:
    return character.isspace() and character not in _NOT_WHITE_SPACE


def pattern_of(contents: list[str]) -> re.Pattern[str] | None:
    """A pattern that finds ``contents`` leftmost-longest (longest first at each place)."""
    kept = sorted({content for content in contents if content}, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, kept))) if kept else None


def find_added(
    pattern: re.Pattern[str], ids: dict[str, int], flags: dict[int, AddedFlags], text: str
) -> Iterator[tuple[int, int, int]]:
    """Each added token matched in ``text``: ``(start, end, ID)``, its span stretched over
    the whitespace its ``lstrip``/``rstrip`` take. ``ids``: the contents matched (a content
    found but not there is passed over, see the module's docstring)."""
    floor = 0
    for match in pattern.finditer(text):
        token_id = ids.get(match.group())
        if token_id is None:
            continue
        start, end = match.span()
        lstrip, rstrip, single_word, _ = flags.get(token_id, _PLAIN)
        if single_word and ((start and is_word(text[start - 1])) or (end < len(text) and is_word(text[end]))):
            continue
        if lstrip:
            while start > floor and _is_space(text[start - 1]):
                start -= 1
        if rstrip:
            while end < len(text) and _is_space(text[end]):
                end += 1
        yield start, end, token_id
        floor = end


_PLAIN = AddedFlags()
