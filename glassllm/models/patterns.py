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

__all__ = ["UNICODE_VERSION", "compile_pattern"]

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


def _class_body(ranges: list[tuple[int, int]]) -> str:
    def escape(code: int) -> str:
        return f"\\U{code:08X}" if code > 0xFFFF else f"\\u{code:04X}"

    return "".join(escape(a) if a == b else f"{escape(a)}-{escape(b)}" for a, b in ranges)


@cache
def _property(name: str) -> str:
    """The class body (without brackets) of ``\\p{name}``: a category (``L``, ``Lu``…)."""
    categories = _categories()
    if len(name) == 1:
        chosen = [ranges for category, ranges in categories.items() if category[0] == name]
        if not chosen:
            raise ValueError(f"unknown Unicode property \\p{{{name}}}")
        merged = sorted(r for ranges in chosen for r in ranges)
    elif name in categories:
        merged = categories[name]
    else:
        raise ValueError(f"unknown or unsupported Unicode property \\p{{{name}}}")
    return _class_body(merged)


@cache
def _space() -> str:
    return _class_body(_white_space())


_TOKEN = re.compile(r"\\[pP]\{(\w+)\}|\\[pP](\w)|\\[sS]|\\.|\[|\]|.", re.DOTALL)


def translate(pattern: str) -> str:
    """``pattern`` with ``\\p{…}``, ``\\P{…}``, ``\\s`` and ``\\S`` as explicit classes."""
    out: list[str] = []
    in_class = False
    for match in _TOKEN.finditer(pattern):
        token = match.group()
        if token.startswith(("\\p", "\\P")):
            body = _property(match.group(1) or match.group(2))
            negated = token[1] == "P"
        elif token in ("\\s", "\\S"):
            body, negated = _space(), token == "\\S"
        else:
            if token == "[" and not in_class:
                in_class = True
            elif token == "]" and in_class and not out[-1].endswith("[") and out[-1] != "[^":
                in_class = False
            out.append(token)
            continue
        if in_class:
            if negated:
                raise ValueError(f"a negated class inside a character class is not supported: {token!r}")
            out.append(body)
        else:
            out.append(f"[{'^' if negated else ''}{body}]")
    return "".join(out)


@cache
def compile_pattern(pattern: str) -> re.Pattern[str]:
    """Compile a model's pre-tokenizer ``pattern`` (Oniguruma or Rust syntax) for ``re``.

    Raises ``ValueError`` naming what ``re`` cannot read."""
    try:
        return re.compile(translate(pattern))
    except re.error as error:
        raise ValueError(f"cannot read the pre-tokenizer pattern {pattern!r:.120}: {error}") from None
