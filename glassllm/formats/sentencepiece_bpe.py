"""SentencePiece ``.model`` files of type BPE (Mistral v1 to v7, Llama 2), read without
the ``sentencepiece`` library; :func:`load_sentencepiece` reads a Unigram one too
(:mod:`~glassllm.formats.sentencepiece_unigram`).

A ``.model`` is a Protocol Buffers message (``ModelProto`` in SentencePiece's
``sentencepiece_model.proto``); :mod:`~glassllm.formats.protobuf` reads the fields used
here: each piece with its score and type, the trainer's model type and ``byte_fallback``,
and the normalizer's precompiled character map, ``add_dummy_prefix``,
``remove_extra_whitespaces`` and ``escape_whitespaces``.

Encoding, as SentencePiece's ``bpe_model.cc`` does it, is :mod:`~glassllm.formats.metaspace`'s:

1. normalize: spaces become ``▁``, and the text gets a leading ``▁`` (the dummy prefix);
   a rule other than ``identity`` (a precompiled character map) or extra spaces removed:
   SentencePiece's own normalizer (:mod:`~glassllm.formats.sentencepiece_normalizer`);
2. symbols: user-defined pieces (``[REF]``…) as one symbol each, otherwise one character;
3. merge the adjacent pair whose concatenation is a piece with the highest score (the
   leftmost among equals) until none is;
4. a final symbol that is no piece becomes its UTF-8 bytes, ``<0xE2>``… (byte fallback),
   each covering the character it belongs to; without byte fallback, ``<unk>``.

An explanation's step gives the merged piece's score (what ordered it) and its rank: the
piece's place among the model's pieces of two characters or more, highest score first (0:
the merge the model prefers to every other; pieces of equal score share a rank).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path
from typing import Any

from glassllm.formats.charsmap import Charsmap
from glassllm.formats.merging import Merge
from glassllm.formats.metaspace import BYTE_PIECE, MetaspaceModel, Prefix
from glassllm.formats.protobuf import fields, float32, signed
from glassllm.formats.sentencepiece_normalizer import SentencePieceNormalizer
from glassllm.formats.sentencepiece_unigram import UNK_SURFACE, Decoder, SentencePieceUnigram
from glassllm.shown.problems import problem

__all__ = ["SentencePieceBPE", "is_sentencepiece", "load_sentencepiece"]

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
_UNIGRAM, _BPE = 1, 2
_MODEL_TYPES = {1: "unigram", 2: "BPE", 3: "word", 4: "char"}


class SentencePieceBPE(MetaspaceModel):
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
        normalizers: tuple[SentencePieceNormalizer, SentencePieceNormalizer] | None = None,
        decoding: tuple[str, SentencePieceNormalizer | None] = (UNK_SURFACE, None),
        match_specials: bool = False,
    ) -> None:
        # What merging may produce: normal and user-defined pieces (SentencePiece skips
        # unused ones); the score decides, the first ID of a repeated piece is its ID.
        ids: dict[str, int] = {}
        self.scores: dict[str, float] = {}
        for index, (piece, score, kind) in enumerate(pieces):
            if kind in (NORMAL, USER_DEFINED) and piece not in ids:
                ids[piece] = index
                self.scores[piece] = score
        super().__init__(
            source,
            [piece for piece, _, _ in pieces],
            {piece: index for index, (piece, _, kind) in enumerate(pieces) if kind == CONTROL},
            pieces=ids,
            bytes_={
                int(match[1], 16): index
                for index, (piece, _, kind) in enumerate(pieces)
                if kind == BYTE and (match := BYTE_PIECE.fullmatch(piece))
            },
            byte_fallback=byte_fallback,
            unk_id=unk_id,
            prefix=Prefix.TEXT if dummy_prefix else Prefix.NONE,
            user=[piece for piece, _, kind in pieces if kind == USER_DEFINED],
            # SentencePiece gives unknown characters in a row one unknown piece.
            fuse_unk=True,
            match_specials=match_specials,
            around=((bos_id,) if 0 <= bos_id < len(pieces) else (), ()),
        )
        self._score_of = self.scores.get
        self._merge_table = ({piece: -score for piece, score in self.scores.items()}, "")
        # A rule other than identity with spaces kept (Mistral's, Llama 2's): SentencePiece's
        # normalizer, for the text's start and for a segment after a matched special token.
        self._normalizers = normalizers
        spec = (dummy_prefix, False) if normalizers is None else (dummy_prefix, normalizers[0].remove_extra_whitespaces)
        kinds = {
            kind: {index for index, (_, _, found) in enumerate(pieces) if found == kind} for kind in (CONTROL, UNKNOWN)
        }
        byte_ids = {index: byte for byte, index in self._bytes.items()}
        self._decoder = Decoder(self.vocab, kinds, byte_ids, decoding, spec)
        if normalizers is not None:
            # It may join lines (a line break made a space, extra spaces removed): the text
            # is never cut at one.
            self._line_cuts = False

    def _normalize(self, text: str, at_start: bool) -> tuple[str, list[int] | None]:
        if self._normalizers is None:
            return super()._normalize(text, at_start)
        return self._normalizers[0 if at_start else 1].normalize(text)

    def decode(self, ids: Iterable[int]) -> str:
        """The text of ``ids`` as SentencePiece's ``DecodeIds`` gives it (see
        :class:`~glassllm.formats.sentencepiece_unigram.Decoder`)."""
        return self._decoder.decode(ids)

    def _rank(self, left: str, right: str) -> float | None:
        score = self._score_of(left + right)
        return None if score is None else -score

    def _step(self, merge: Merge) -> tuple[int, float | None]:
        result = merge.left + merge.right
        score = self.scores[result]
        return bisect_left(self._descending_scores, -score), score

    @cached_property
    def _descending_scores(self) -> list[float]:
        """The scores of the pieces merging can produce (two characters or more),
        negated and sorted: a score's rank is where it falls in them."""
        return sorted(-score for piece, score in self.scores.items() if len(piece) > 1)


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


def _read(source: str, data: bytes) -> tuple[list[tuple[str, float, int]], list[dict[int, int | bytes]]]:
    """The pieces ``(text, score, type)`` of a ``ModelProto``, and its trainer,
    normalizer and denormalizer specs (field number → value)."""
    pieces: list[tuple[str, float, int]] = []
    specs: list[dict[int, int | bytes]] = [{}, {}, {}]
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
            elif number in (2, 3, 5) and isinstance(value, bytes):
                specs[(2, 3, 5).index(number)] = dict(fields(value))
    except (ValueError, UnicodeDecodeError) as error:
        raise ValueError(f"{source}: not a SentencePiece model ({error})") from None
    if not pieces:
        raise ValueError(f"{source}: not a SentencePiece model (no pieces)")
    return pieces, specs


def _normalizer(
    source: str, spec: dict[int, int | bytes], user: list[str], *, prefix: bool = True
) -> SentencePieceNormalizer:
    """A ``NormalizerSpec``'s normalizer (``prefix=False``: without the dummy prefix)."""
    blob = spec.get(2, b"")
    charsmap = Charsmap(blob, source) if isinstance(blob, bytes) and blob else None
    return SentencePieceNormalizer(
        charsmap,
        add_dummy_prefix=prefix and bool(spec.get(3, 1)),
        remove_extra_whitespaces=bool(spec.get(4, 1)),
        escape_whitespaces=bool(spec.get(5, 1)),
        user=user,
    )


def load_sentencepiece(
    path: str | Path, data: bytes, *, match_specials: bool = False
) -> SentencePieceBPE | SentencePieceUnigram:
    """A SentencePiece model, BPE or Unigram, from the bytes ``data`` of the ``.model``
    file at ``path``."""
    source = str(path)
    pieces, (trainer, normalizer, denormalizer) = _read(source, data)
    model_type = trainer.get(3, 1)
    if trainer.get(24, 0):
        raise ValueError(f"{source}: treat_whitespace_as_suffix is not supported")
    if model_type not in (_UNIGRAM, _BPE):
        name = _MODEL_TYPES.get(model_type, str(model_type)) if isinstance(model_type, int) else "?"
        raise problem(ValueError, "model.not_bpe", path=source, found=f"SentencePiece {name}")
    unk, bos, surface = trainer.get(40, 0), trainer.get(41, 1), trainer.get(44)
    user = [piece for piece, _, kind in pieces if kind == USER_DEFINED]
    options: dict[str, Any] = {
        "byte_fallback": bool(trainer.get(35, 0)),
        "unk_id": min(max(signed(unk), 0), len(pieces) - 1) if isinstance(unk, int) else 0,
        "bos_id": signed(bos) if isinstance(bos, int) else -1,
        "decoding": (
            surface.decode("utf-8", "replace") if isinstance(surface, bytes) else UNK_SURFACE,
            _normalizer(source, denormalizer, []) if denormalizer.get(2) else None,
        ),
        "match_specials": match_specials,
    }
    both = (_normalizer(source, normalizer, user), _normalizer(source, normalizer, user, prefix=False))
    if model_type == _UNIGRAM:
        return SentencePieceUnigram(source, pieces, normalizers=both, **options)
    if not normalizer.get(5, 1):
        raise ValueError(f"{source}: a model that keeps spaces unescaped is not supported")
    plain = not normalizer.get(2) and not normalizer.get(4, 1)
    dummy_prefix = bool(normalizer.get(3, 1))
    return SentencePieceBPE(source, pieces, dummy_prefix=dummy_prefix, normalizers=None if plain else both, **options)
