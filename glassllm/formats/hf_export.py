"""Export to a Hugging Face ``tokenizers`` file (``tokenizer.json``).

The same pipeline, spelled with Hugging Face's building blocks::

    normalizer     NFC, then Replace(" ", "▁")             (normalize, chunks.mark_spaces)
    pre_tokenizer  Split(chunk regex, "isolated")           (chunks.CHUNK_RULE)
    model          BPE: our vocabulary and merges in order  (bpe.apply_merges)
    decoder        ▁ → space, <unk> → ⁇, other specials → ""   (Tokenizer.decode)

The chunk rule is the delicate part. Hugging Face runs Oniguruma, not Python's ``re``,
and the two disagree on what ``\\w``, ``\\d`` and ``\\s`` mean. So the exported regex uses
no such shorthand: each character class of :data:`~glassllm.pipeline.chunks.CHUNK_RULE` is
computed here by running Python's own regex over every code point, and written out as
explicit code-point ranges. The structure (alternatives, greedy runs, the lookahead of
the surplus-marker rule) is the same in both engines.

The specials keep their IDs 0–3. ``<pad>``, ``<bos>`` and ``<eos>`` are special added
tokens; ``<unk>`` is the BPE model's unknown token, not an added token, so that
``decode`` shows it as ⁇ instead of skipping it. What still differs (docs/huggingface.md;
each pinned by a test): Hugging Face reads a literal ``<pad>``, ``<bos>`` or
``<eos>`` in the input as that special token, where glassllm spells it out (set
``encode_special_tokens = True`` on the loaded tokenizer to get glassllm's reading), and
a piece learned twice keeps only its first ID there, the one glassllm's encode gives.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from glassllm.formats.files import atomic_write_text
from glassllm.pipeline.bpe import Pair
from glassllm.pipeline.chunks import BLANK_CLASS, DIGIT_CLASS, INK_CLASS, LETTER_CLASS, MARK_CLASS, SPACE, SYMBOL_CLASS
from glassllm.pipeline.specials import UNK_TEXT

__all__ = ["chunk_regex", "hf_tokenizer_json", "save_hf"]

_ADDED_SPECIALS = ("<pad>", "<bos>", "<eos>")


def _code_points(python_class: str) -> list[tuple[int, int]]:
    """The code-point ranges Python's ``re`` matches with ``python_class`` (surrogates
    excluded: they cannot occur in the UTF-8 text Hugging Face reads)."""
    pattern = re.compile(f"{python_class}+")
    ranges: list[tuple[int, int]] = []
    for first, last in ((0, 0xD7FF), (0xE000, 0x10FFFF)):
        every = "".join(map(chr, range(first, last + 1)))
        ranges.extend((first + match.start(), first + match.end() - 1) for match in pattern.finditer(every))
    return ranges


def _onig_class(python_class: str) -> str:
    """``python_class`` as an Oniguruma class of explicit ``\\x{…}`` ranges."""
    parts = [f"\\x{{{a:X}}}" if a == b else f"\\x{{{a:X}}}-\\x{{{b:X}}}" for a, b in _code_points(python_class)]
    return "[" + "".join(parts) + "]"


@cache
def chunk_regex() -> str:
    """:data:`~glassllm.pipeline.chunks.CHUNK_RULE` in Oniguruma syntax, rule for rule."""
    letter = _onig_class(LETTER_CLASS)
    marks = _onig_class(MARK_CLASS)
    digit = _onig_class(DIGIT_CLASS)
    symbol = _onig_class(SYMBOL_CLASS)
    blank = _onig_class(BLANK_CLASS)
    ink = _onig_class(INK_CLASS)
    space = f"\\x{{{ord(SPACE):X}}}"
    return "|".join(
        [
            f"{space}?{letter}+(?:{marks}+{letter}*)*",  # 2. a word
            "[\\r\\n]",  # 1. a line break, alone
            f"{space}?{digit}+",  # 3. a number
            f"{space}?(?:{symbol}+(?:_+{symbol}*)*|_+(?:{symbol}+_*)*)",  # 4. punctuation and symbols
            f"{space}+(?!{ink})",  # 5. surplus markers
            f"{blank}+",  # 6. other whitespace
        ]
    )


def hf_tokenizer_json(vocab: Sequence[str], merges: Sequence[Pair]) -> dict[str, Any]:
    """The Hugging Face ``tokenizers`` serialization of a tokenizer's vocabulary (specials
    first) and merges in rank order: what ``tokenizer.json`` holds."""
    ids: dict[str, int] = {}
    for index, piece in enumerate(vocab):
        # A piece learned twice (``a+bc`` and ``ab+c``) keeps its first ID, as in glassllm.
        ids.setdefault(piece, index)
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": ids[special],
                "content": special,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for special in _ADDED_SPECIALS
        ],
        "normalizer": {
            "type": "Sequence",
            "normalizers": [
                {"type": "NFC"},
                {"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
            ],
        },
        "pre_tokenizer": {
            "type": "Split",
            "pattern": {"Regex": chunk_regex()},
            "behavior": "Isolated",
            "invert": False,
        },
        "post_processor": None,
        "decoder": {
            "type": "Sequence",
            "decoders": [
                {"type": "Replace", "pattern": {"String": SPACE}, "content": " "},
                {"type": "Replace", "pattern": {"String": "<unk>"}, "content": UNK_TEXT},
            ]
            + [{"type": "Replace", "pattern": {"String": special}, "content": ""} for special in _ADDED_SPECIALS],
        },
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": "<unk>",
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": ids,
            "merges": [list(pair) for pair in merges],
        },
    }


def save_hf(path: str | Path, vocab: Sequence[str], merges: Sequence[Pair]) -> None:
    """Write a Hugging Face ``tokenizer.json`` of ``vocab`` and ``merges`` (atomically;
    the destination is overwritten, parent folders must exist)."""
    contents = json.dumps(hf_tokenizer_json(vocab, merges), ensure_ascii=False, indent=1)
    atomic_write_text(path, contents + "\n", "tokenizer file")
