"""Hugging Face ``tokenizer.json`` normalizers, each keeping where every normalized
character came from in the text as given, as HF ``tokenizers`` aligns them.

An :data:`Aligned` text is the normalized characters and, for each, its ``(start, end)``
in the text as given. HF's rules, which the tests check character by character:

- a character a normalizer leaves or maps to one character keeps its alignment;
- characters it adds (a lowercase ``İ`` → ``i̇``, an NFD ``é`` → ``e`` + U+0301, ``ﬁ`` →
  ``fi``, a ``Replace``'s content, a ``Prepend``) take the alignment of the character
  they stand after (a ``Replace``: of the last character replaced; a ``Prepend``: of the
  first character);
- characters composed into one (NFC's ``e`` + U+0301 → ``é``) keep the first's;
- removed characters vanish.

:func:`build_normalizer` reads a ``normalizer`` object: ``NFC``, ``NFD``, ``NFKC``,
``NFKD``, ``Lowercase``, ``Strip``, ``StripAccents``, ``Replace`` (a string or a
regex), ``Prepend``, ``BertNormalizer`` and ``Sequence`` (an empty one too); any other
gets a ``ValueError`` that names it.
"""

from __future__ import annotations

import base64
import itertools
import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache, partial
from typing import Any

from glassllm.formats.charsmap import Charsmap
from glassllm.formats.patterns import compile_pattern
from glassllm.pipeline.normalize import common_prefix, common_suffix

__all__ = ["WHITE_SPACE", "Aligned", "Normalizer", "build_normalizer"]

Aligned = tuple[str, list[tuple[int, int]]]
Normalizer = Callable[[str, list[tuple[int, int]]], Aligned]

# Rust's char::is_whitespace (Unicode White_Space), which HF's Strip and splits use.
WHITE_SPACE = frozenset("\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000") | frozenset(
    map(chr, range(0x2000, 0x200B))
)
_MARKS = frozenset(("Mn", "Mc", "Me"))
_OTHER = frozenset(("Cc", "Cf", "Cn", "Co", "Cs"))
# The CJK blocks BERT puts spaces around (HF's is_chinese_char).
_CJK = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


def _unicode_form(form: str, text: str, align: list[tuple[int, int]]) -> Aligned:
    """``text`` in the Unicode form ``form``, run by run of characters it changes together.

    ASCII characters are left as they are and never change what is before or after them
    (see :func:`_segments`), so only the non-ASCII runs, each with the character before
    it (an accent's letter), go through the search for runs."""
    if unicodedata.is_normalized(form, text):  # type: ignore[arg-type]
        return text, align
    parts: list[str] = []
    aligned: list[tuple[int, int]] = []
    at = 0
    for match in _NOT_ASCII.finditer(text):
        start, end = max(match.start() - 1, at), match.end()
        parts.append(text[at:start])
        aligned.extend(align[at:start])
        normalized, moved = _unicode_form_run(form, text[start:end], align[start:end])
        parts.append(normalized)
        aligned.extend(moved)
        at = end
    parts.append(text[at:])
    aligned.extend(align[at:])
    return "".join(parts), aligned


_NOT_ASCII = re.compile(r"[^\x00-\x7f]+")


def _unicode_form_run(form: str, text: str, align: list[tuple[int, int]]) -> Aligned:
    """:func:`_unicode_form` of a stretch of text, a run at a time."""
    parts: list[str] = []
    aligned: list[tuple[int, int]] = []
    for start, end in _segments(form, text):
        original = text[start:end]
        normalized = unicodedata.normalize(form, original)  # type: ignore[arg-type]
        parts.append(normalized)
        if normalized == original:
            aligned.extend(align[start:end])
            continue
        head = common_prefix(original, normalized)
        tail = common_suffix(original, normalized, min(len(original), len(normalized)) - head)
        # What changed takes the alignments of the characters it came from, in order; the
        # characters added past them stand after the last one (HF's insertions).
        sources = align[start + head : end - tail] or [align[max(start + head - 1, start)]]
        aligned.extend(align[start : start + head])
        aligned.extend(sources[min(k, len(sources) - 1)] for k in range(len(normalized) - head - tail))
        aligned.extend(align[end - tail : end])
    return "".join(parts), aligned


def _segments(form: str, text: str) -> list[tuple[int, int]]:
    """Runs of ``text`` that ``form`` normalizes apart from each other (a starter and the
    marks after it, joined to the run before where normalizing them together differs)."""
    starts = [0, *(index for index in range(1, len(text)) if not unicodedata.combining(text[index])), len(text)]
    spans: list[tuple[int, int]] = []
    for start, end in itertools.pairwise(starts):
        # An ASCII character changes nothing before it: no composition takes one as its
        # second character, and its combining class 0 stops reordering (most of a text).
        if spans and not (end - start == 1 and text[start].isascii()):
            first, last = spans[-1]
            group, piece = text[first:last], text[start:end]
            together = unicodedata.normalize(form, group + piece)  # type: ignore[arg-type]
            apart = unicodedata.normalize(form, group) + unicodedata.normalize(form, piece)  # type: ignore[arg-type]
            if together != apart:
                spans[-1] = (first, end)
                continue
        spans.append((start, end))
    return spans


def _map_characters(mapping: Callable[[str], str], text: str, align: list[tuple[int, int]]) -> Aligned:
    """Each character replaced by ``mapping`` of it (none, one or several), added ones
    aligned with it."""
    mapped = list(map(mapping, text))
    if set(map(len, mapped)) <= {1}:
        return "".join(mapped), align
    aligned = [place for found, place in zip(mapped, align, strict=True) for _ in found]
    return "".join(mapped), aligned


def _lowercase(text: str, align: list[tuple[int, int]]) -> Aligned:
    # Character by character, as Rust's char::to_lowercase: no final-sigma rule.
    return _map_characters(str.lower, text, align)


def _keep(keep: Callable[[str], bool], text: str, align: list[tuple[int, int]]) -> Aligned:
    kept = [index for index, character in enumerate(text) if keep(character)]
    if len(kept) == len(text):
        return text, align
    return "".join(text[index] for index in kept), [align[index] for index in kept]


def _strip(left: bool, right: bool, text: str, align: list[tuple[int, int]]) -> Aligned:
    start, end = 0, len(text)
    while left and start < end and text[start] in WHITE_SPACE:
        start += 1
    while right and end > start and text[end - 1] in WHITE_SPACE:
        end -= 1
    return text[start:end], align[start:end]


def _replace(pattern: re.Pattern[str], content: str, text: str, align: list[tuple[int, int]]) -> Aligned:
    parts: list[str] = []
    aligned: list[tuple[int, int]] = []
    at = 0
    for match in pattern.finditer(text):
        start, end = match.span()
        if start == end:
            continue
        parts.append(text[at:start])
        aligned.extend(align[at:start])
        parts.append(content)
        aligned.extend([align[end - 1]] * len(content))
        at = end
    if not parts:
        return text, align
    parts.append(text[at:])
    aligned.extend(align[at:])
    return "".join(parts), aligned


def _prepend(prefix: str, text: str, align: list[tuple[int, int]]) -> Aligned:
    if not text:
        return text, align
    return prefix + text, [align[0]] * len(prefix) + align


# The per-character rules below are asked about every character of every text: each
# answer is kept (a bound: the characters of a few scripts).
_per_character = lru_cache(maxsize=1 << 16)


@_per_character
def _spaced_cjk(character: str) -> str:
    """A CJK ideograph between spaces (BERT's handle_chinese_chars), other characters as
    they are."""
    point = ord(character)
    return f" {character} " if any(low <= point <= high for low, high in _CJK) else character


@_per_character
def _not_mark(character: str) -> bool:
    return unicodedata.category(character) != "Mn"


@_per_character
def _bert_clean(character: str) -> str:
    """BERT's clean_text: NUL, U+FFFD and other controls go, whitespace becomes a space."""
    if character in "\t\n\r":
        return " "
    if character in "\x00\ufffd" or unicodedata.category(character) in _OTHER:
        return ""
    return " " if character in WHITE_SPACE else character


def _bert(spec: dict[str, Any]) -> list[Normalizer]:
    steps: list[Normalizer] = []
    if spec.get("clean_text", True):
        steps.append(partial(_map_characters, _bert_clean))
    if spec.get("handle_chinese_chars", True):
        steps.append(partial(_map_characters, _spaced_cjk))
    lowercase = spec.get("lowercase", True)
    strip_accents = spec.get("strip_accents")
    if lowercase if strip_accents is None else strip_accents:
        steps.append(partial(_unicode_form, "NFD"))
        steps.append(partial(_keep, _not_mark))
    if lowercase:
        steps.append(_lowercase)
    return steps


def _pattern(path: str, spec: dict[str, Any]) -> re.Pattern[str]:
    pattern = spec.get("pattern") or {}
    if isinstance(pattern.get("String"), str):
        return re.compile(re.escape(pattern["String"]))
    if isinstance(pattern.get("Regex"), str):
        return compile_pattern(pattern["Regex"])
    raise ValueError(f"{path}: the {spec.get('type')} pattern {pattern!r:.80} is not supported")


# HF's Nmt normalizer: the ASCII controls it drops, and what it makes a space.
_NMT_DROPPED = frozenset(map(chr, [*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F]))
_NMT_SPACES = frozenset(map(chr, [0x09, 0x0A, 0x0C, 0x0D, 0x1680, *range(0x200B, 0x2010), 0x2028, 0x2029, 0x2581])) | {
    "\ufeff",
    "\ufffd",
}


def _nmt(character: str) -> str:
    if character in _NMT_DROPPED:
        return ""
    return " " if character in _NMT_SPACES else character


# Unicode's grapheme cluster rules (UAX #29) as far as HF's Precompiled needs them: a
# cluster of under 6 bytes is looked up whole. Longer clusters (Hangul syllables from
# jamo, emoji sequences, flags) are looked up character by character, as single
# characters are, so those rules are not needed here.
_JOINS_PREVIOUS = frozenset(("Mn", "Me", "Mc"))
_JOINERS = frozenset("\u200c\u200d\u0e33\u0eb3\uff9e\uff9f") | frozenset(map(chr, range(0x1F3FB, 0x1F400)))
# Spacing marks that Unicode gives no cluster property (they do not join).
_LONE_MARKS = frozenset(
    map(
        chr,
        [
            *(0x102B, 0x102C, 0x1038, 0x1062, 0x1063, 0x1064, *range(0x1067, 0x106E), 0x1083, *range(0x1087, 0x108D)),
            *(0x108F, 0x109A, 0x109B, 0x109C, 0x1A61, 0x1A63, 0x1A64, 0xAA7B, 0xAA7D, 0x11720, 0x11721),
        ],
    )
)
_PREPEND = frozenset(
    map(
        chr,
        [
            *(*range(0x0600, 0x0606), 0x06DD, 0x070F, 0x0890, 0x0891, 0x08E2, 0x0D4E, 0x110BD, 0x110CD),
            *(0x111C2, 0x111C3, 0x11A3A, *range(0x11A84, 0x11A8A), 0x11D46, 0x11F02),
        ],
    )
)
_CONTROL_CATEGORIES = frozenset(("Cc", "Cf", "Zl", "Zp", "Cs"))


def _is_control(character: str) -> bool:
    return (
        unicodedata.category(character) in _CONTROL_CATEGORIES
        and character not in _JOINERS
        and character not in _PREPEND
    )


def _joins_previous(character: str) -> bool:
    if character in _JOINERS:
        return True
    return unicodedata.category(character) in _JOINS_PREVIOUS and character not in _LONE_MARKS


def _joins(last: str, character: str) -> bool:
    """Whether ``character`` continues the cluster that ``last`` ends."""
    if last == "\r":
        return character == "\n"
    if last == "\n" or _is_control(last):
        return False
    if _joins_previous(character):
        return True
    return last in _PREPEND and character not in "\r\n" and not _is_control(character)


def _graphemes(text: str) -> list[str]:
    """``text`` cut into grapheme clusters (see above for how far)."""
    clusters: list[str] = []
    for character in text:
        if clusters and _joins(clusters[-1][-1], character):
            clusters[-1] += character
        else:
            clusters.append(character)
    return clusters


def _precompiled(charsmap: Charsmap, text: str, align: list[tuple[int, int]]) -> Aligned:
    """HF's ``Precompiled``: each grapheme cluster of under 6 bytes that some key of the
    map starts is replaced whole by the shortest such key's replacement; other clusters,
    character by character. Placed as HF's ``NormalizedString::transform`` places them."""
    changes: list[tuple[str, int]] = []
    modified = False
    for cluster in _graphemes(text):
        if len(cluster.encode("utf-8", "surrogatepass")) < 6:
            found = charsmap.first(cluster.encode("utf-8", "surrogatepass"))
            if found is not None:
                modified = True
                _replaced(changes, cluster, found)
                continue
        for character in cluster:
            found = charsmap.first(character.encode("utf-8", "surrogatepass"))
            if found is None:
                changes.append((character, 0))
            else:
                modified = True
                _replaced(changes, character, found)
    if not modified:
        return text, align
    parts: list[str] = []
    aligned: list[tuple[int, int]] = []
    at = 0
    for character, change in changes:
        parts.append(character)
        if change > 0:  # added: where the character before it stands
            aligned.append(align[at - 1] if at >= 1 else (0, 0))
        else:  # in the place of the next one, and of -change more removed after it
            aligned.append(align[min(at, len(align) - 1)])
            at += 1 - change
    return "".join(parts), aligned


def _replaced(changes: list[tuple[str, int]], old: str, new: str) -> None:
    """HF's ``replace``: ``new``'s characters in the place of ``old``'s; the last ones
    added if longer, the last one removing the rest if shorter (the one before it, if
    ``new`` is empty)."""
    changes.extend((character, 0) for character in new)
    difference = len(new) - len(old)
    if difference > 0:
        for index in range(len(changes) - difference, len(changes)):
            changes[index] = (changes[index][0], 1)
    elif difference < 0 and changes:
        character, change = changes[-1]
        changes[-1] = (character, change + difference)


def _steps(path: str, spec: Any) -> list[Normalizer]:
    """The normalizers ``spec`` stands for, in order."""
    if not isinstance(spec, dict):
        raise ValueError(f"{path}: a normalizer must be an object, found {spec!r:.80}")
    kind = spec.get("type")
    if kind == "Sequence":
        return [step for part in spec.get("normalizers") or [] for step in _steps(path, part)]
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        return [partial(_unicode_form, kind)]
    if kind == "Lowercase":
        return [_lowercase]
    if kind == "Strip":
        return [partial(_strip, bool(spec.get("strip_left", True)), bool(spec.get("strip_right", True)))]
    if kind == "StripAccents":
        return [partial(_keep, lambda c: unicodedata.category(c) not in _MARKS)]
    if kind == "Replace" and isinstance(spec.get("content"), str):
        return [partial(_replace, _pattern(path, spec), spec["content"])]
    if kind == "Prepend" and isinstance(spec.get("prepend"), str):
        return [partial(_prepend, spec["prepend"])]
    if kind == "BertNormalizer":
        return _bert(spec)
    if kind == "Nmt":
        return [partial(_map_characters, _nmt)]
    if kind == "Precompiled" and isinstance(spec.get("precompiled_charsmap"), str):
        try:
            blob = base64.b64decode(spec["precompiled_charsmap"], validate=True)
        except ValueError:
            raise ValueError(f"{path}: the Precompiled normalizer's charsmap is not base64") from None
        return [partial(_precompiled, Charsmap(blob, path))] if blob else []
    raise ValueError(f"{path}: the normalizer {kind!r} is not supported")


def build_normalizer(path: str, spec: Any) -> Normalizer | None:
    """The normalizer of a ``tokenizer.json``'s ``normalizer`` object (``None``: there is
    none, or it has no steps)."""
    if spec is None:
        return None
    steps = _steps(path, spec)
    if not steps:
        return None

    def normalize(text: str, align: list[tuple[int, int]]) -> Aligned:
        for step in steps:
            text, align = step(text, align)
        return text, align

    return normalize
