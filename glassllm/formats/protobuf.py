"""A small reader of the Protocol Buffers wire format, enough for SentencePiece's ``.model``.

A message is a run of fields, each a key (``field_number << 3 | wire_type``, a varint)
then its value: a varint (type 0), 8 bytes (1), a length and that many bytes (2: strings,
bytes, nested messages) or 4 bytes (5: ``float``, ``fixed32``). :func:`fields` yields them
in file order; the caller knows which number means what (from the ``.proto`` file).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

__all__ = ["fields", "float32", "signed"]

Value = int | bytes


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data):
            raise ValueError("truncated varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


def fields(data: bytes) -> Iterator[tuple[int, Value]]:
    """Each ``(field_number, value)`` of the message ``data``: an ``int`` for varint and
    fixed-width fields (a fixed32 as its raw unsigned value: see :func:`float32`), the
    ``bytes`` of a length-delimited one. Raises ``ValueError`` on malformed data."""
    at, end = 0, len(data)
    while at < end:
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ValueError("field number 0")
        if wire == 0:
            value, at = _varint(data, at)
            yield number, value
        elif wire == 2:
            length, at = _varint(data, at)
            if at + length > end:
                raise ValueError(f"field {number} runs past the end of its message")
            yield number, data[at : at + length]
            at += length
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            if at + width > end:
                raise ValueError(f"field {number} runs past the end of its message")
            yield number, int.from_bytes(data[at : at + width], "little")
            at += width
        else:
            raise ValueError(f"unsupported wire type {wire} (field {number})")


def float32(raw: int) -> float:
    """A ``float`` field's value from its raw 4 bytes as :func:`fields` gives them."""
    return struct.unpack("<f", raw.to_bytes(4, "little"))[0]


def signed(raw: int) -> int:
    """An ``int32``/``int64`` field's value (negative numbers are 10-byte varints)."""
    return raw - (1 << 64) if raw >= 1 << 63 else raw
