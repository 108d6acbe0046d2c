"""SentencePiece's precompiled character map: the normalization rules (``nmt_nfkc``,
``nfkc``, ``nmt_nfkc_cf``, ``nfkc_cf`` or a custom one) compiled into a ``.model``'s
``normalizer_spec.precompiled_charsmap``, and into HF's ``Precompiled`` normalizer.

The blob is a little-endian ``uint32``, the size of the trie in bytes, then the trie,
then the replacements: UTF-8 strings, each ended by a NUL byte. The trie is a
darts-clone double array of ``uint32`` units whose keys are the UTF-8 bytes of what is
replaced; a key's value is the offset of its replacement in the strings. A unit holds:

- bits 0–7, the label: the byte that leads to it from its parent (bit 31 set: it is a
  value, not a node);
- bit 8: a key ends here (its value is in the unit at the node's offset);
- bits 10–31, the offset to its children (shifted 8 more bits left when bit 9 is set):
  the child for byte ``b`` is at ``position ^ offset ^ b``.

:meth:`Charsmap.prefixes` is darts' ``commonPrefixSearch``: every key that starts the
given bytes, shortest first, as SentencePiece and HF read the map.
"""

from __future__ import annotations

import sys
from array import array
from functools import lru_cache

__all__ = ["Charsmap"]

_VALUE_MASK = 0x7FFFFFFF
_LABEL_MASK = 0x800000FF


def _offset(unit: int) -> int:
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


class Charsmap:
    """A precompiled character map read from its blob (see the module's docstring).
    ``ValueError`` when the blob is not one; a key whose replacement lies outside the
    strings raises it when met (the map is not walked whole at load: it is large)."""

    def __init__(self, blob: bytes, where: str) -> None:
        if len(blob) <= 4:
            raise ValueError(f"{where}: the precompiled character map is too short")
        size = int.from_bytes(blob[:4], "little")
        if size >= len(blob) - 4 or size % 4 or size == 0:
            raise ValueError(f"{where}: the precompiled character map's trie size {size} does not fit its blob")
        self._units = array("I", blob[4 : 4 + size])
        if sys.byteorder == "big":  # the units are little-endian in the file
            self._units.byteswap()
        self._strings = blob[4 + size :]
        self._where = where
        self.replacement = lru_cache(maxsize=None)(self._replacement)

    def prefixes(self, data: bytes, start: int) -> list[tuple[int, int]]:
        """Every key that ``data[start:]`` opens with: ``(length in bytes, value)``, shortest
        first."""
        units = self._units
        count = len(units)
        found: list[tuple[int, int]] = []
        position = _offset(units[0])
        for index in range(start, len(data)):
            byte = data[index]
            position ^= byte
            if position >= count:
                break
            unit = units[position]
            if unit & _LABEL_MASK != byte:
                break
            position ^= _offset(unit)
            if position >= count:
                break
            if unit >> 8 & 1:
                found.append((index + 1 - start, units[position] & _VALUE_MASK))
        return found

    def opens_a_key(self, data: bytes) -> bool:
        """Whether some key starts ``data``, or starts with all of it (then the map must
        be searched wherever ``data`` stands)."""
        units = self._units
        count = len(units)
        position = _offset(units[0])
        for byte in data:
            position ^= byte
            if position >= count or units[position] & _LABEL_MASK != byte:
                return False
            unit = units[position]
            if unit >> 8 & 1:
                return True
            position ^= _offset(unit)
        return True

    def _replacement(self, value: int) -> str:
        """The replacement string at offset ``value`` (up to its NUL byte)."""
        end = self._strings.find(b"\0", value)
        if not 0 <= value < len(self._strings) or end < 0:
            raise ValueError(f"{self._where}: the precompiled character map points past its strings ({value})")
        try:
            return self._strings[value:end].decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{self._where}: the precompiled character map holds a string that is not UTF-8") from None

    def first(self, data: bytes) -> str | None:
        """The replacement of the shortest key that ``data`` opens with, as HF's
        ``Precompiled`` picks it; ``None``: none does."""
        found = self.prefixes(data, 0)
        return self.replacement(found[0][1]) if found else None

    def longest(self, data: bytes, start: int) -> tuple[int, str] | None:
        """The longest key that ``data[start:]`` opens with, as SentencePiece picks it:
        its length in bytes and its replacement; ``None``: none does."""
        found = self.prefixes(data, start)
        if not found:
            return None
        length, value = max(found, key=lambda pair: pair[0])
        return length, self.replacement(value)
