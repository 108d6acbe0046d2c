"""Stage 2 of the pipeline: the space marker and the chunk rule.

After NFC, every ASCII space becomes the visible marker ``▁`` (U+2581) and the text is
cut into chunks. BPE merges happen inside a chunk, never across two, so the chunk rule
decides which pieces can exist at all. The rule, tried in this order at each position:

1. ``\\n`` and ``\\r`` are chunks of their own, one character each (so ``\\r\\n`` is two
   chunks and no chunk ever crosses a line break, whatever the line ending).
2. A word: an optional ``▁`` then letters, with any combining marks (of the Basic
   Multilingual Plane) that follow a letter (``▁vez``, ``Olá``, ``हिन्दी``).
3. A number: an optional ``▁`` then decimal digits (``▁1884``).
4. Punctuation and symbols: an optional ``▁`` then a run of characters that are neither
   letters, digits, nor whitespace; ``_``, emoji and stray combining marks land here
   (``."``, ``▁—``, ``🙂``).
5. Surplus markers: a run of ``▁`` that stops one short of a following word, number or
   symbol, which keeps its own ``▁`` (``"a   b"`` → ``a``, ``▁▁``, ``▁b``).
6. Other whitespace (tabs, form feeds, no-break spaces, U+2028…) in runs, unconverted.

So spaces before a word belong to its chunk, and punctuation is kept apart from words,
as in GPT-style pre-tokenizers. Rules 1 and 2 never compete (no line break is a letter),
so the pattern tries words first, for speed. Every character falls under exactly one
rule, which makes the split lossless: ``"".join(pre_tokenize(t)) == nfc(t).replace(" ", "▁")``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from glassllm.normalize import nfc

__all__ = ["CHUNK_PATTERN", "SPACE", "chunk_matches", "mark_spaces", "pre_tokenize"]

SPACE = "\u2581"


def _mark_class() -> str:
    """A regex class of the combining marks (general category M) of the Basic Multilingual Plane.

    Marks beyond the BMP (historic scripts, musical notation, variation selectors
    supplement) are left out on purpose: a class with any character past U+FFFF loses the
    regex engine's constant-time table and made chunking of every text half again as slow.
    Such a mark falls under rule 4 instead, which keeps the split lossless.
    """
    ranges: list[tuple[int, int]] = []
    for code in range(0x300, 0x10000):
        if unicodedata.category(chr(code))[0] == "M":
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)


_LETTER = r"[^\W\d_]"
_MARKS = f"[{_mark_class()}]"
# Neither letter, digit, whitespace nor marker; ``_`` (a \w character) joins these runs too.
# The runs are unrolled (``x+(?:y+x*)*`` rather than ``(?:x|y)+``) because that halves the
# time of chunking a large corpus.
_SYMBOL = f"[^\\w\\s{SPACE}]"
CHUNK_PATTERN = re.compile(
    rf"""
      {SPACE}?{_LETTER}+(?:{_MARKS}+{_LETTER}*)*  # 2. a word (tried first: the commonest chunk)
    | [\r\n]                                    # 1. a line break, alone
    | {SPACE}?\d+                                # 3. a number
    | {SPACE}?(?:{_SYMBOL}+(?:_+{_SYMBOL}*)*      # 4. punctuation and symbols
               |_+(?:{_SYMBOL}+_*)*)
    | {SPACE}+(?![^\s{SPACE}])                   # 5. surplus markers
    | [^\S\r\n]+                                # 6. other whitespace
    """,
    re.VERBOSE,
)


def mark_spaces(normalized: str) -> str:
    """Replace each ASCII space with the visible marker ``▁`` (one code point for one)."""
    return normalized.replace(" ", SPACE)


def pre_tokenize(text: str) -> list[str]:
    """Normalize ``text`` to NFC, mark spaces with ``▁`` and split it into chunks."""
    return CHUNK_PATTERN.findall(mark_spaces(nfc(text)))


def chunk_matches(marked: str) -> Iterator[re.Match[str]]:
    """The chunks of already normalized, marked text, with their positions."""
    return CHUNK_PATTERN.finditer(marked)
