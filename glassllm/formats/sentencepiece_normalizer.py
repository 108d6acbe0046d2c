"""SentencePiece's normalizer, as its ``normalizer.cc`` runs it, with where each
normalized character came from.

From the start of the text, over and over: a user-defined piece (``[REF]``…) that starts
there, the longest, is kept as it is; otherwise the longest key of the precompiled
character map (:mod:`~glassllm.formats.charsmap`) that starts there is replaced; otherwise
one character is kept. Then, as the ``.model``'s ``normalizer_spec`` says:

- ``remove_extra_whitespaces``: spaces at the start and the end go, and a replacement's
  leading spaces go after one that ended with a space (runs of spaces become one);
- ``add_dummy_prefix``: a ``▁`` opens the text (none for a text that is only spaces);
- ``escape_whitespaces``: each space becomes ``▁``.

Each normalized character keeps the offset, in the text as given, of the stretch it was
made from (``norm_to_orig``); one more offset closes the text. A token over normalized
``[start, end)`` covers ``[origin[start], origin[end])``, as SentencePiece gives a
piece's ``begin`` and ``end``: the dummy prefix alone covers nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from glassllm.formats.charsmap import Charsmap

__all__ = ["SentencePieceNormalizer"]

SPACE = "\u2581"


class SentencePieceNormalizer:
    """A ``.model``'s normalizer (see the module's docstring); ``charsmap`` ``None``: the
    ``identity`` rule."""

    def __init__(
        self,
        charsmap: Charsmap | None,
        *,
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
        escape_whitespaces: bool,
        user: Sequence[str] = (),
    ) -> None:
        self.charsmap = charsmap
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces
        self.escape_whitespaces = escape_whitespaces
        ordered = sorted(user, key=len, reverse=True)
        self._user = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        self._user_firsts = frozenset(piece[0] for piece in ordered)
        # Characters that open no key of the map and no user-defined piece: kept as they are.
        self._plain: dict[str, bool] = {}

    def _opens_nothing(self, character: str) -> bool:
        found = self._plain.get(character)
        if found is None:
            data = character.encode("utf-8", "surrogatepass")
            found = character not in self._user_firsts and (
                self.charsmap is None or not self.charsmap.opens_a_key(data)
            )
            self._plain[character] = found
        return found

    def _prefix(self, text: str, data: bytes, at: int, byte_at: int) -> tuple[str, int, int]:
        """What normalizes the text at character ``at`` (byte ``byte_at``): the replacement,
        and how many characters and bytes it consumes."""
        if self._user is not None:
            match = self._user.match(text, at)
            if match:
                return match.group(), match.end() - at, len(match.group().encode("utf-8"))
        if self.charsmap is not None:
            found = self.charsmap.longest(data, byte_at)
            if found is not None:
                length, replacement = found
                consumed = data[byte_at : byte_at + length].decode("utf-8", "surrogatepass")
                return replacement, len(consumed), length
        return text[at], 1, len(text[at].encode("utf-8", "surrogatepass"))

    def normalize(self, text: str) -> tuple[str, list[int]]:
        """``text`` normalized, and each normalized character's offset in ``text`` with one
        more closing it (see the module's docstring)."""
        data = text.encode("utf-8", "surrogatepass") if self.charsmap is not None else b""
        at = byte_at = 0
        parts: list[str] = []
        origin: list[int] = []
        if self.remove_extra_whitespaces:
            while at < len(text):
                replacement, characters, length = self._step(text, data, at, byte_at)
                if replacement != " ":
                    break
                at, byte_at = at + characters, byte_at + length
        if at == len(text):  # nothing but spaces: SentencePiece's origins stop short
            return "", [0]
        space = SPACE if self.escape_whitespaces else " "
        if self.add_dummy_prefix:
            parts.append(space)
            origin.append(at)
        previous_space = self.remove_extra_whitespaces
        while at < len(text):
            replacement, characters, length = self._step(text, data, at, byte_at)
            if previous_space:
                replacement = replacement.lstrip(" ")
            if replacement:
                parts.append(replacement.replace(" ", space) if self.escape_whitespaces else replacement)
                origin.extend([at] * len(replacement))
                previous_space = replacement.endswith(" ")
            at, byte_at = at + characters, byte_at + length
            if not self.remove_extra_whitespaces:
                previous_space = False
        normalized = "".join(parts)
        if self.remove_extra_whitespaces:
            kept = len(normalized.rstrip(space))
            if kept < len(normalized):
                at = origin[kept]
                normalized, origin = normalized[:kept], origin[:kept]
        origin.append(at)
        return normalized, origin

    def _step(self, text: str, data: bytes, at: int, byte_at: int) -> tuple[str, int, int]:
        character = text[at]
        if self._opens_nothing(character):
            return character, 1, len(character.encode("utf-8", "surrogatepass")) if data else 0
        return self._prefix(text, data, at, byte_at)
