"""The four special tokens that open every vocabulary, and how ``decode`` shows ``<unk>``.

Their IDs are fixed, 0 to 3, whatever the alphabet and the merges: ``<pad>``, ``<unk>``
(a piece outside the vocabulary: there is no byte fallback), ``<bos>``, ``<eos>``.
Decoding shows ``<unk>`` as ⁇ (U+2047) and drops the other three.
"""

from __future__ import annotations

__all__ = ["BOS_ID", "EOS_ID", "PAD_ID", "SPECIALS", "UNK_ID", "UNK_TEXT"]

SPECIALS = ["<pad>", "<unk>", "<bos>", "<eos>"]
UNK_TEXT = "\u2047"
PAD_ID, UNK_ID, BOS_ID, EOS_ID = range(len(SPECIALS))
