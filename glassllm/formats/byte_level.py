"""Byte-level symbols: GPT-2's map of the 256 byte values to printable characters.

Byte-level BPE (GPT-2, Llama 3, GPT-4o, and tiktoken-style ranks such as Tekken) works on
UTF-8 bytes. ``tokenizer.json`` writes each byte as one printable character: the printable
Latin-1 bytes as themselves, the others (controls, the space, ``\\xad``…) as U+0100 and
up in order — so a space is ``Ġ`` (U+0120) and ``Ġthe`` is " the". glassllm keeps pieces
in that form (they are the vocabulary's entries) and shows them with :func:`readable`.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache, cached_property
from itertools import accumulate

from glassllm.formats.model_tokenizer import ChunkTokens, ModelTokenizer
from glassllm.pipeline.tokens import as_ids

__all__ = [
    "BYTE_CHARACTERS",
    "BYTE_SYMBOLS",
    "ByteLevelModel",
    "from_symbols",
    "readable",
    "readable_bytes",
    "to_symbols",
]


def _byte_symbols() -> list[str]:
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    symbols = {byte: chr(byte) for byte in printable}
    extra = 0
    for byte in range(256):
        if byte not in symbols:
            symbols[byte] = chr(256 + extra)
            extra += 1
    return [symbols[byte] for byte in range(256)]


BYTE_SYMBOLS = _byte_symbols()  # BYTE_SYMBOLS[b]: the character that stands for byte b
BYTE_CHARACTERS = frozenset(BYTE_SYMBOLS)  # a text of these alone is bytes written as symbols
_TO_SYMBOLS = {byte: symbol for byte, symbol in enumerate(BYTE_SYMBOLS)}
_TO_BYTES = {ord(symbol): byte for byte, symbol in enumerate(BYTE_SYMBOLS)}


def to_symbols(text: str) -> str:
    """``text``'s UTF-8 bytes, one byte-level character each (surrogates as ``U+FFFD``'s)."""
    return text.encode("utf-8", "replace").decode("latin-1").translate(_TO_SYMBOLS)


def from_symbols(symbols: str) -> bytes:
    """The bytes that byte-level ``symbols`` stand for (characters outside the map: their UTF-8)."""
    return b"".join(
        bytes((_TO_BYTES[ord(symbol)],)) if ord(symbol) in _TO_BYTES else symbol.encode("utf-8") for symbol in symbols
    )


@cache
def readable(piece: str) -> str:
    """A byte-level piece as the text it holds, spaces as ``▁`` as glassllm shows its own:
    ``readable("Ġthe") == "▁the"``; bytes that are only part of a character's UTF-8 as
    ``<E2><80>``."""
    return readable_bytes(from_symbols(piece))


def readable_bytes(data: bytes) -> str:
    """``data`` as text where it is whole UTF-8 characters, each other byte as ``<XX>``;
    spaces as ``▁``."""
    out: list[str] = []
    at = 0
    while at < len(data):
        for width in (1, 2, 3, 4):
            try:
                character = data[at : at + width].decode("utf-8")
            except UnicodeDecodeError:
                continue
            out.append(character.replace(" ", "\u2581"))
            at += width
            break
        else:
            out.append(f"<{data[at]:02X}>")
            at += 1
    return "".join(out)


class ByteLevelModel(ModelTokenizer):
    """What byte-level formats share: UTF-8 bytes as the initial symbols, pieces in
    GPT-2's byte-level form, offsets from bytes back to characters. A subclass sets
    ``ids`` (piece → ID) and ranks pairs."""

    ids: dict[str, int]

    def _symbols(self, chunk: str) -> list[str]:
        return list(to_symbols(chunk))

    def _symbols_of_piece(self, piece: str) -> list[str]:
        return list(piece)

    def _ids_of(self, chunk: str, pieces: list[str]) -> tuple[int, ...]:
        ids = tuple(map(self.ids.get, pieces))
        if None in ids:
            missing = pieces[ids.index(None)]
            raise ValueError(f"{self.source}: the piece {readable(missing)!r} is not in the vocabulary")
        return ids  # type: ignore[return-value]

    def _tokens(self, chunk: str, pieces: list[str]) -> ChunkTokens:
        starts, ends = char_ranges(chunk, list(map(len, pieces)))
        return ChunkTokens(self._ids_of(chunk, pieces), tuple(pieces), starts, ends)

    def _entry_of_ids(self, chunk: str, ids: tuple[int, ...]) -> ChunkTokens:
        pieces = self._pieces_by_id
        if pieces is None:
            return super()._entry_of_ids(chunk, ids)
        return self._tokens(chunk, list(map(pieces.__getitem__, ids)))

    @cached_property
    def _pieces_by_id(self) -> dict[int, str] | None:
        """Each ID's piece, where no two pieces share an ID (else a chunk is merged again)."""
        pieces = dict(zip(self.ids.values(), self.ids, strict=True))
        return pieces if len(pieces) == len(self.ids) else None

    def readable(self, piece: str) -> str:
        return piece if piece in self.specials or piece in self._matched else readable(piece)

    def decode(self, ids: Iterable[int]) -> str:
        vocab, specials = self.vocab, self._special_ids
        kept = [vocab[token_id] for token_id in as_ids(ids) if token_id not in specials]
        return from_symbols("".join(kept)).decode("utf-8", "replace")


def char_ranges(chunk: str, byte_lengths: list[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Character offsets in ``chunk`` of consecutive runs of its UTF-8 bytes: a run covers
    every character it holds a byte of."""
    if chunk.isascii():
        ends = tuple(accumulate(byte_lengths))
        return (0, *ends[:-1]), ends
    char_of_byte: list[int] = []
    for index, character in enumerate(chunk):
        char_of_byte.extend([index] * len(character.encode("utf-8", "replace")))
    starts, ends, at = [], [], 0
    for length in byte_lengths:
        starts.append(char_of_byte[at])
        ends.append(char_of_byte[at + length - 1] + 1)
        at += length
    return tuple(starts), tuple(ends)
