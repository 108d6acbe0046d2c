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

:func:`chunk_text` runs stages 1 and 2 and keeps the way back: each chunk with its
offsets in the text as given (:func:`pre_tokenize` gives the chunks alone).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import cached_property

from glassllm.pipeline.normalize import nfc, normalize_with_offsets

__all__ = [
    "BLANK_CLASS",
    "CHUNK_FLAGS",
    "CHUNK_PATTERN",
    "CHUNK_RULE",
    "DIGIT_CLASS",
    "INK_CLASS",
    "LETTER_CLASS",
    "MARK_CLASS",
    "SPACE",
    "SYMBOL_CLASS",
    "ChunkedText",
    "chunk_text",
    "mark_spaces",
    "pre_tokenize",
]

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


# The character classes of the rule, in Python's ``re`` syntax (the Hugging Face export
# spells each of them out for Oniguruma, see :mod:`glassllm.formats.hf_export`).
LETTER_CLASS = r"[^\W\d_]"
MARK_CLASS = f"[{_mark_class()}]"
DIGIT_CLASS = r"\d"
# Neither letter, digit, whitespace nor marker; ``_`` (a \w character) joins these runs too.
SYMBOL_CLASS = f"[^\\w\\s{SPACE}]"
BLANK_CLASS = r"[^\S\r\n]"  # whitespace but line breaks
INK_CLASS = rf"[^\s{SPACE}]"  # anything but whitespace and markers
# The rule as written above, class for class: what counts files are stamped with and the
# Hugging Face export spells out (see :data:`CHUNK_PATTERN` for the pattern that runs).
# The runs of rule 4 are unrolled (``x+(?:y+x*)*`` rather than ``(?:x|y)+``) because that
# halves the time of chunking a large corpus.
CHUNK_RULE = rf"""
      {SPACE}?{LETTER_CLASS}+(?:{MARK_CLASS}+{LETTER_CLASS}*)*  # 2. a word (tried first: the commonest chunk)
    | [\r\n]                                         # 1. a line break, alone
    | {SPACE}?{DIGIT_CLASS}+                          # 3. a number
    | {SPACE}?(?:{SYMBOL_CLASS}+(?:_+{SYMBOL_CLASS}*)*  # 4. punctuation and symbols
               |_+(?:{SYMBOL_CLASS}+_*)*)
    | {SPACE}+(?!{INK_CLASS})                         # 5. surplus markers
    | {BLANK_CLASS}+                                  # 6. other whitespace
    """
CHUNK_FLAGS = re.VERBOSE


def _bmp_classes(*unions: tuple[str, ...]) -> list[str]:
    """For each tuple of ``unions``, the characters of the Basic Multilingual Plane that
    any of its classes matches, as one class of ranges: the regex engine tests those in a
    table in constant time, where a class of categories (``[^\\W\\d_]``) costs several
    lookups a character."""
    plane = "".join(map(chr, range(0x10000)))
    found = []
    for classes in unions:
        runs = re.finditer(f"(?:{'|'.join(classes)})+", plane)
        ends = ((re.escape(plane[run.start()]), re.escape(plane[run.end() - 1])) for run in runs)
        found.append("[" + "".join(first if first == last else f"{first}-{last}" for first, last in ends) + "]")
    return found


# Where no character past the Basic Multilingual Plane follows it, a word or a run of
# symbols is matched with table classes (the commonest chunks, a quarter of the time of
# chunking); otherwise the rule's own alternatives decide. Possessive, so that a run
# followed by such a character fails whole rather than matching a part of itself. A word
# or a symbol run starts with a character no other rule starts with, so trying these
# first changes no match.
_LETTERS, _WORD_CHARACTERS, _SYMBOLS = _bmp_classes((LETTER_CLASS,), (LETTER_CLASS, MARK_CLASS), (SYMBOL_CLASS, "_"))
_WORD_FAST = rf"{SPACE}?{_LETTERS}{_WORD_CHARACTERS}*+(?![\U00010000-\U0010ffff])"
_SYMBOLS_FAST = rf"{SPACE}?{_SYMBOLS}++(?![\U00010000-\U0010ffff])"
CHUNK_PATTERN = re.compile(f"{_WORD_FAST} | {_SYMBOLS_FAST} | {CHUNK_RULE}", CHUNK_FLAGS)


def mark_spaces(normalized: str) -> str:
    """Replace each ASCII space with the visible marker ``▁`` (one code point for one)."""
    return normalized.replace(" ", SPACE)


def pre_tokenize(text: str) -> list[str]:
    """Normalize ``text`` to NFC, mark spaces with ``▁`` and split it into chunks."""
    return chunk_text(text).chunks


def chunk_text(text: str) -> ChunkedText:
    """``text`` through stages 1 and 2: NFC, ``▁`` for spaces, the chunk rule; with the
    way back from each chunk to where it lies in ``text``."""
    return ChunkedText(text)


class ChunkedText:
    """A text cut into chunks, and where each chunk lies in the text as given.

    ``chunks`` tile the normalized text with its spaces marked: ``"".join(chunks) ==
    mark_spaces(nfc(text))``. ``origin`` is NFC's boundary map from normalized offsets
    back to ``text`` (see :func:`~glassllm.pipeline.normalize.normalize_with_offsets`), ``None``
    when NFC changed nothing; it is computed only when asked, as encoding needs the
    chunks alone.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.normalized = nfc(text)
        self.chunks: list[str] = CHUNK_PATTERN.findall(mark_spaces(self.normalized))

    @cached_property
    def origin(self) -> list[int] | None:
        """``origin[k]``: the offset in ``text`` of the boundary before normalized code point ``k``."""
        return None if self.normalized == self.text else normalize_with_offsets(self.text)[1]

    def spans(self) -> Iterator[tuple[str, int, int]]:
        """Each chunk with its code-point offsets ``[start, end)`` in the text as given.

        Where NFC merged code points into one, the chunk holding it covers all of them."""
        origin = self.origin
        start = 0
        for chunk in self.chunks:
            end = start + len(chunk)
            yield (chunk, start, end) if origin is None else (chunk, origin[start], origin[end])
            start = end
