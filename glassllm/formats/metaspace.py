"""What SentencePiece-style BPE shares, read from a ``.model`` or from a Hugging Face
``tokenizer.json`` converted from one (Llama 2, Mistral): spaces as ``▁``, a dummy prefix
``▁``, characters as the initial symbols, and byte fallback.

- Normalization: each space becomes ``▁``; a ``▁`` opens the text (the dummy prefix: it
  stands for no character of the text, so a token that is only that ``▁`` has an empty
  span where the text starts). A format says when (:attr:`MetaspaceModel.prefix`).
- Symbols: one per character (and one per user-defined piece, ``[REF]``…).
- Merging: by the format's rank (a piece's score, or a ``merges`` list), as
  :mod:`~glassllm.formats.merging` does for every format.
- Tokens: a final symbol that is no piece becomes its UTF-8 bytes, ``<0xE2>``… (byte
  fallback), each covering the character it belongs to; without byte fallback (or a
  byte piece missing), the unknown token (none where a file names none: HF drops the
  character then).

Merges never cross a point where a ``▁`` follows another character when no piece has
``▁`` after another character (true of every Mistral and Llama 2 model: checked at
load), so the text is cut there into chunks and each chunk cached, as glassllm's own
chunks are. Nor do they cross a line break followed by a character that follows it in no
piece (no Mistral piece holds ``\\n`` at all; ``\\r`` is followed by another ``\\r``
only): the text is cut there too, so that chunks, like glassllm's own, stay within a
line, and a document can be tokenized line by line (:meth:`MetaspaceModel.can_cut`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from enum import Enum

from glassllm.formats.model_tokenizer import ChunkTokens, ModelTokenizer
from glassllm.pipeline.tokens import as_ids

__all__ = ["BYTE_PIECE", "SPACE", "MetaspaceModel", "Prefix"]

SPACE = "\u2581"
BYTE_PIECE = re.compile(r"<0x([0-9A-F]{2})>")
# A run of ▁ and what follows it up to the next ▁, or text before the first ▁.
_CHUNK = re.compile(f"{SPACE}+[^{SPACE}]*|[^{SPACE}]+")
# Each ▁ opens a chunk of its own (HF's Metaspace with ``split``: ``MergedWithNext``).
_SPLIT_CHUNK = re.compile(f"{SPACE}[^{SPACE}]*|[^{SPACE}]+")


class Prefix(Enum):
    """Where a model puts its dummy prefix ``▁``."""

    NONE = "none"
    TEXT = "text"  # before the text (SentencePiece's add_dummy_prefix, HF's Metaspace "first")
    SEGMENT = "segment"  # before the text and after each matched special token (HF's Prepend)


class MetaspaceModel(ModelTokenizer):
    """A BPE model over characters with ``▁`` for spaces (see the module's docstring).

    ``pieces`` maps what merging may produce to its ID; ``bytes_`` each byte value to its
    ``<0xXX>`` piece's ID (byte fallback when ``byte_fallback``); ``user`` the pieces
    that are one symbol wherever they stand. ``prefix``: where the dummy prefix goes;
    ``prefix_over_space``: it goes even before a text that opens with a space (SentencePiece
    and HF's Prepend do; HF's Metaspace does not). ``split``: every ``▁`` opens a chunk.
    ``fuse_unk``: consecutive unknown characters are one unknown token (HF's ``fuse_unk``).
    """

    def __init__(
        self,
        source: str,
        vocab: list[str],
        specials: dict[str, int],
        *,
        pieces: dict[str, int],
        bytes_: dict[int, int],
        byte_fallback: bool,
        unk_id: int | None,
        prefix: Prefix,
        prefix_over_space: bool = True,
        split: bool = False,
        fuse_unk: bool = False,
        user: Sequence[str] = (),
        always_matched: dict[str, int] | None = None,
        match_specials: bool = False,
        around: tuple[Sequence[int], Sequence[int]] = ((), ()),
    ) -> None:
        super().__init__(
            source, vocab, specials, always_matched=always_matched, match_specials=match_specials, around=around
        )
        self.ids = pieces
        self.unk_id = unk_id
        self.byte_fallback = byte_fallback
        self.prefix = prefix
        self.dummy_prefix = prefix is not Prefix.NONE
        self._prefix_over_space = prefix_over_space
        self._segments_open = prefix is Prefix.SEGMENT
        self._fuse_unk = fuse_unk
        self._bytes = bytes_
        self._byte_ids = frozenset(bytes_.values())
        self._byte_pieces = frozenset(vocab[token_id] for token_id in bytes_.values())
        ordered = sorted(user, key=len, reverse=True)
        self._user = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        if split:
            self._chunk, self._chunked = _SPLIT_CHUNK, True
        else:
            self._chunk = _CHUNK
            self._chunked = not any(re.search(f"[^{SPACE}]{SPACE}", piece) for piece in pieces)
        # Unknown characters fused into one token may run across a line break that is no
        # piece and has no bytes to fall back on: then lines are never cut apart.
        self._line_cuts = byte_fallback or not fuse_unk or all(ending in pieces for ending in "\r\n")
        # What follows each line break inside a piece or a matched special: a merge can
        # join a line break only to one of those.
        self._followers: dict[str, frozenset[str]] = {
            ending: frozenset(
                text[index + 1]
                for text in (*pieces, *self._matched)
                for index in range(len(text) - 1)
                if text[index] == ending
            )
            for ending in "\r\n"
        }
        self._breaks = re.compile(
            "|".join(
                re.escape(ending) + (f"(?![{''.join(map(re.escape, sorted(after)))}])" if after else "")
                for ending, after in self._followers.items()
            )
        )

    def _normalize(self, text: str, at_start: bool) -> tuple[str, list[int] | None]:
        escaped = text.replace(" ", SPACE)
        if not (self.dummy_prefix and at_start) or (not self._prefix_over_space and escaped.startswith(SPACE)):
            return escaped, None
        # The dummy prefix stands for nothing: both its boundaries map to offset 0.
        return SPACE + escaped, [0, *range(len(text) + 1)]

    def can_cut(self, before: str, after: str) -> bool:
        """Whether ``before + after`` tokenizes as ``before`` then ``after`` continued: true
        where ``before`` ends with a line break that no piece joins to ``after``'s first
        character (the chunks are cut there too)."""
        if not after:
            return True
        first = SPACE if after[0] == " " else after[0]
        return self._line_cuts and before.endswith(("\n", "\r")) and first not in self._followers[before[-1]]

    def _chunk_bounds(self, normalized: str) -> Iterable[tuple[int, int]]:
        if not self._line_cuts or ("\n" not in normalized and "\r" not in normalized):
            return self._part_bounds(normalized, 0, len(normalized))
        bounds: list[tuple[int, int]] = []
        start = 0
        for match in self._breaks.finditer(normalized):
            bounds.extend(self._part_bounds(normalized, start, match.end()))
            start = match.end()
        bounds.extend(self._part_bounds(normalized, start, len(normalized)))
        return bounds

    def _part_bounds(self, normalized: str, start: int, end: int) -> list[tuple[int, int]]:
        if not self._chunked:
            return [(start, end)] if start < end else []
        return [match.span() for match in self._chunk.finditer(normalized, start, end)]

    def _chunk_texts(self, normalized: str) -> list[str]:
        if not self._line_cuts or ("\n" not in normalized and "\r" not in normalized):
            return self._chunk.findall(normalized) if self._chunked else [normalized]
        # The chunks of each stretch between line cuts found by findall, in C (the
        # pattern has no group and never matches empty), not from each match's span.
        texts: list[str] = []
        start = 0
        for end in [*(match.end() for match in self._breaks.finditer(normalized)), len(normalized)]:
            if not self._chunked:
                texts.extend([normalized[start:end]] if start < end else [])
            else:
                texts.extend(self._chunk.findall(normalized, start, end))
            start = end
        return texts

    def _symbols(self, chunk: str) -> list[str]:
        if self._user is None:
            return list(chunk)
        symbols: list[str] = []
        at = 0
        for match in self._user.finditer(chunk):
            symbols.extend(chunk[at : match.start()])
            symbols.append(match.group())
            at = match.end()
        symbols.extend(chunk[at:])
        return symbols

    def _tokens(self, chunk: str, pieces: list[str]) -> ChunkTokens:
        ids: list[int] = []
        shown: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        at = 0
        unknown = False  # the last token is unknown characters (fuse_unk extends it)
        for piece in pieces:
            token_id = self.ids.get(piece)
            if token_id is not None:
                ids.append(token_id)
                shown.append(piece)
                starts.append(at)
                ends.append(at + len(piece))
                unknown = False
            elif self.byte_fallback and all(byte in self._bytes for byte in piece.encode("utf-8", "replace")):
                # Each byte of each character is a token covering that character.
                for offset, character in enumerate(piece):
                    for byte in character.encode("utf-8", "replace"):
                        token_id = self._bytes[byte]
                        ids.append(token_id)
                        shown.append(self.vocab[token_id])
                        starts.append(at + offset)
                        ends.append(at + offset + 1)
                unknown = False
            elif unknown and self._fuse_unk:
                shown[-1] += piece
                ends[-1] = at + len(piece)
            elif self.unk_id is not None:  # without an unknown token, HF drops the character
                ids.append(self.unk_id)
                shown.append(piece)
                starts.append(at)
                ends.append(at + len(piece))
                unknown = True
            at += len(piece)
        return ChunkTokens(tuple(ids), tuple(shown), tuple(starts), tuple(ends))

    def derivation(self, piece: str) -> list[tuple[str, str, str]]:
        # A byte-fallback piece is never built by merges.
        return [] if piece in self._byte_pieces else super().derivation(piece)

    def readable(self, piece: str) -> str:
        match = BYTE_PIECE.fullmatch(piece)
        return f"<{match[1]}>" if match and piece in self._byte_pieces else piece

    def decode(self, ids: Iterable[int]) -> str:
        data = bytearray()
        vocab, controls = self.vocab, self._special_ids
        for token_id in as_ids(ids):
            if token_id in controls:
                continue
            match = BYTE_PIECE.fullmatch(vocab[token_id]) if token_id in self._byte_ids else None
            if match:
                data.append(int(match[1], 16))
            else:
                data.extend(vocab[token_id].replace(SPACE, " ").encode("utf-8"))
        text = data.decode("utf-8", "replace")
        return text[1:] if self.dummy_prefix and text.startswith(" ") else text
