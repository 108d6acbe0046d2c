"""Pre-tokenizer patterns of real models (``\\p{L}``, ``\\p{N}``, ``\\s``…) in Python's ``re``.

Llama 3, GPT-4o and Tekken cut text with a regular expression written for Oniguruma
(Hugging Face ``tokenizers``) or Rust's ``fancy-regex`` (tiktoken). Python's ``re`` has no
``\\p{…}`` and its ``\\s`` also matches U+001C…U+001F, which are not Unicode
``White_Space``. The ``regex`` package has ``\\p{…}``, but it is a compiled extension (one
wheel per platform), and glassllm stays pure Python so that one universal wheel serves
every machine and the VS Code extension. So each ``\\p{X}``, ``\\P{X}``, ``\\s`` and ``\\S``
is written out here as an explicit character class built from :mod:`unicodedata`, and the
rest of the pattern (possessive quantifiers, ``(?i:…)``, look-ahead) is already ``re``
syntax since Python 3.11.

The classes follow the Unicode version of the running Python's :mod:`unicodedata`;
characters assigned in a later version have no category here (docs/models.md says so).
"""

from __future__ import annotations

import re
import sys
import unicodedata
from functools import cache
from itertools import compress, islice, pairwise
from operator import ne

__all__ = ["ASTRAL", "UNICODE_VERSION", "compile_pattern", "looks_back"]

UNICODE_VERSION = unicodedata.unidata_version

# Planes 4 to 13 hold no assigned code point; skipping them makes the scan 3× faster.
_SCANNED = (range(0, 0x40000), range(0xE0000, sys.maxunicode + 1))
_LAST_SPACE = 0x3000  # the last White_Space character (U+3000 IDEOGRAPHIC SPACE)


@cache
def _categories() -> dict[str, list[tuple[int, int]]]:
    """Code point ranges of each two-letter general category (assigned characters only)."""
    ranges: dict[str, list[tuple[int, int]]] = {}
    for scanned in _SCANNED:
        # ``map`` over one string of every code point keeps the per-character work in C;
        # only the runs of one category are visited in Python.
        names = list(map(unicodedata.category, "".join(map(chr, scanned))))
        starts = [0, *compress(range(1, len(names)), map(ne, names, islice(names, 1, None))), len(names)]
        for start, end in pairwise(starts):
            name = names[start]
            if name != "Cn":
                ranges.setdefault(name, []).append((scanned.start + start, scanned.start + end - 1))
    return ranges


def _white_space() -> list[tuple[int, int]]:
    """Unicode's ``White_Space`` property: what ``str.isspace`` holds, but U+001C…U+001F."""
    spaces = [code for code in range(_LAST_SPACE + 1) if chr(code).isspace() and not 0x1C <= code <= 0x1F]
    return [(code, code) for code in spaces]


Ranges = list[tuple[int, int]]

_BMP_END = 0xFFFF
# A character past the Basic Multilingual Plane (an emoji, a historic script's letter).
ASTRAL = re.compile(f"[\\U00010000-\\U{sys.maxunicode:08X}]")


def _class_body(ranges: Ranges) -> str:
    def escape(code: int) -> str:
        return f"\\U{code:08X}" if code > 0xFFFF else f"\\u{code:04X}"

    return "".join(escape(a) if a == b else f"{escape(a)}-{escape(b)}" for a, b in ranges)


def _normalized(ranges: Ranges) -> Ranges:
    """``ranges`` sorted, with overlapping and touching ones joined."""
    joined: Ranges = []
    for low, high in sorted(ranges):
        if joined and low <= joined[-1][1] + 1:
            joined[-1] = (joined[-1][0], max(joined[-1][1], high))
        else:
            joined.append((low, high))
    return joined


def _complement(ranges: Ranges) -> Ranges:
    gaps: Ranges = []
    at = 0
    for low, high in _normalized(ranges):
        if low > at:
            gaps.append((at, low - 1))
        at = high + 1
    if at <= sys.maxunicode:
        gaps.append((at, sys.maxunicode))
    return gaps


def _clip(ranges: Ranges, low: int, high: int) -> Ranges:
    return [(max(a, low), min(b, high)) for a, b in ranges if a <= high and b >= low]


@cache
def _property(name: str) -> tuple[tuple[int, int], ...]:
    """The code point ranges of ``\\p{name}``: a general category (``L``, ``Lu``…)."""
    categories = _categories()
    if len(name) == 1:
        chosen = [ranges for category, ranges in categories.items() if category[0] == name]
        if not chosen:
            raise ValueError(f"unknown Unicode property \\p{{{name}}}")
        return tuple(_normalized([r for ranges in chosen for r in ranges]))
    if name in categories:
        return tuple(categories[name])
    raise ValueError(f"unknown or unsupported Unicode property \\p{{{name}}}")


def _class(ranges: Ranges, bmp_only: bool) -> str:
    """A ``re`` class for the code points of ``ranges``, fast to match (with
    ``bmp_only``: those of the Basic Multilingual Plane alone).

    ``re`` keeps the Basic Multilingual Plane part of a class as a bitmap, but tests the
    ranges beyond it one by one for every character the bitmap rejects: with ``\\p{L}``'s
    hundreds of astral ranges, a pattern ran 3× slower. So the astral part is its own
    class, tried only for an astral character. That costs a group around each class,
    which a run of it repeats per character: a class of the BMP alone is matched twice
    as fast, where the text has no astral character."""
    ranges = _normalized(ranges)
    bmp, astral = _clip(ranges, 0, _BMP_END), _clip(ranges, _BMP_END + 1, sys.maxunicode)
    if bmp_only:
        # A class that holds no BMP character matches none here: only astral ones.
        return f"[{_class_body(bmp)}]" if bmp else "[^\\x00-\\uFFFF]"
    if not astral or not bmp or astral == [(_BMP_END + 1, sys.maxunicode)]:
        return f"[{_class_body(ranges)}]"
    return f"(?:[{_class_body(bmp)}]|(?=[\\U00010000-\\U{sys.maxunicode:08X}])[{_class_body(astral)}])"


_ESCAPED = {"r": "\r", "n": "\n", "t": "\t", "f": "\f", "v": "\v", "0": "\0"}
_TOKEN = re.compile(r"\\[pP]\{(\w+)\}|\\[pP](\w)|\\[sSdDwW]|\\.|\[|.", re.DOTALL)
_CLASS_ITEM = re.compile(r"\\[pP]\{(\w+)\}|\\[pP](\w)|\\[sSdDwW]|\\(.)|([^\\\]])", re.DOTALL)


def _item(match: re.Match[str]) -> Ranges | None:
    """The code points of one item of a class, or ``None`` when it is not one of those
    written out here (then the class is left to ``re`` as it is)."""
    token = match.group()
    if token.startswith(("\\p", "\\P")):
        ranges = list(_property(match.group(1) or match.group(2)))
        return _complement(ranges) if token[1] == "P" else ranges
    if token[1:] in _SHORTHANDS:
        return _shorthand(token[1:])
    if match.group(3) is not None:
        escaped = match.group(3)
        if escaped in _ESCAPED:
            return _one(_ESCAPED[escaped])
        return _one(escaped) if not escaped.isalnum() else None
    return _one(match.group(4))


def _one(character: str) -> Ranges:
    return [(ord(character), ord(character))]


def _parse_class(pattern: str, start: int) -> tuple[Ranges, int] | None:
    """The code points of the class opening at ``pattern[start] == "["`` and where it
    ends; ``None`` when it holds something other than characters, escapes, ranges of
    plain characters, ``\\p{…}`` and ``\\s``."""
    at = start + 1
    negated = pattern.startswith("^", at)
    at += negated
    ranges: Ranges = []
    while at < len(pattern) and pattern[at] != "]":
        match = _CLASS_ITEM.match(pattern, at)
        if match is None:
            return None
        found = _item(match)
        if found is None:
            return None
        at = match.end()
        if pattern.startswith("-", at) and not pattern.startswith("-]", at) and len(found) == 1:
            upper = _CLASS_ITEM.match(pattern, at + 1)
            top = None if upper is None else _item(upper)
            if top is None or len(top) != 1 or found[0][0] != found[0][1] or top[0][0] != top[0][1]:
                return None
            found = [(found[0][0], top[0][0])]
            at = upper.end()  # type: ignore[union-attr]
        ranges.extend(found)
    if at >= len(pattern):
        return None
    return (_complement(ranges) if negated else ranges), at + 1


# Oniguruma's and Rust's Unicode meaning of the shorthands (``\\w``: letters, marks,
# decimal digits and connector punctuation).
_SHORTHANDS = {"s": ("White_Space",), "d": ("Nd",), "w": ("L", "M", "Nd", "Pc")}
_SHORTHANDS.update({name.upper(): parts for name, parts in list(_SHORTHANDS.items())})


def _shorthand(name: str) -> Ranges:
    """The code points of ``\\s``, ``\\d``, ``\\w`` or their negations ``\\S``, ``\\D``, ``\\W``."""
    parts = _SHORTHANDS[name]
    ranges = _white_space() if parts == ("White_Space",) else [r for part in parts for r in _property(part)]
    return _complement(ranges) if name.isupper() else ranges


def translate(pattern: str, bmp_only: bool = False) -> str:
    """``pattern`` with ``\\p{…}``, ``\\P{…}``, ``\\s`` and ``\\S`` (and the classes that hold
    them) as explicit classes of code points (of the Basic Multilingual Plane alone, with
    ``bmp_only``: the pattern for a text that holds no astral character)."""
    out: list[str] = []
    at = 0
    while at < len(pattern):
        if pattern[at] == "[":
            parsed = _parse_class(pattern, at)
            if parsed is None:
                raise ValueError(f"a character class that glassllm cannot read at offset {at}")
            ranges, at = parsed
            out.append(_class(ranges, bmp_only))
            continue
        match = _TOKEN.match(pattern, at)
        assert match is not None  # "." matches any one character
        token = match.group()
        at = match.end()
        if token.startswith(("\\p", "\\P")):
            ranges = list(_property(match.group(1) or match.group(2)))
            out.append(_class(_complement(ranges) if token[1] == "P" else ranges, bmp_only))
        elif token[1:] in _SHORTHANDS and token.startswith("\\"):
            out.append(_class(_shorthand(token[1:]), bmp_only))
        else:
            out.append(token)
    return "".join(out)


@cache
def compile_pattern(pattern: str, *, bmp_only: bool = False) -> re.Pattern[str]:
    """Compile a model's pre-tokenizer ``pattern`` (Oniguruma or Rust syntax) for ``re``;
    with ``bmp_only``, for texts that hold no character past the Basic Multilingual Plane
    (:data:`ASTRAL` finds none), where it matches as the whole pattern does, faster.

    Raises ``ValueError`` naming what ``re`` cannot read."""
    try:
        return re.compile(translate(pattern, bmp_only))
    except re.error as error:
        raise ValueError(f"cannot read the pre-tokenizer pattern {pattern!r:.120}: {error}") from None


_LOOKING_BACK = re.compile(r"\(\?<[=!]|\\[bBAG]|(?<![\[\\])\^")


def looks_back(pattern: re.Pattern[str]) -> bool:
    """Whether ``pattern`` can look behind where a match starts (a look-behind, ``\\b``,
    an anchor): then a text cannot be chunked from the middle as it is from the start."""
    return _LOOKING_BACK.search(pattern.pattern) is not None
