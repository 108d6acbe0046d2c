"""SentencePiece ``.model`` files of type BPE (Mistral v1 to v7, Llama 2), read without
the ``sentencepiece`` library.

A ``.model`` is a Protocol Buffers message (``ModelProto`` in SentencePiece's
``sentencepiece_model.proto``); :mod:`~glassllm.models.protobuf` reads the fields used
here: each piece with its score and type, the trainer's model type and ``byte_fallback``,
and the normalizer's name, ``add_dummy_prefix``, ``remove_extra_whitespaces`` and
``escape_whitespaces``.

Encoding, as SentencePiece's ``bpe_model.cc`` does it:

1. normalize: the ``identity`` rule only (other rules hold a compiled character map,
   which is refused with a clear error); spaces become ``▁``, and the text gets a leading
   ``▁`` (the dummy prefix: it stands for no character of the text, so its span is empty);
2. symbols: user-defined pieces (``[REF]``…) as one symbol each, otherwise one character;
3. merge the adjacent pair whose concatenation is a piece with the highest score (the
   leftmost among equals) until none is;
4. a final symbol that is no piece becomes its UTF-8 bytes, ``<0xE2>``… (byte fallback),
   each covering the character it belongs to; without byte fallback, ``<unk>``.

Merges never cross a point where a ``▁`` follows another character when no piece has
``▁`` after another character (true of every Mistral model: checked at load), so the
text is cut there into chunks and each chunk cached, as glassllm's own chunks are. Nor
do they cross a line break followed by a character that follows it in no piece (no
Mistral piece holds ``\n`` at all; ``\r`` is followed by another ``\r`` only): the text
is cut there too, so that chunks, like glassllm's own, stay within a line, and a document
can be tokenized line by line (:meth:`SentencePieceBPE.can_cut`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from glassllm.models.base import ChunkTokens, ModelTokenizer, as_ids
from glassllm.models.merging import Merge
from glassllm.models.protobuf import fields, float32, signed
from glassllm.problems import problem

__all__ = ["SentencePieceBPE", "is_sentencepiece", "load_sentencepiece"]

SPACE = "\u2581"
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
_BPE = 2
_MODEL_TYPES = {1: "unigram", 2: "BPE", 3: "word", 4: "char"}
_BYTE_PIECE = re.compile(r"<0x([0-9A-F]{2})>")
_CHUNK = re.compile(f"{SPACE}+[^{SPACE}]*|[^{SPACE}]+")


class SentencePieceBPE(ModelTokenizer):
    """A SentencePiece BPE model (see the module's docstring)."""

    kind = "SentencePiece BPE"
    priority_name = "score"
    unk_id: int

    def __init__(
        self,
        source: str,
        pieces: list[tuple[str, float, int]],
        *,
        byte_fallback: bool,
        dummy_prefix: bool,
        unk_id: int,
        bos_id: int,
        match_specials: bool = False,
    ) -> None:
        controls = {piece: index for index, (piece, _, kind) in enumerate(pieces) if kind == CONTROL}
        super().__init__(
            source,
            [piece for piece, _, _ in pieces],
            controls,
            match_specials=match_specials,
            around=((bos_id,) if 0 <= bos_id < len(pieces) else (), ()),
        )
        self.unk_id = unk_id
        self.byte_fallback = byte_fallback
        self.dummy_prefix = dummy_prefix
        # What merging may produce: normal and user-defined pieces (SentencePiece skips
        # unused ones); the score decides, the first ID of a repeated piece is its ID.
        self.ids: dict[str, int] = {}
        self.scores: dict[str, float] = {}
        for index, (piece, score, kind) in enumerate(pieces):
            if kind in (NORMAL, USER_DEFINED) and piece not in self.ids:
                self.ids[piece] = index
                self.scores[piece] = score
        self._bytes = {
            int(match[1], 16): index
            for index, (piece, _, kind) in enumerate(pieces)
            if kind == BYTE and (match := _BYTE_PIECE.fullmatch(piece))
        }
        user = sorted((piece for piece, _, kind in pieces if kind == USER_DEFINED), key=len, reverse=True)
        self._user = re.compile("|".join(map(re.escape, user))) if user else None
        self._chunked = not any(re.search(f"[^{SPACE}]{SPACE}", piece) for piece in self.ids)
        self._score_of = self.scores.get
        # What follows each line break inside a piece or a matched special: a merge can
        # join a line break only to one of those.
        self._followers: dict[str, frozenset[str]] = {
            ending: frozenset(
                text[index + 1]
                for text in (*self.ids, *self._matched)
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
        if not (self.dummy_prefix and at_start):
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
        return before.endswith(("\n", "\r")) and first not in self._followers[before[-1]]

    def _chunk_bounds(self, normalized: str) -> Iterable[tuple[int, int]]:
        if "\n" not in normalized and "\r" not in normalized:
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
        return [match.span() for match in _CHUNK.finditer(normalized, start, end)]

    def _chunk_texts(self, normalized: str) -> list[str]:
        if "\n" not in normalized and "\r" not in normalized:
            return _CHUNK.findall(normalized) if self._chunked else [normalized]
        return [normalized[start:end] for start, end in self._chunk_bounds(normalized)]

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

    def _rank(self, left: str, right: str) -> float | None:
        score = self._score_of(left + right)
        return None if score is None else -score

    def _step(self, merge: Merge) -> tuple[int, float | None]:
        result = merge.left + merge.right
        return self.ids[result], self.scores[result]

    def _tokens(self, chunk: str, pieces: list[str]) -> ChunkTokens:
        ids: list[int] = []
        shown: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        at = 0
        for piece in pieces:
            token_id = self.ids.get(piece)
            if token_id is not None:
                ids.append(token_id)
                shown.append(piece)
                starts.append(at)
                ends.append(at + len(piece))
            elif self.byte_fallback:
                # Each byte of each character is a token covering that character.
                for offset, character in enumerate(piece):
                    for byte in character.encode("utf-8", "replace"):
                        token_id = self._bytes[byte]
                        ids.append(token_id)
                        shown.append(self.vocab[token_id])
                        starts.append(at + offset)
                        ends.append(at + offset + 1)
            else:
                ids.append(self.unk_id)
                shown.append(piece)
                starts.append(at)
                ends.append(at + len(piece))
            at += len(piece)
        return ChunkTokens(tuple(ids), tuple(shown), tuple(starts), tuple(ends))

    def readable(self, piece: str) -> str:
        match = _BYTE_PIECE.fullmatch(piece)
        return f"<{match[1]}>" if match and piece not in self.ids else piece

    def decode(self, ids: Iterable[int]) -> str:
        data = bytearray()
        vocab, controls = self.vocab, self._special_ids
        for token_id in as_ids(ids):
            if token_id in controls:
                continue
            piece = vocab[token_id]
            match = _BYTE_PIECE.fullmatch(piece)
            if match and piece not in self.ids:
                data.append(int(match[1], 16))
            else:
                data.extend(piece.replace(SPACE, " ").encode("utf-8"))
        text = data.decode("utf-8", "replace")
        return text[1:] if self.dummy_prefix and text.startswith(" ") else text


def is_sentencepiece(data: bytes) -> bool:
    """Whether ``data`` parses as a SentencePiece ``ModelProto``: pieces that each have a
    text, and a trainer spec."""
    try:
        found = list(fields(data))
        pieces = [value for number, value in found if number == 1]
        if not pieces or not any(number == 2 for number, _ in found):
            return False
        return all(isinstance(piece, bytes) and isinstance(dict(fields(piece)).get(1), bytes) for piece in pieces)
    except ValueError:
        return False


def load_sentencepiece(path: str | Path, data: bytes, *, match_specials: bool = False) -> SentencePieceBPE:
    """A SentencePiece BPE model from the bytes ``data`` of the ``.model`` file at ``path``."""
    source = str(path)
    pieces: list[tuple[str, float, int]] = []
    trainer: dict[int, int | bytes] = {}
    normalizer: dict[int, int | bytes] = {}
    try:
        for number, value in fields(data):
            if number == 1 and isinstance(value, bytes):
                piece = dict(fields(value))
                text = piece.get(1, b"")
                kind = piece.get(3, NORMAL)
                if not isinstance(text, bytes) or not isinstance(kind, int):
                    raise ValueError("a piece is malformed")
                raw_score = piece.get(2, 0)
                pieces.append((text.decode("utf-8"), float32(raw_score) if isinstance(raw_score, int) else 0.0, kind))
            elif number == 2 and isinstance(value, bytes):
                trainer = dict(fields(value))
            elif number == 3 and isinstance(value, bytes):
                normalizer = dict(fields(value))
    except (ValueError, UnicodeDecodeError) as error:
        raise ValueError(f"{source}: not a SentencePiece model ({error})") from None
    if not pieces:
        raise ValueError(f"{source}: not a SentencePiece model (no pieces)")
    model_type = trainer.get(3, 1)
    if model_type != _BPE:
        name = _MODEL_TYPES.get(model_type, str(model_type)) if isinstance(model_type, int) else "?"
        raise problem(ValueError, "model.not_bpe", path=source, found=f"SentencePiece {name}")
    rule = normalizer.get(1, b"")
    rule = rule.decode("utf-8", "replace") if isinstance(rule, bytes) else ""
    if rule not in ("", "identity"):
        raise ValueError(f"{source}: the normalization rule {rule!r} is not supported (only 'identity')")
    if normalizer.get(4, 1):
        raise ValueError(f"{source}: remove_extra_whitespaces is not supported")
    if not normalizer.get(5, 1):
        raise ValueError(f"{source}: a model that keeps spaces unescaped is not supported")
    if trainer.get(24, 0):
        raise ValueError(f"{source}: treat_whitespace_as_suffix is not supported")
    unk, bos = trainer.get(40, 0), trainer.get(41, 1)
    return SentencePieceBPE(
        source,
        pieces,
        byte_fallback=bool(trainer.get(35, 0)),
        dummy_prefix=bool(normalizer.get(3, 1)),
        unk_id=signed(unk) if isinstance(unk, int) else 0,
        bos_id=signed(bos) if isinstance(bos, int) else -1,
        match_specials=match_specials,
    )
