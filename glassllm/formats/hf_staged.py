"""A Hugging Face pre-tokenizer ``Sequence`` with ``ByteLevel`` or ``Metaspace`` anywhere in
it, applied as HF applies it: step by step, each step to each split the steps before made.

Unlike the steps of :mod:`~glassllm.formats.hf_pre_tokenizers`, these two change each
split's text, so a split is its text and each character's place in the text as given
(``(start, end)``, as :mod:`~glassllm.formats.hf_normalizers` keeps it):

- ``ByteLevel``: with ``add_prefix_space``, a space before each split that does not open
  with one, in the place of its first character (HF's ``prepend``); with ``use_regex``,
  the split cut by GPT-2's pattern; then each piece's UTF-8 bytes as GPT-2's byte
  characters, each in the place of the character it is a byte of. (``trim_offsets`` is
  read by HF's post-processor only, never when pre-tokenizing.)
- ``Metaspace``: each space as the ``replacement`` (``▁``), then the replacement before a
  split that does not open with it: each split (``always``), or only the split that
  starts where the text does (``first``: HF checks the split's start in the original
  text), or none (``never``); with ``split``, cut before each replacement
  (``MergedWithNext``).

Empty splits are dropped after each step, as HF drops them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any

from glassllm.formats.byte_level import to_symbols
from glassllm.formats.hf_bpe import GPT2_PATTERN, Split
from glassllm.formats.hf_pre_tokenizers import PreTokenizer, build_pre_tokenizer
from glassllm.formats.metaspace import SPACE

__all__ = ["Piece", "Step", "changing_steps", "run_steps"]

# A split's text and each of its characters' place in the text as given.
Piece = tuple[str, list[tuple[int, int]]]
# One step on one split; the bool: the split's segment opens the text.
Step = Callable[[str, list[tuple[int, int]], bool], list[Piece]]


def _cut(cut: PreTokenizer, text: str, align: list[tuple[int, int]], opens: bool) -> list[Piece]:
    return [(text[start:end], align[start:end]) for start, end in cut(text, [(0, len(text))]) if start < end]


def _byte_level(prefix: bool, split: Split | None, text: str, align: list[tuple[int, int]], opens: bool) -> list[Piece]:
    if prefix and not text.startswith(" "):
        # HF aligns the space it adds with the character it comes before.
        text, align = " " + text, [align[0], *align]
    bounds = split.bounds(text, 0, len(text)) if split is not None else [(0, len(text))]
    pieces: list[Piece] = []
    for start, end in bounds:
        if start < end:
            part = text[start:end]
            widths = [len(character.encode("utf-8", "replace")) for character in part]
            placed = [pair for pair, width in zip(align[start:end], widths, strict=True) for _ in range(width)]
            pieces.append((to_symbols(part), placed))
    return pieces


def _metaspace(
    replacement: str, scheme: str, cut: re.Pattern[str] | None, text: str, align: list[tuple[int, int]], opens: bool
) -> list[Piece]:
    text = text.replace(" ", replacement)
    first = scheme == "always" or (scheme == "first" and opens and align[0][0] == 0)
    if first and not text.startswith(replacement):
        text, align = replacement + text, [align[0], *align]
    if cut is None:
        return [(text, align)]
    return [(text[start:end], align[start:end]) for start, end in (match.span() for match in cut.finditer(text))]


def _parts(spec: Any) -> list[Any]:
    if isinstance(spec, dict) and spec.get("type") == "Sequence":
        return [inner for part in spec.get("pretokenizers") or [] for inner in _parts(part)]
    return [spec]


def changing_steps(path: str, spec: Any) -> list[Step] | None:
    """The steps of a pre-tokenizer ``Sequence`` holding ``ByteLevel`` or ``Metaspace``, or
    of a ``Metaspace`` alone whose ``replacement`` is not ``▁`` (``None``: ``spec`` is
    neither); another step gets
    :func:`~glassllm.formats.hf_pre_tokenizers.build_pre_tokenizer`'s ``ValueError``."""
    if isinstance(spec, dict) and spec.get("type") == "Metaspace" and spec.get("replacement", SPACE) != SPACE:
        return [_metaspace_step(path, spec)]
    if not (isinstance(spec, dict) and spec.get("type") == "Sequence"):
        return None
    parts = _parts(spec)
    if not any(isinstance(part, dict) and part.get("type") in ("ByteLevel", "Metaspace") for part in parts):
        return None
    steps: list[Step] = []
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "ByteLevel":
            split = Split.of(GPT2_PATTERN, True) if part.get("use_regex", True) else None
            steps.append(partial(_byte_level, bool(part.get("add_prefix_space", True)), split))
        elif kind == "Metaspace":
            steps.append(_metaspace_step(path, part))
        else:
            steps.append(partial(_cut, build_pre_tokenizer(path, part)))
    return steps


def _metaspace_step(path: str, spec: dict[str, Any]) -> Step:
    scheme = spec.get("prepend_scheme") or ("always" if spec.get("add_prefix_space", True) else "never")
    replacement = spec.get("replacement", SPACE)
    if not (isinstance(replacement, str) and len(replacement) == 1) or scheme not in ("always", "first", "never"):
        raise ValueError(f"{path}: the Metaspace pre-tokenizer {spec!r:.120} is not supported")
    escaped = re.escape(replacement)
    cut = re.compile(f"{escaped}[^{escaped}]*|[^{escaped}]+") if spec.get("split", True) else None
    return partial(_metaspace, replacement, scheme, cut)


def run_steps(steps: list[Step], text: str, align: list[tuple[int, int]], opens: bool) -> list[Piece]:
    """The splits of ``text`` (its characters at ``align``) after every step, in order;
    ``opens``: ``text`` starts where the text as given does."""
    pieces: list[Piece] = [(text, align)] if text else []
    for step in steps:
        pieces = [found for piece in pieces for found in step(*piece, opens) if found[0]]
    return pieces
