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
from itertools import pairwise

from glassllm.formats.charsmap import Charsmap

__all__ = ["SentencePieceNormalizer"]

SPACE = "\u2581"
_RUNS = re.compile(" +|[^ ]+")
_PAIRS_KEPT = 1 << 16  # pairs of characters whose check is kept (a bound on memory)


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
        self._plain_pairs: dict[tuple[str, str], bool] = {}  # see _plain_text

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
        return self._normalize_plain(text) if self._plain_text(text) else self._normalize_each(text)

    def _plain_text(self, text: str) -> bool:
        """Whether no key of the map and no user-defined piece starts anywhere in ``text``.
        A character that only opens longer keys (a letter, before a combining accent in
        NFKC's map) starts none unless the one after it goes on with one: checked once
        per distinct pair of characters."""
        characters = set(text)
        if all(map(self._opens_nothing, characters)):
            return True
        if self.charsmap is None or characters & self._user_firsts or not self._ends_nothing(text[-1]):
            return False
        return all(map(self._pair_opens_nothing, set(pairwise(text))))

    def _ends_nothing(self, character: str) -> bool:
        """Whether ``character``, last in a text, starts no key (none is it alone)."""
        return self._opens_nothing(character) or (
            self.charsmap is not None and self.charsmap.longest(character.encode("utf-8", "surrogatepass"), 0) is None
        )

    def _pair_opens_nothing(self, pair: tuple[str, str]) -> bool:
        found = self._plain_pairs.get(pair)
        if found is None:
            if len(self._plain_pairs) >= _PAIRS_KEPT:
                self._plain_pairs.clear()
            data = (pair[0] + pair[1]).encode("utf-8", "surrogatepass")
            found = self._opens_nothing(pair[0]) or not (self.charsmap and self.charsmap.opens_a_key(data))
            self._plain_pairs[pair] = found
        return found

    def _normalize_plain(self, text: str) -> tuple[str, list[int]]:
        """:meth:`_normalize_each`'s result for a text where no key or user-defined piece
        starts (most texts, see :meth:`_plain_text`): only its spaces change, so it goes a
        run of spaces or of other characters at a time instead of a character at a time."""
        space = SPACE if self.escape_whitespaces else " "
        if not self.remove_extra_whitespaces:
            if not text:
                return "", [0]
            prefix = [0] if self.add_dummy_prefix else []
            normalized = text.replace(" ", space) if self.escape_whitespaces else text
            return (space if self.add_dummy_prefix else "") + normalized, [*prefix, *range(len(text) + 1)]
        runs = [match.span() for match in _RUNS.finditer(text)]
        if runs and text[runs[0][0]] == " ":
            del runs[0]  # leading spaces go
        if not runs:
            return "", [0]
        parts: list[str] = [space] if self.add_dummy_prefix else []
        origin: list[int] = [runs[0][0]] if self.add_dummy_prefix else []
        for start, end in runs:
            if text[start] == " ":
                parts.append(space)  # a run of spaces is one
                origin.append(start)
            else:
                parts.append(text[start:end].replace(" ", space) if self.escape_whitespaces else text[start:end])
                origin.extend(range(start, end))
        return _without_trailing(space, "".join(parts), origin, len(text))

    def _normalize_each(self, text: str) -> tuple[str, list[int]]:
        """:meth:`normalize`, a character (or a key of the map) at a time."""
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
            return _without_trailing(space, normalized, origin, at)
        origin.append(at)
        return normalized, origin

    def _step(self, text: str, data: bytes, at: int, byte_at: int) -> tuple[str, int, int]:
        character = text[at]
        if self._opens_nothing(character):
            return character, 1, len(character.encode("utf-8", "surrogatepass")) if data else 0
        return self._prefix(text, data, at, byte_at)


def _without_trailing(space: str, normalized: str, origin: list[int], end: int) -> tuple[str, list[int]]:
    """``normalized`` without its trailing spaces (``▁`` when escaped), and ``origin``
    closed where the first of them came from (``end`` when there are none)."""
    kept = len(normalized.rstrip(space))
    if kept < len(normalized):
        end = origin[kept]
        normalized, origin = normalized[:kept], origin[:kept]
    origin.append(end)
    return normalized, origin
