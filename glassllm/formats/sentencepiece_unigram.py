"""SentencePiece ``.model`` files of type Unigram (T5, XLM-R, ALBERT, mBART and the models
trained with ``spm_train``'s default), read without the ``sentencepiece`` library.

Encoding, as SentencePiece's ``unigram_model.cc`` (``EncodeOptimized``) does it:

1. normalize with the model's own rule (:mod:`~glassllm.formats.sentencepiece_normalizer`:
   its precompiled character map, extra spaces removed, spaces as ``▁``, the dummy prefix);
2. cut the normalized text where the sum of its pieces' scores is highest (Viterbi):
   normal and user-defined pieces (a user-defined one scores its length in bytes times the
   highest score, less 0.1, so that it is always taken), a character that is no piece the
   lowest score less 10 (in 32 bits, as SentencePiece computes it) as the unknown piece;
   a later candidate wins only with a strictly higher total. SentencePiece searches the
   whole text at once; where no piece holds a ``▁`` after another character (models
   trained with ``split_by_whitespace``, the default), no piece crosses the start of a
   run of ``▁``, so the text is cut there into chunks, each searched (and cached) alone,
   with the same result;
3. an unknown character becomes its UTF-8 bytes, ``<0xE2>``…, with byte fallback;
   without it, unknown characters in a row are one unknown token.

A token covers the characters of the text as given that its normalized characters came
from (SentencePiece's ``begin``/``end``); the dummy prefix alone covers nothing; each
byte of a character's byte fallback covers that character.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable, Sequence
from functools import partial
from typing import NamedTuple

from glassllm.formats.hf_word_models import Lattice, best_paths, path_through, unigram_search
from glassllm.formats.model_tokenizer import ChunkTokens, ModelTokenizer
from glassllm.formats.sentencepiece_normalizer import SPACE, SentencePieceNormalizer
from glassllm.pipeline.tokens import as_ids

__all__ = ["Decoder", "SentencePieceUnigram", "UnigramPath"]

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
_FLOAT = struct.Struct("<f")
# What SentencePiece decodes an unknown piece to, unless the model says otherwise.
UNK_SURFACE = " \u2047 "
_FLT_MIN = 1.1754943508222875e-38  # SentencePiece's starting highest score (FLT_MIN)


def f32(value: float) -> float:
    """``value`` rounded to a 32-bit ``float``, as SentencePiece computes in ``float``."""
    return _FLOAT.unpack(_FLOAT.pack(value))[0]


class UnigramPath(NamedTuple):
    """One way to cut a chunk into pieces: each piece (an unknown character as itself),
    its score and the path's total."""

    pieces: list[str]
    scores: list[float]
    total: float


class SentencePieceUnigram(ModelTokenizer):
    """A SentencePiece Unigram model (see the module's docstring)."""

    kind = "SentencePiece Unigram"
    priority_name = "score"
    _cuttable = False
    unk_id: int

    def __init__(
        self,
        source: str,
        pieces: Sequence[tuple[str, float, int]],
        *,
        normalizers: tuple[SentencePieceNormalizer, SentencePieceNormalizer],
        byte_fallback: bool,
        unk_id: int,
        bos_id: int,
        decoding: tuple[str, SentencePieceNormalizer | None] = (UNK_SURFACE, None),
        match_specials: bool = False,
    ) -> None:
        super().__init__(
            source,
            [piece for piece, _, _ in pieces],
            {piece: index for index, (piece, _, kind) in enumerate(pieces) if kind == CONTROL},
            match_specials=match_specials,
            around=((bos_id,) if 0 <= bos_id < len(pieces) else (), ()),
        )
        # For the text's start, and for a segment after a matched special token (no dummy prefix).
        self.normalizer, self._continuing = normalizers
        self.ids: dict[str, int] = {}
        for index, (piece, _, kind) in enumerate(pieces):
            if kind in (NORMAL, USER_DEFINED) and piece not in self.ids:
                self.ids[piece] = index
        self.scores = [score for _, score, _ in pieces]
        normal = [score for _, score, kind in pieces if kind == NORMAL]
        self.unknown_score = f32(min(normal, default=0.0) - 10.0)
        highest = max([_FLT_MIN, *normal])
        for piece, index in self.ids.items():
            if pieces[index][2] == USER_DEFINED:
                self.scores[index] = f32(len(piece.encode("utf-8")) * highest) - 0.1
        self.unk_id = unk_id
        self.byte_fallback = byte_fallback
        self._bytes = {
            int(piece[3:5], 16): index
            for index, (piece, _, kind) in enumerate(pieces)
            if kind == BYTE and len(piece) == 6 and piece.startswith("<0x")
        }
        self._byte_ids = {index: byte for byte, index in self._bytes.items()}
        self._byte_pieces = frozenset(self.vocab[index] for index in self._byte_ids)
        self._decoder = Decoder(
            self.vocab,
            {
                piece_type: {index for index, (_, _, kind) in enumerate(pieces) if kind == piece_type}
                for piece_type in (CONTROL, UNKNOWN)
            },
            self._byte_ids,
            decoding,
            (self.normalizer.add_dummy_prefix, self.normalizer.remove_extra_whitespaces),
        )
        self._longest = max((len(piece) for piece in self.ids), default=1)
        # A run of ▁ and what follows it up to the next, or the text before the first:
        # chunks no piece crosses (see the module's docstring).
        crossing = any(re.search(f"[^{SPACE}]{SPACE}", piece) for piece in self.ids)
        self._chunk = None if crossing else re.compile(f"{SPACE}+[^{SPACE}]*|[^{SPACE}]+")

    def _normalize(self, text: str, at_start: bool) -> tuple[str, list[int] | None]:
        return (self.normalizer if at_start else self._continuing).normalize(text)

    def _chunk_bounds(self, normalized: str) -> Iterable[tuple[int, int]]:
        if self._chunk is None:
            return [(0, len(normalized))] if normalized else []
        return [match.span() for match in self._chunk.finditer(normalized)]

    def _chunk_texts(self, normalized: str) -> list[str]:
        if self._chunk is None:
            return [normalized] if normalized else []
        return self._chunk.findall(normalized)

    def _symbols(self, chunk: str) -> list[str]:
        return [chunk]

    def _rank(self, left: str, right: str) -> float | None:
        return None

    def _best(self, chunk: str) -> list[tuple[int, int, int | None]]:
        """The best cut of ``chunk``: each piece's ``(start, end, ID)`` (``None``: an
        unknown character), as SentencePiece's ``EncodeOptimized`` finds it."""
        size = len(chunk)
        totals = [0.0] * (size + 1)
        starts = [-1] * (size + 1)
        found: list[int | None] = [None] * (size + 1)
        get, scores, unknown = self.ids.get, self.scores, self.unknown_score
        for start in range(size):
            base = totals[start]
            single = False
            for end in range(start + 1, min(size, start + self._longest) + 1):
                token_id = get(chunk[start:end])
                if token_id is None:
                    continue
                candidate = scores[token_id] + base
                if starts[end] == -1 or candidate > totals[end]:
                    totals[end], starts[end], found[end] = candidate, start, token_id
                single = single or end == start + 1
            if not single:
                candidate = unknown + base
                if starts[start + 1] == -1 or candidate > totals[start + 1]:
                    totals[start + 1], starts[start + 1], found[start + 1] = candidate, start, None
        cut: list[tuple[int, int, int | None]] = []
        end = size
        while end > 0:
            cut.append((starts[end], end, found[end]))
            end = starts[end]
        return cut[::-1]

    def _tokens(self, chunk: str, pieces: list[str]) -> ChunkTokens:
        ids: list[int] = []
        shown: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        unknown = False  # the last token is unknown characters (a run of them is one)
        for start, end, token_id in self._best(chunk):
            piece = chunk[start:end]
            if token_id is not None:
                ids.append(token_id)
            elif self.byte_fallback and all(byte in self._bytes for byte in piece.encode("utf-8")):
                for byte in piece.encode("utf-8"):
                    ids.append(self._bytes[byte])
                    shown.append(self.vocab[self._bytes[byte]])
                    starts.append(start)
                    ends.append(end)
                unknown = False
                continue
            elif unknown:
                shown[-1] += piece
                ends[-1] = end
                continue
            else:
                ids.append(self.unk_id)
            shown.append(piece)
            starts.append(start)
            ends.append(end)
            unknown = token_id is None
        return ChunkTokens(tuple(ids), tuple(shown), tuple(starts), tuple(ends))

    def readable(self, piece: str) -> str:
        return f"<{piece[3:5]}>" if piece in self._byte_pieces else piece

    def decode(self, ids: Iterable[int]) -> str:
        return self._decoder.decode(ids)

    method = "the cut whose pieces' scores sum highest"

    def search(self, chunk: str) -> dict[str, object]:
        """The cut taken and the best other one (see
        :func:`~glassllm.formats.hf_word_models.unigram_search`)."""
        return unigram_search([path._asdict() for path in self.segmentations(chunk)])

    def segmentations(self, chunk: str, count: int = 2) -> list[UnigramPath]:
        """The ``count`` best cuts of ``chunk`` (normalized), best first, with each piece's
        score and the path's total (in full precision: the rounding of ``float`` totals
        that decides a tie is SentencePiece's, see the module's docstring)."""
        paths = best_paths(len(chunk), partial(self._edges, chunk), count)
        return [self._path(chunk, paths, rank) for rank in range(len(paths[-1]))] if chunk else []

    def _edges(self, chunk: str, start: int) -> list[tuple[int, int | None, float]]:
        found: list[tuple[int, int | None, float]] = []
        for end in range(start + 1, min(len(chunk), start + self._longest) + 1):
            token_id = self.ids.get(chunk[start:end])
            if token_id is not None:
                found.append((end, token_id, self.scores[token_id]))
        if not found or found[0][0] != start + 1:
            found.insert(0, (start + 1, None, self.unknown_score))
        return found

    def _path(self, chunk: str, paths: Lattice, rank: int) -> UnigramPath:
        return UnigramPath(*path_through(chunk, paths, rank, self._score))

    def _score(self, token_id: int | None) -> float:
        return self.unknown_score if token_id is None else self.scores[token_id]


class Decoder:
    """SentencePiece's ``DecodeIds``: control pieces vanish, an unknown one is its surface
    (`` ⁇ ``), byte pieces in a row are their UTF-8, and the ``▁`` of the dummy prefix goes
    (with extra spaces removed, every ``▁`` before the first text); then the model's
    denormalizer, if it has one. ``kinds``: the IDs of the control and unknown pieces;
    ``decoding``: the unknown piece's surface and the denormalizer; ``spec``:
    ``(add_dummy_prefix, remove_extra_whitespaces)``."""

    def __init__(
        self,
        vocab: list[str],
        kinds: dict[int, set[int]],
        byte_ids: dict[int, int],
        decoding: tuple[str, SentencePieceNormalizer | None],
        spec: tuple[bool, bool],
    ) -> None:
        self._vocab, self._byte_ids = vocab, byte_ids
        self._unk_surface, self._denormalizer = decoding
        self._controls, self._unknowns = frozenset(kinds[CONTROL]), frozenset(kinds[UNKNOWN])
        self._prefixed, self._stripped = spec

    def decode(self, ids: Iterable[int]) -> str:
        parts: list[str] = []
        pending = bytearray()
        opening, prefix_seen, written = True, False, False
        for token_id in as_ids(ids):
            byte = self._byte_ids.get(token_id)
            if byte is not None:
                pending.append(byte)
                continue
            if pending:
                parts.append(pending.decode("utf-8", "replace"))
                pending.clear()
                written = True
            if prefix_seen or written:
                opening = False
            shown, prefix_seen = self._piece(token_id, opening)
            parts.append(shown)
            written = written or bool(shown)
        if pending:
            parts.append(pending.decode("utf-8", "replace"))
        text = "".join(parts)
        return self._denormalizer.normalize(text)[0] if self._denormalizer else text

    def _piece(self, token_id: int, opening: bool) -> tuple[str, bool]:
        """A piece's text, and whether it held the dummy prefix."""
        if token_id in self._controls:
            return "", False
        if token_id in self._unknowns:
            return self._unk_surface, False
        piece = self._vocab[token_id]
        seen = False
        if opening and (self._prefixed or self._stripped) and piece.startswith(SPACE):
            piece, seen = piece[1:], not self._stripped
        return piece.replace(SPACE, " "), seen
