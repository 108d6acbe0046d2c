"""Hugging Face's ``UnicodeScripts`` pre-tokenizer: a chunk ends where the Unicode script
changes.

The scripts are HF's own table, Unicode 9.0.0's ``Scripts.txt`` as its code embeds it,
shipped as ``glassllm/data/unicode_scripts.txt`` (Python's ``unicodedata`` has no script
property, and a newer Unicode would cut elsewhere). HF's fix-ups, from SentencePiece's
``IsValidSentencePiece``, are kept: Hiragana, Katakana and ``ー`` (U+30FC) count as Han, so
Japanese is not cut between its scripts; the space and code points unassigned in Unicode
9.0.0 have no script (HF's ``Any``): they never cut, belong to the chunk before them, and
before a text's first character with a script they belong to no chunk at all.
"""

from __future__ import annotations

from bisect import bisect_right
from functools import cache
from importlib.resources import files
from itertools import pairwise

__all__ = ["script_of", "split_scripts"]

# Spans of the normalized text, as glassllm.formats.hf_pre_tokenizers cuts them.
_Bounds = list[tuple[int, int]]
_AS_HAN = frozenset(("Hiragana", "Katakana"))


@cache
def _table() -> tuple[list[int], list[int], list[str]]:
    """Each range's first and last code point and its script, in order."""
    firsts: list[int] = []
    lasts: list[int] = []
    scripts: list[str] = []
    for line in (files("glassllm") / "data" / "unicode_scripts.txt").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            first, last, script = line.split()
            firsts.append(int(first, 16))
            lasts.append(int(last, 16))
            scripts.append(script)
    return firsts, lasts, scripts


def script_of(character: str) -> str | None:
    """The script HF's ``UnicodeScripts`` gives ``character`` (None: HF's ``Any``)."""
    if character == " ":
        return None
    if character == "\u30fc":
        return "Han"
    firsts, lasts, scripts = _table()
    code = ord(character)
    at = bisect_right(firsts, code) - 1
    if at < 0 or code > lasts[at]:
        return None
    return "Han" if scripts[at] in _AS_HAN else scripts[at]


def split_scripts(text: str, bounds: _Bounds) -> _Bounds:
    """Each span of ``text`` cut before every character whose script is not the last
    script seen; the characters with no script before the first with one are dropped."""
    cut: _Bounds = []
    for start, end in bounds:
        starts: list[int] = []
        last: str | None = None
        for index in range(start, end):
            script = script_of(text[index])
            if script is not None and script != last:
                starts.append(index)
                last = script
        starts.append(end)
        cut.extend(pairwise(starts))
    return cut
