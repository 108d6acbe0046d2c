"""Stage 1 of the pipeline: Unicode NFC normalization, with a map back to the original text.

NFC can change lengths: ``"e" + U+0301`` becomes ``"é"`` (two code points → one), and a
few characters decompose (U+0958 → two code points). Every later stage works on the
normalized text, so this is the one stage that must remember where each normalized code
point came from. :func:`normalize_with_offsets` returns that memory as a boundary map.
"""

from __future__ import annotations

import itertools
import unicodedata

__all__ = ["common_prefix", "common_suffix", "nfc", "normalize_with_offsets"]


def nfc(text: str) -> str:
    """Return ``text`` in Unicode Normalization Form C."""
    return unicodedata.normalize("NFC", text)


def _segments(text: str) -> list[tuple[int, int]]:
    """Split ``text`` into spans that NFC normalizes independently of each other.

    A span starts at a starter (canonical combining class 0) and takes the non-starters
    after it. Two spans are joined when NFC composes across them (Hangul jamo, a few
    two-part vowels): the check is NFC itself, so no table of exceptions is needed.
    """
    starts = [0]
    for index in range(1, len(text)):
        if not unicodedata.combining(text[index]):
            starts.append(index)
    starts.append(len(text))
    spans: list[tuple[int, int]] = []
    for start, end in itertools.pairwise(starts):
        if spans:
            group_start, group_end = spans[-1]
            group, piece = text[group_start:group_end], text[start:end]
            if nfc(group + piece) != nfc(group) + nfc(piece):
                spans[-1] = (group_start, end)
                continue
        spans.append((start, end))
    return spans


def normalize_with_offsets(text: str) -> tuple[str, list[int] | None]:
    """Normalize ``text`` to NFC and map normalized boundaries back to ``text``.

    Returns ``(normalized, origin)``. ``origin`` has ``len(normalized) + 1`` entries:
    ``origin[k]`` is the offset in ``text`` of the boundary before normalized code point
    ``k``, so the normalized slice ``[a, b)`` came from ``text[origin[a]:origin[b]]``.
    Only what NFC changed shares offsets: code points it left in place keep their own
    (so a line's offsets never depend on the other lines). Within a changed run, the
    boundaries inside it map to the run's end: the first piece that touches the run
    covers all of it, and the others get empty spans there. ``origin`` is ``None`` when
    ``text`` is already NFC (the common case), meaning the identity map.
    """
    if unicodedata.is_normalized("NFC", text):
        return text, None
    parts: list[str] = []
    origin: list[int] = []
    for start, end in _segments(text):
        original = text[start:end]
        normalized = nfc(original)
        parts.append(normalized)
        if normalized == original:
            origin.extend(range(start, end))
            continue
        # What NFC changed lies between an unchanged head and tail ("a" + U+0308 + U+0301
        # becomes "ä" + U+0301: the acute keeps its own offset).
        head = common_prefix(original, normalized)
        tail = common_suffix(original, normalized, min(len(original), len(normalized)) - head)
        # Both changed middles stay non-empty, so every original code point is covered.
        tail = min(tail, len(original) - head - 1, len(normalized) - head - 1)
        origin.extend(range(start, start + head))
        origin.append(start + head)
        origin.extend([end - tail] * (len(normalized) - head - tail - 1))
        origin.extend(range(end - tail, end))
    origin.append(len(text))
    return "".join(parts), origin


def common_prefix(first: str, second: str) -> int:
    """How many code points ``first`` and ``second`` share at their start (a binary
    search, each step comparing in C only the part not compared yet: cheap on a line of
    megabytes too)."""
    low, high = 0, min(len(first), len(second))
    while low < high:
        middle = (low + high + 1) // 2
        if second.startswith(first[low:middle], low):
            low = middle
        else:
            high = middle - 1
    return low


def common_suffix(first: str, second: str, most: int) -> int:
    """How many code points (at most ``most``) ``first`` and ``second`` share at their end."""
    low, high = 0, most
    while low < high:
        middle = (low + high + 1) // 2
        if second.endswith(first[len(first) - middle : len(first) - low], 0, len(second) - low):
            low = middle
        else:
            high = middle - 1
    return low
