"""Mistral's Tekken files: tiktoken-style byte ranks and the split pattern in one JSON.

    {"config": {"pattern": "...", "default_vocab_size": 131072,
                "default_num_special_tokens": 1000, "version": "v3", ...},
     "vocab": [{"rank": 0, "token_bytes": "AA==", "token_str": "\\u0000"}, ...],
     "special_tokens": [{"rank": 0, "token_str": "<unk>", "is_control": true}, ...]}

As ``mistral-common`` reads it: the first ``default_vocab_size −
default_num_special_tokens`` entries are the byte tokens, and a token's ID is its rank
plus ``default_num_special_tokens`` (the special tokens come first). A file without
``special_tokens`` (before v7) has mistral-common's twenty default ones; the remaining
special IDs are the fillers ``<SPECIAL_n>``. Chunks come from the ``pattern``; a chunk that
is a token as a whole is that token (tiktoken's rule); otherwise the adjacent pair whose
merged bytes have the lowest rank merges first. Encoding never adds ``<s>``: that is what
``around`` shows (mistral-common's ``encode(text, bos=True)``).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from glassllm.formats.byte_level import BYTE_SYMBOLS, ByteLevelModel
from glassllm.formats.hf_bpe import Split
from glassllm.formats.patterns import looks_back

__all__ = ["DEFAULT_SPECIALS", "Tekken", "is_tekken", "load_tekken"]

# mistral-common's special tokens for files that list none (its DEPRECATED_SPECIAL_TOKENS).
DEFAULT_SPECIALS = (
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
)


class Tekken(ByteLevelModel):
    """A Tekken tokenizer (see the module's docstring)."""

    kind = "Tekken (tiktoken-style ranks)"

    def __init__(
        self,
        source: str,
        tokens: list[str],
        specials: list[str],
        pattern: str,
        *,
        match_specials: bool = False,
    ) -> None:
        offset = len(specials)
        special_ids = {text: token_id for token_id, text in enumerate(specials)}
        bos = special_ids.get("<s>")
        super().__init__(
            source,
            specials + tokens,
            special_ids,
            match_specials=match_specials,
            around=(() if bos is None else (bos,), ()),
        )
        self.offset = offset
        self.ranks = {piece: rank for rank, piece in enumerate(tokens)}
        self.ids = {piece: rank + offset for piece, rank in self.ranks.items()}
        self._split = Split.of(pattern, keep_gaps=False)
        self._cuttable = not looks_back(self._split.pattern)
        self._rank_of = self.ranks.get
        self._merge_table = (self.ranks, "")

    def _chunk_bounds(self, normalized: str) -> Iterable[tuple[int, int]]:
        return self._split.bounds(normalized, 0, len(normalized))

    def _chunk_texts(self, normalized: str) -> list[str]:
        return self._split.texts(normalized)

    def _rank(self, left: str, right: str) -> float | None:
        return self._rank_of(left + right)

    def _whole(self, chunk: str, symbols: list[str]) -> int | None:
        return self.ids.get("".join(symbols)) if len(symbols) > 1 else None


def is_tekken(data: object) -> bool:
    """Whether parsed JSON ``data`` looks like a Tekken file (a config and a vocab list)."""
    return isinstance(data, dict) and isinstance(data.get("config"), dict) and isinstance(data.get("vocab"), list)


def load_tekken(path: str | Path, data: dict[str, Any], *, match_specials: bool = False) -> Tekken:
    """A Tekken tokenizer from the parsed JSON ``data`` read from ``path``."""
    source = str(path)
    config = data["config"]
    try:
        pattern = config["pattern"]
        vocab_size = int(config["default_vocab_size"])
        special_count = int(config["default_num_special_tokens"])
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(
            f"{source}: a Tekken config needs pattern, default_vocab_size and default_num_special_tokens ({error})"
        ) from None
    entries = data["vocab"]
    inner = vocab_size - special_count
    if not 256 <= inner <= len(entries):
        raise ValueError(f"{source}: {inner} byte tokens are asked for, the vocab has {len(entries)}")
    tokens = []
    for rank, entry in enumerate(entries[:inner]):
        try:
            raw = base64.b64decode(entry["token_bytes"], validate=True)
        except (KeyError, TypeError, binascii.Error):
            raise ValueError(f"{source}: vocab[{rank}] needs token_bytes in base64") from None
        if not raw or entry.get("rank") != rank:
            raise ValueError(f"{source}: vocab[{rank}] must have rank {rank} and at least one byte")
        tokens.append("".join(BYTE_SYMBOLS[byte] for byte in raw))
    listed = data.get("special_tokens")
    specials = list(DEFAULT_SPECIALS) if listed is None else [str(item["token_str"]) for item in listed]
    if len(specials) > special_count:
        raise ValueError(f"{source}: {len(specials)} special tokens for {special_count} special IDs")
    specials += [f"<SPECIAL_{index}>" for index in range(len(specials), special_count)]
    return Tekken(source, tokens, specials, pattern, match_specials=match_specials)
