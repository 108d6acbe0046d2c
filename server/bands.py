"""Semantic-token encoding of a document's tokens as alternating colored bands.

Every token becomes a semantic token of one of two standard types, alternating, so any
color theme paints the pieces as bands, like the web tokenizer playgrounds. Tokens never
cross a line break (chunks never do), so each line is encoded on its own: line endings
get no band, a piece that NFC left with no characters of its own is skipped, and the
alternation restarts on every line, so an edit never recolors the lines below it (and
``full/delta`` answers stay small). Lengths are in the negotiated encoding's units.
No pygls here: the data is LSP's relative integer encoding, five integers per token.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from glassllm import TokenSpan

from glassllm_server.positions import Encoding, columns_to_units, content_length

__all__ = ["BAND_LIMIT", "TOKEN_TYPES", "Band", "delta_edit", "encode_bands", "line_bands"]

# Two standard types that themes color differently: strings green and keywords bold in
# Neovim's default scheme, orange and blue in VS Code's Dark+.
TOKEN_TYPES = ["string", "keyword"]

# One answer carries at most this many bands (five integers each); a 7 MB document
# would otherwise mean a ~30 MB JSON message that editors choke on.
BAND_LIMIT = 200_000


Band = tuple[int, int, int]  # start and length in code units, token type (0 or 1)


def line_bands(text: str, spans: Sequence[TokenSpan], encoding: Encoding) -> list[Band]:
    """The bands of a line (its text with its ending), types alternating from 0."""
    content = content_length(text)
    bands: list[Band] = []
    if text.isascii() or encoding == "utf-32":
        for span in spans:
            if span.start < span.end <= content:
                bands.append((span.start, span.end - span.start, len(bands) & 1))
        return bands
    position = 0  # code units up to ``column``
    column = 0
    for span in spans:
        if not span.start < span.end <= content:
            continue
        gap = text[column : span.start]
        piece = text[span.start : span.end]
        position += columns_to_units(gap, len(gap), encoding)
        length = columns_to_units(piece, len(piece), encoding)
        bands.append((position, length, len(bands) & 1))
        position += length
        column = span.end
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


def delta_edit(old: Sequence[int], new: Sequence[int]) -> tuple[int, int, list[int]] | None:
    """The one edit ``(start, delete_count, data)`` that turns ``old`` into ``new``, or
    ``None`` when they are equal. Common prefix and suffix are kept, on whole tokens."""
    if len(old) == len(new) and old == new:
        return None
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    prefix -= prefix % 5
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    suffix -= suffix % 5
    return prefix, len(old) - prefix - suffix, list(new[prefix : len(new) - suffix])
