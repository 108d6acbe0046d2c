"""Semantic-token encoding of a document's tokens as alternating colored bands.

Every token becomes a semantic token of one of two standard types, alternating, so any
color theme paints the pieces as bands, like the web tokenizer playgrounds. glassllm's
own tokens never cross a line break; a real model's that do (``".\n\n"``) are held by
each line in part (:mod:`glassllm_server.blocks`), so each line is encoded on its own:
line endings get no band (a band stops at the line's content), a piece that NFC left
with no characters of its own is skipped, a token that shares a character with the one
before it (a real model's piece holding part of a character's bytes) is left to that
one, as bands cannot overlap, and the
alternation restarts on every line, so an edit never recolors the lines below it (and
``full/delta`` answers stay small). Lengths are in the negotiated encoding's units.
No pygls here: the data is LSP's relative integer encoding, five integers per token.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from difflib import SequenceMatcher

from glassllm import Span
from glassllm_server.line_tokens import AnyLineTokens
from glassllm_server.positions import Encoding, columns_to_units, content_length

__all__ = ["BAND_LIMIT", "TOKEN_TYPES", "Band", "delta_edits", "encode_bands", "line_bands", "window_bands"]

# Two standard types that themes color differently: strings green and keywords bold in
# Neovim's default scheme, orange and blue in VS Code's Dark+.
TOKEN_TYPES = ["string", "keyword"]

# One answer carries at most this many bands (five integers each); a 7 MB document
# would otherwise mean a ~30 MB JSON message that editors choke on.
BAND_LIMIT = 200_000


Band = tuple[int, int, int]  # start and length in code units, token type (0 or 1)


def line_bands(text: str, spans: Sequence[Span], encoding: Encoding) -> list[Band]:
    """The bands of a line (its text with its ending), types alternating from 0."""
    if text.isascii() or encoding == "utf-32":
        content = content_length(text)
        bands: list[Band] = []
        covered = 0
        for span in spans:
            end = min(span.end, content)
            if covered <= span.start < end:
                bands.append((span.start, end - span.start, len(bands) & 1))
                covered = end
        return bands
    return _unit_bands(text, spans, 0, encoding)


def window_bands(text: str, tokens: AnyLineTokens, low: int, high: int, encoding: Encoding) -> list[Band]:
    """The bands of the tokens around columns ``low..high`` of a line that NFC left as
    it is (so every token up to the line ending has characters, and a band's type is
    its token's index in the line modulo 2, as in :func:`line_bands`).

    Costs the window, not the line: for a visible part of a very long line.
    """
    number, spans = tokens.window(low, high)
    return _unit_bands(text, spans, number, encoding)


def _unit_bands(text: str, spans: Sequence[Span], number: int, encoding: Encoding) -> list[Band]:
    """The bands of ``spans`` (contiguous, a line's from its token ``number`` on) in
    ``encoding``'s code units, measured from the first span's column."""
    content = content_length(text)
    bands: list[Band] = []
    if not spans:
        return bands
    column = spans[0].start
    position = columns_to_units(text, column, encoding)  # code units up to ``column``
    for span in spans:
        end = min(span.end, content)
        if not column <= span.start < end:
            continue
        gap = text[column : span.start]
        piece = text[span.start : end]
        position += columns_to_units(gap, len(gap), encoding)
        length = columns_to_units(piece, len(piece), encoding)
        bands.append((position, length, (number + len(bands)) & 1))
        position += length
        column = end
    return bands


def encode_bands(lines: Iterable[tuple[int, list[Band]]], limit: int = BAND_LIMIT) -> list[int]:
    """LSP semantic-token data for ``(line number, bands)`` in increasing line order.

    Stops before the line that would take it past ``limit`` bands."""
    data: list[int] = []
    previous_line = 0
    count = 0
    for line, bands in lines:
        if not bands:
            continue
        if count + len(bands) > limit:
            break
        previous_start = 0
        delta_line = line - previous_line
        for start, length, kind in bands:
            data += (delta_line, start - previous_start, length, kind, 0)
            delta_line = 0
            previous_start = start
        previous_line = line
        count += len(bands)
    return data


def delta_edits(old: Sequence[int], new: Sequence[int]) -> list[tuple[int, int, list[int]]]:
    """Edits ``(start, delete_count, data)`` that turn ``old`` into ``new``: in increasing
    order, each relative to ``old``, empty when they are equal.

    Lines are compared whole: a line's integers depend only on its bands and the gap to
    the line before, so an edit on one line costs one small edit, even when the answer
    was cut at :data:`BAND_LIMIT` and its last lines changed too.
    """
    old_lines, old_starts = _line_groups(old)
    new_lines, new_starts = _line_groups(new)
    # Common first and last lines are set aside before the (slower) general matching.
    first = 0
    while first < min(len(old_lines), len(new_lines)) and old_lines[first] == new_lines[first]:
        first += 1
    last = 0
    while (
        last < min(len(old_lines), len(new_lines)) - first
        and old_lines[len(old_lines) - 1 - last] == new_lines[len(new_lines) - 1 - last]
    ):
        last += 1
    matcher = SequenceMatcher(
        None, old_lines[first : len(old_lines) - last], new_lines[first : len(new_lines) - last], autojunk=False
    )
    edits = []
    for tag, old_from, old_to, new_from, new_to in matcher.get_opcodes():
        if tag == "equal":
            continue
        start, stop = old_starts[first + old_from], old_starts[first + old_to]
        edits.append((start, stop - start, list(new[new_starts[first + new_from] : new_starts[first + new_to]])))
    return edits


def _line_groups(data: Sequence[int]) -> tuple[list[tuple[int, ...]], list[int]]:
    """The integers of ``data`` grouped by line, and where each group starts (then the end)."""
    starts = [index for index in range(0, len(data), 5) if index == 0 or data[index]]
    starts.append(len(data))
    return [tuple(data[a:b]) for a, b in itertools.pairwise(starts)], starts
