"""Hugging Face ``tokenizer.json`` files read by HF's stages one by one: the models that do
not merge, ``WordPiece`` (BERT and the embedding models built on it), ``WordLevel`` and
``Unigram``, and ``BPE`` in a layout :mod:`~glassllm.formats.hf_bpe` does not take
(:class:`HFBPE`: HF's BPE model on each chunk, its merge steps shown as a BPE's).

The text goes through HF's own stages, read by :mod:`~glassllm.formats.hf_normalizers`
(every character's place in the text as given kept, as HF keeps it) and
:mod:`~glassllm.formats.hf_pre_tokenizers`; a ``Metaspace`` pre-tokenizer alone changes
the text too (spaces as ``▁``, a ``▁`` before a segment, see :class:`WordModel`), and so
does a ``ByteLevel`` one (with ``add_prefix_space``, a space before each segment that
opens without one, in the place of its first character; GPT-2's pattern cuts the text, then
each chunk's UTF-8 bytes are GPT-2's byte characters, ``Ġ`` a space); either one anywhere
else in a ``Sequence`` is run split by split, as HF runs it (:mod:`~glassllm.formats.hf_staged`).
Each chunk is then:

- ``WordPiece``: cut greedily, longest match first: from each position the longest
  vocabulary entry that starts there (after the first position with the
  ``continuing_subword_prefix``, ``##``); where none does, or the word has more than
  ``max_input_chars_per_word`` characters, the whole word is the ``unk_token``.
  :meth:`HFWordPiece.lookups` shows every prefix tried;
- ``WordLevel``: the word's own entry, or the ``unk_token``;
- ``Unigram``: the cut whose pieces' scores sum highest (HF's Viterbi search, an unknown
  character scoring the lowest score less 10); :meth:`HFUnigram.segmentations` shows it
  and the next best.

``decode`` is the file's decoder's, any HF implements (:mod:`~glassllm.formats.hf_decoders`;
with no decoder, HF's default: the pieces joined by spaces), special tokens left out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import partial
from itertools import accumulate, pairwise
from operator import itemgetter
from pathlib import Path
from typing import Any, NamedTuple

from glassllm.formats.added_tokens import added_flags
from glassllm.formats.byte_level import from_symbols, to_symbols
from glassllm.formats.hf_bpe import GPT2_PATTERN, Split, added_tokens, entries, post_processor_around, vocab_ids_valid
from glassllm.formats.hf_decoders import decode_ids, decoder_from
from glassllm.formats.hf_normalizers import Aligned, Normalizer, build_normalizer
from glassllm.formats.hf_pre_tokenizers import Bounds, PreTokenizer, build_pre_tokenizer
from glassllm.formats.hf_staged import Piece, Step, changing_steps, run_steps
from glassllm.formats.metaspace import BYTE_PIECE, SPACE
from glassllm.formats.model_tokenizer import ChunkTokens, ModelTokenizer

__all__ = [
    "HFWordLevel",
    "HFWordPiece",
    "Lattice",
    "Lookup",
    "WordModel",
    "best_paths",
    "load_hf_word_model",
    "path_through",
    "unigram_search",
]


class _Matched(list[int]):
    """A segment's offsets (each character's start and end) and the ``normalized`` added
    tokens matched in it before the pre-tokenizer changed the text: ``(start, end, ID)``
    in the changed text; ``bounds``: the chunks a pre-tokenizer run split by split made
    (see :mod:`~glassllm.formats.hf_staged`), ``None`` when they are cut from the text."""

    def __init__(self, offsets: Iterable[int], added: list[tuple[int, int, int]], bounds: Bounds | None = None) -> None:
        super().__init__(offsets)
        self.added = added
        self.bounds = bounds


class Lookup(NamedTuple):
    """One position of WordPiece's greedy cut: the candidates tried there, longest first,
    and the one found (``None``: none was, so the word is the unknown token)."""

    start: int
    tried: list[str]
    found: str | None


class WordModel(ModelTokenizer):
    """What the three models share: HF's normalizer and pre-tokenizer, a vocabulary, an
    unknown token, and the decoder (see the module's docstring). ``metaspace``: a Metaspace
    pre-tokenizer's ``prepend_scheme``, whose text changes come after the normalizer's."""

    def __init__(
        self,
        source: str,
        vocab: dict[str, int],
        stages: tuple[Normalizer | None, PreTokenizer],
        unk_token: str,
        decoder: Callable[[list[str]], str],
        *,
        metaspace: tuple[str, bool] | None = None,
        byte_level: bool = False,
        byte_prefix: bool = False,
        staged: list[Step] | None = None,
        **options: Any,
    ) -> None:
        super().__init__(source, entries(vocab, options["specials"], options["always_matched"]), **options)
        self.ids = dict(vocab)
        self.unk_token = unk_token
        self.unk_id = vocab.get(unk_token)
        self._normalizer, self._pre_tokenizer = stages
        self._words = build_pre_tokenizer(source, {"type": "WhitespaceSplit"})
        self._decoder = decoder
        self._cuttable = False
        # A Metaspace pre-tokenizer's prepend_scheme ("always", "first", "never"), or None,
        # and whether a WhitespaceSplit comes before it.
        self._metaspace, self._after_words = metaspace or (None, False)
        self._segments_open = self._metaspace == "always"
        # A ByteLevel pre-tokenizer: the model reads each chunk's UTF-8 bytes as GPT-2's
        # printable characters, each aligned with the character it is a byte of.
        self._byte_level = byte_level
        # ByteLevel's add_prefix_space: a space before each segment that opens without one.
        self._byte_prefix = byte_prefix
        self._segments_open = self._segments_open or byte_prefix
        # A Sequence with ByteLevel or Metaspace in it, run split by split: its chunks are
        # the splits it makes, not slices of one changed text.
        self._staged = staged

    def _normalize(self, text: str, at_start: bool) -> tuple[str, list[int] | None]:
        if self._staged is not None:
            return self._split_by_split(text, at_start)
        if self._normalizer is None and self._metaspace is None and not self._byte_level:
            return text, None
        normalized, align = text, [(index, index + 1) for index in range(len(text))]
        if self._normalizer is not None:
            normalized, align = self._normalizer(normalized, align)
        if self._normalized_pattern is not None and (self._metaspace is not None or self._byte_level):
            return self._changed_around_added(normalized, align, at_start)
        normalized, align = self._pre_tokenizer_changes(normalized, align, at_start)
        if len(normalized) == len(text) and all(pair == (index, index + 1) for index, pair in enumerate(align)):
            return normalized, None
        # Each normalized character's start and end, one after the other (see _origin_span).
        return normalized, [offset for pair in align for offset in pair]

    def _split_by_split(self, text: str, at_start: bool) -> tuple[str, _Matched]:
        """The normalized text as the staged pre-tokenizer's splits (see ``staged``),
        their bounds kept with the offsets (see _cuts)."""
        align = [(index, index + 1) for index in range(len(text))]
        if self._normalizer is not None:
            text, align = self._normalizer(text, align)
        if self._normalized_pattern is not None:
            return self._changed_around_added(text, align, at_start)
        pieces = run_steps(self._staged or [], text, align, at_start)
        starts = list(accumulate((len(piece) for piece, _ in pieces), initial=0))
        offsets = (offset for _, placed in pieces for pair in placed for offset in pair)
        return "".join(piece for piece, _ in pieces), _Matched(offsets, [], list(pairwise(starts)))

    def _stretch_pieces(self, text: str, align: list[tuple[int, int]], opens: bool) -> list[Piece]:
        if self._staged is not None:
            return run_steps(self._staged, text, align, opens)
        return [self._pre_tokenizer_changes(text, align, opens)]

    def _changed_around_added(
        self, normalized: str, align: list[tuple[int, int]], at_start: bool
    ) -> tuple[str, _Matched]:
        """HF matches the ``normalized`` added tokens between the normalizer and the
        pre-tokenizer: each stretch between them is then changed by Metaspace or ByteLevel
        as a segment of its own (one after a token never opens the text), the tokens left
        as they are; where they ended up is kept with the offsets (see _added_in), and the
        staged pre-tokenizer's splits with them."""
        parts: list[str] = []
        aligned: list[tuple[int, int]] = []
        added: list[tuple[int, int, int]] = []
        bounds: Bounds = []
        at = length = 0
        for start, end, token_id in [*super()._added_in(normalized, None), (len(normalized), len(normalized), -1)]:
            if start > at:
                opens = at_start if at == 0 else self._segments_open
                for piece, placed in self._stretch_pieces(normalized[at:start], align[at:start], opens):
                    bounds.append((length, length + len(piece)))
                    parts.append(piece)
                    aligned.extend(placed)
                    length += len(piece)
            if token_id >= 0:
                added.append((length, length + end - start, token_id))
                parts.append(normalized[start:end])
                aligned.extend(align[start:end])
                length += end - start
            at = end
        offsets = (offset for pair in aligned for offset in pair)
        return "".join(parts), _Matched(offsets, added, bounds if self._staged is not None else None)

    def _cuts(self, normalized: str, origin: list[int] | None) -> Iterator[tuple[int, int, int | None]]:
        bounds = origin.bounds if isinstance(origin, _Matched) else None
        if bounds is None:
            yield from super()._cuts(normalized, origin)
            return
        found: list[tuple[int, int, int | None]] = [(start, end, None) for start, end in bounds]
        yield from sorted([*found, *origin.added], key=itemgetter(0))  # type: ignore[union-attr]

    def _segments_chunk_ids(self, text: str, at_start: bool) -> Iterator[list[tuple[int, ...]]]:
        if self._staged is None:
            yield from super()._segments_chunk_ids(text, at_start)
            return
        # The staged chunks are known with the offsets only (see _cuts).
        yield [
            (place,) if isinstance(place, int) else self._encode_chunk(chunk).ids
            for chunk, _, _, place in self._chunks(text, at_start)
        ]

    def _added_in(self, normalized: str, origin: list[int] | None) -> list[tuple[int, int, int]]:
        return origin.added if isinstance(origin, _Matched) else super()._added_in(normalized, origin)

    def _pre_tokenizer_changes(self, normalized: str, align: list[tuple[int, int]], at_start: bool) -> Aligned:
        """What Metaspace or ByteLevel change in the normalized text (see the module's docstring)."""
        if self._byte_prefix and at_start and normalized and not normalized.startswith(" "):
            # HF aligns the space it adds with the character it comes before.
            normalized, align = " " + normalized, [align[0], *align]
        if self._byte_level:
            widths = (
                [1] * len(normalized)
                if normalized.isascii()
                else [len(c.encode("utf-8", "replace")) for c in normalized]
            )
            normalized = to_symbols(normalized)
            align = [pair for pair, width in zip(align, widths, strict=True) for _ in range(width)]
        if self._after_words:
            normalized, align = self._prefix_words(normalized, align, at_start)
        elif self._metaspace is not None:
            # Metaspace's own text changes: spaces become ▁ (one for one), and a ▁ put
            # before a segment that opens without one, in the place of its first character.
            normalized = normalized.replace(" ", SPACE)
            if at_start and self._metaspace != "never" and normalized and not normalized.startswith(SPACE):
                normalized, align = SPACE + normalized, [align[0], *align]
        return normalized, align

    def _prefix_words(self, text: str, align: list[tuple[int, int]], at_start: bool) -> Aligned:
        """Metaspace after a WhitespaceSplit: a ``▁`` before each word that opens without
        one (``first``: the word at the text's very start only), in the place of its first
        character; the words joined by one space, where the pre-tokenizer cuts them again."""
        parts: list[str] = []
        aligned: list[tuple[int, int]] = []
        for start, end in self._words(text, [(0, len(text))]):
            if parts:
                parts.append(" ")
                aligned.append(align[start - 1])
            word = text[start:end]
            first = self._metaspace == "always" or (self._metaspace == "first" and at_start and align[start][0] == 0)
            if first and not word.startswith(SPACE):
                parts.append(SPACE)
                aligned.append(align[start])
            parts.append(word)
            aligned.extend(align[start:end])
        return "".join(parts), aligned

    def _origin_span(self, origin: list[int], start: int, end: int) -> tuple[int, int]:
        # From the first character's start to the last one's end, as HF places a token.
        if start < end:
            return origin[2 * start], origin[2 * end - 1]
        at = origin[2 * start] if 2 * start < len(origin) else (origin[-1] if origin else 0)
        return at, at

    def _chunk_bounds(self, normalized: str) -> Iterable[tuple[int, int]]:
        return [(start, end) for start, end in self._pre_tokenizer(normalized, [(0, len(normalized))]) if start < end]

    def _symbols(self, chunk: str) -> list[str]:
        return [chunk]

    def _rank(self, left: str, right: str) -> float | None:
        return None

    def _unknown(self, chunk: str) -> ChunkTokens:
        if self.unk_id is None:
            raise ValueError(f"{self.source}: {chunk!r:.40} is not in the vocabulary, nor is {self.unk_token!r}")
        return ChunkTokens((self.unk_id,), (self.unk_token,), (0,), (len(chunk),))

    def decode(self, ids: Iterable[int]) -> str:
        return decode_ids(self._decoder, self.vocab, self._special_ids, ids)


class HFWordPiece(WordModel):
    """A ``WordPiece`` tokenizer.json (see the module's docstring)."""

    kind = "Hugging Face WordPiece"

    def __init__(self, *args: Any, prefix: str, longest: int, **options: Any) -> None:
        super().__init__(*args, **options)
        self.prefix = prefix
        self.max_input_chars_per_word = longest

    method = "the longest vocabulary entry at each position, greedily"

    def search(self, chunk: str) -> dict[str, object]:
        """The greedy cut of ``chunk``: each position's candidates, longest first, and the
        one found (``null``: none, so the word is the unknown token); ``too_long``: the word
        has more characters than ``max_input_chars_per_word``."""
        steps = self.lookups(chunk)
        return {
            "kind": "WordPiece",
            "lookups": [{"start": step.start, "tried": step.tried, "found": step.found} for step in steps],
            "too_long": not steps and bool(chunk),
            "unknown": not steps or steps[-1].found is None,
        }

    def lookups(self, chunk: str) -> list[Lookup]:
        """Each position of the greedy cut of ``chunk`` (a pre-tokenizer's chunk, normalized)
        with every candidate tried there, longest first; empty when the word is too long."""
        if len(chunk) > self.max_input_chars_per_word:
            return []
        found: list[Lookup] = []
        start = 0
        while start < len(chunk):
            lead = self.prefix if start else ""
            tried = [lead + chunk[start:end] for end in range(len(chunk), start, -1)]
            piece = next((candidate for candidate in tried if candidate in self.ids), None)
            found.append(Lookup(start, tried[: tried.index(piece) + 1] if piece else tried, piece))
            if piece is None:
                break
            start += len(piece) - len(lead)
        return found

    def _tokens(self, chunk: str, pieces: list[str]) -> ChunkTokens:
        steps = self.lookups(chunk)
        if not steps or steps[-1].found is None:
            return self._unknown(chunk)
        ends = [step.start for step in steps[1:]] + [len(chunk)]
        return ChunkTokens(
            tuple(self.ids[step.found] for step in steps if step.found),
            tuple(step.found for step in steps if step.found),
            tuple(step.start for step in steps),
            tuple(ends),
        )


class HFWordLevel(WordModel):
    """A ``WordLevel`` tokenizer.json: each chunk is its own entry or the unknown token."""

    kind = "Hugging Face WordLevel"
    method = "each word looked up whole"

    def search(self, chunk: str) -> dict[str, object]:
        """The lookup of ``chunk``: whether it is a vocabulary entry (else the unknown token)."""
        return {"kind": "WordLevel", "lookup": chunk, "found": chunk in self.ids}

    def _tokens(self, chunk: str, pieces: list[str]) -> ChunkTokens:
        token_id = self.ids.get(chunk)
        if token_id is None:
            return self._unknown(chunk)
        return ChunkTokens((token_id,), (chunk,), (0,), (len(chunk),))


def _normalized_added(tokens: list[Any], normalizer: Normalizer | None) -> dict[str, int]:
    """The added tokens matched on the normalized text (``normalized``), by their content
    normalized as HF normalizes it: with the file's normalizer (a Metaspace or ByteLevel
    pre-tokenizer's changes come after they are matched, see
    WordModel._changed_around_added)."""
    found: dict[str, int] = {}
    for token_id, flags in added_flags(tokens).items():
        if not flags.normalized:
            continue
        content = next(token["content"] for token in tokens if token.get("id") == token_id)
        if normalizer is not None:
            content = normalizer(content, [(index, index + 1) for index in range(len(content))])[0]
        found[content] = token_id
    return found


class Segmentation(NamedTuple):
    """One way to cut a chunk into Unigram pieces: each piece (an unknown character as
    itself), its score (an unknown one's: the lowest score less 10, as HF scores it) and
    the path's total."""

    pieces: list[str]
    scores: list[float]
    total: float


class HFUnigram(WordModel):
    """A ``Unigram`` tokenizer.json: each chunk cut where the sum of its pieces' scores is
    highest (HF's Viterbi search, ties to the piece found first); unknown characters in a
    row are one unknown token. :meth:`segmentations` shows the best cut and the next best."""

    kind = "Hugging Face Unigram"
    priority_name = "score"

    def __init__(
        self,
        source: str,
        pieces: list[tuple[str, float]],
        unk_id: int | None,
        *args: Any,
        byte_fallback: bool = False,
        **options: Any,
    ):
        vocab = {piece: index for index, (piece, _) in enumerate(pieces)}
        unk_token = pieces[unk_id][0] if unk_id is not None else "<unk>"
        super().__init__(source, vocab, args[0], unk_token, args[1], **options)
        self.unk_id = unk_id
        self.byte_fallback = byte_fallback
        self.scores = [score for _, score in pieces]
        # HF's kUnkPenalty: an unknown character scores 10 less than the lowest piece.
        self.unknown_score = min(self.scores, default=0.0) - 10.0
        self._longest = max((len(piece) for piece, _ in pieces), default=1)

    def _edges(self, chunk: str, start: int) -> list[tuple[int, int | None, float]]:
        """Each piece that starts at ``start``: ``(end, ID, score)``, shortest first, and an
        unknown character where no piece is that one character (ID ``None``)."""
        found: list[tuple[int, int | None, float]] = []
        for end in range(start + 1, min(len(chunk), start + self._longest) + 1):
            token_id = self.ids.get(chunk[start:end])
            if token_id is not None:
                found.append((end, token_id, self.scores[token_id]))
        if not found or found[0][0] != start + 1:
            found.insert(0, (start + 1, None, self.unknown_score))
        return found

    def _best_starts(self, chunk: str) -> list[tuple[int, int | None]]:
        """Where the best path to each position starts, and its piece (HF's
        ``encode_optimized``: a later candidate wins only with a strictly higher total)."""
        totals = [0.0] * (len(chunk) + 1)
        best: list[tuple[int, int | None]] = [(0, None)] * (len(chunk) + 1)
        reached = [True] + [False] * len(chunk)
        for start in range(len(chunk)):
            base = totals[start]  # every position is reached: each character has an edge
            for end, token_id, score in self._edges(chunk, start):
                if not reached[end] or base + score > totals[end]:
                    totals[end], best[end], reached[end] = base + score, (start, token_id), True
        return best

    def _tokens(self, chunk: str, pieces: list[str]) -> ChunkTokens:
        best = self._best_starts(chunk)
        spans: list[tuple[int, int, bool]] = []
        end = len(chunk)
        while end > 0:
            start, token_id = best[end]
            # Unknown characters in a row are fused, and so is a piece whose ID is the
            # unknown token's, as HF fuses them (by ID).
            unknown = token_id is None or token_id == self.unk_id
            if unknown and spans and spans[-1][2]:
                spans[-1] = (start, spans[-1][1], True)
            else:
                spans.append((start, end, unknown))
            end = start
        spans.reverse()
        if any(unknown for *_, unknown in spans) and self.unk_id is None:
            return self._unknown(chunk)
        if not self.byte_fallback:
            ids = tuple(self.ids.get(chunk[start:end], self.unk_id or 0) for start, end, _ in spans)
            shown = tuple(chunk[start:end] for start, end, _ in spans)
            return ChunkTokens(ids, shown, tuple(span[0] for span in spans), tuple(span[1] for span in spans))
        found: list[tuple[int, str, int, int]] = []
        for start, end, _ in spans:
            text = chunk[start:end]
            token_id = self.ids.get(text)
            pieces = [f"<0x{byte:02X}>" for byte in text.encode("utf-8")]
            if token_id is None and all(piece in self.ids for piece in pieces):
                # HF's byte fallback: each byte of a run of unknown characters, each over the run.
                found.extend((self.ids[piece], piece, start, end) for piece in pieces)
            else:
                found.append((self.unk_id if token_id is None else token_id, text, start, end))  # type: ignore[arg-type]
        return ChunkTokens(*map(tuple, zip(*found, strict=True)))  # type: ignore[arg-type]

    method = "the cut whose pieces' scores sum highest"

    def search(self, chunk: str) -> dict[str, object]:
        """:func:`unigram_search` of :meth:`segmentations`."""
        return unigram_search([path._asdict() for path in self.segmentations(chunk)])

    def segmentations(self, chunk: str, count: int = 2) -> list[Segmentation]:
        """The ``count`` best cuts of ``chunk`` (a pre-tokenizer's chunk, normalized), best
        first: the first is the one encoding takes (before unknown characters are fused)."""
        paths = best_paths(len(chunk), partial(self._edges, chunk), count)
        return [self._path(chunk, paths, rank) for rank in range(len(paths[-1]))] if chunk else []

    def _path(self, chunk: str, paths: Lattice, rank: int) -> Segmentation:
        return Segmentation(*path_through(chunk, paths, rank, self._score))

    def _score(self, token_id: int | None) -> float:
        return self.unknown_score if token_id is None else self.scores[token_id]


Lattice = list[list[tuple[float, int, int | None, int]]]


def best_paths(length: int, edges: Callable[[int], Iterable[tuple[int, int | None, float]]], count: int) -> Lattice:
    """The k-best search both Unigram formats share: for each position of a chunk of
    ``length``, its ``count`` best paths from the start, best first, each ``(total, start,
    piece ID, rank of the path it extends at start)``; ``edges(start)``: the pieces
    starting there, ``(end, piece ID or None, score)``."""
    paths: Lattice = [[] for _ in range(length + 1)]
    paths[0].append((0.0, 0, None, 0))
    for start in range(length):
        for end, token_id, score in edges(start):
            for rank, (total, *_) in enumerate(paths[start]):
                kept = paths[end]
                at = sum(1 for entry in kept if entry[0] >= total + score)
                kept.insert(at, (total + score, start, token_id, rank))
                del kept[count:]
    return paths


def path_through(
    chunk: str, paths: Lattice, rank: int, score: Callable[[int | None], float]
) -> tuple[list[str], list[float], float]:
    """The pieces of :func:`best_paths`' path ``rank`` through ``chunk``, each piece's score
    (``score`` of its ID; ``None``: unknown) and the path's total, walked back from the end."""
    pieces: list[str] = []
    scores: list[float] = []
    end, total = len(chunk), paths[-1][rank][0]
    while end > 0:
        _, start, token_id, rank = paths[end][rank]
        pieces.append(chunk[start:end])
        scores.append(score(token_id))
        end = start
    return pieces[::-1], scores[::-1], total


def unigram_search(paths: list[dict[str, Any]]) -> dict[str, object]:
    """A Unigram model's search for a chunk: the cut taken (``best``: its pieces, each
    piece's score, the total) and the best other cut (``alternative``, ``null`` when there
    is none): why this split won."""
    return {"kind": "Unigram", "best": paths[0] if paths else None, "alternative": paths[1] if len(paths) > 1 else None}


class HFBPE(WordModel):
    """A ``BPE`` tokenizer.json in a layout the fast readers of :mod:`~glassllm.formats.hf_bpe`
    do not take (BERT's normalizer, ``Whitespace``…), each chunk merged as HF's ``BPE``
    model merges a word: one symbol per character, each after the first with the
    ``continuing_subword_prefix``, the last with the ``end_of_word_suffix``; a character
    that is no entry becomes its ``<0xXX>`` bytes (``byte_fallback``), or the
    ``unk_token`` (a run of them one token with ``fuse_unk``), or is dropped with none;
    then the pair earliest in ``merges`` merges first, the leftmost among equals, the
    right symbol's prefix dropped. ``ignore_merges``: a chunk that is an entry whole is
    that token."""

    kind = "Hugging Face BPE"

    def __init__(
        self,
        *args: Any,
        ranks: dict[tuple[str, str], int],
        affixes: tuple[str, str],
        unknown: tuple[bool, bool, bool],
        ignore_merges: bool,
        **options: Any,
    ) -> None:
        super().__init__(*args, **options)
        self.ranks = ranks
        self.prefix, self.suffix = affixes
        self.has_unk, self.fuse_unk, self.byte_fallback = unknown
        self.ignore_merges = ignore_merges
        self._rank_of = ranks.get

    def _rank(self, left: str, right: str) -> float | None:
        return self._rank_of((left, right))

    def _join(self, left: str, right: str) -> str:
        return left + right[len(self.prefix) :]

    def _whole(self, chunk: str, symbols: list[str]) -> int | None:
        return self.ids.get(chunk) if self.ignore_merges else None

    def _symbols(self, chunk: str) -> list[str]:
        return [symbol for symbol, _ in self._word(chunk)]

    def _symbols_of_piece(self, piece: str) -> list[str]:
        # A vocabulary entry as the symbols it was merged from: the prefix it opens with
        # (a piece inside a word) on each, the suffix it ends with on the last.
        lead = self.prefix if self.prefix and piece.startswith(self.prefix) else ""
        inner = piece[len(lead) :]
        tail = self.suffix if self.suffix and inner.endswith(self.suffix) and inner != self.suffix else ""
        inner = inner[: len(inner) - len(tail)]
        symbols = [(lead if index == 0 else self.prefix) + character for index, character in enumerate(inner)]
        if symbols:
            symbols[-1] += tail
        return symbols

    def _word(self, chunk: str) -> list[tuple[str, int]]:
        """HF's initial symbols of ``chunk`` with each one's length in UTF-8 bytes (a
        byte fallback symbol: 1, as HF counts it; see _tokens)."""
        found: list[tuple[str, int]] = []
        unknown: tuple[str, int] | None = None
        last = len(chunk) - 1
        for index, character in enumerate(chunk):
            symbol = (self.prefix if index else "") + character + (self.suffix if index == last else "")
            width = len(character.encode("utf-8", "replace"))
            if symbol in self.ids:
                if unknown is not None:
                    found.append(unknown)
                    unknown = None
                found.append((symbol, width))
                continue
            data = symbol.encode("utf-8", "replace")
            if self.byte_fallback and all(f"<0x{byte:02X}>" in self.ids for byte in data):
                found.extend((f"<0x{byte:02X}>", 1) for byte in data)
                continue
            if not self.has_unk:
                continue  # HF drops it
            if self.unk_id is None:
                raise ValueError(f"{self.source}: {chunk!r:.40} is not in the vocabulary, nor is {self.unk_token!r}")
            if unknown is not None and self.fuse_unk:
                unknown = (unknown[0], unknown[1] + width)
            else:
                if unknown is not None:
                    found.append(unknown)
                unknown = (self.unk_token, width)
        if unknown is not None:
            found.append(unknown)
        return found

    def _tokens(self, chunk: str, pieces: list[str]) -> ChunkTokens:
        """Each final piece over the characters of the bytes its symbols count, as HF
        places a token: from the bytes the symbols before it count (a dropped character
        counts none), so each byte fallback token covers its character."""
        word = self._word(chunk)
        char_of_byte = [index for index, character in enumerate(chunk) for _ in character.encode("utf-8", "replace")]
        last = len(char_of_byte)
        starts: list[int] = []
        ends: list[int] = []
        at = taken = 0
        for piece in pieces:
            built, width = "", 0
            while len(built) < len(piece) and taken < len(word):
                symbol, size = word[taken]
                built = self._join(built, symbol) if built else symbol
                width += size
                taken += 1
            starts.append(char_of_byte[at] if at < last else len(chunk))
            end = min(at + width, last)
            ends.append(char_of_byte[end - 1] + 1 if end > 0 else 0)
            at += width
        ids = tuple(self.ids[piece] for piece in pieces)
        return ChunkTokens(ids, tuple(pieces), tuple(starts), tuple(ends))

    def readable(self, piece: str) -> str:
        match = BYTE_PIECE.fullmatch(piece)
        return f"<{match[1]}>" if match and self.byte_fallback else piece


def _stages(path: str, data: dict[str, Any]) -> tuple[tuple[Normalizer | None, PreTokenizer], tuple[str, bool] | None]:
    """The normalizer and the pre-tokenizer's cut, and a Metaspace pre-tokenizer's
    prepend_scheme with whether it follows a ``WhitespaceSplit`` (T5's, XLM-R's layout):
    its changes are the text's (see WordModel._normalize), its ``split`` a Split on ``▁``
    merged with the next."""
    normalizer = build_normalizer(path, data.get("normalizer"))
    spec = data.get("pre_tokenizer")
    if isinstance(spec, dict) and spec.get("type") == "ByteLevel":
        split = Split.of(GPT2_PATTERN, True) if spec.get("use_regex", True) else None
        return (normalizer, partial(_byte_level_cut, split)), None
    words = False
    if isinstance(spec, dict) and spec.get("type") == "Sequence":
        parts = spec.get("pretokenizers") or []
        if [part.get("type") for part in parts] == ["WhitespaceSplit", "Metaspace"]:
            spec, words = parts[1], True
    if not (isinstance(spec, dict) and spec.get("type") == "Metaspace"):
        return (normalizer, build_pre_tokenizer(path, spec)), None
    scheme = spec.get("prepend_scheme") or ("always" if spec.get("add_prefix_space", True) else "never")
    if spec.get("replacement", SPACE) != SPACE or scheme not in ("always", "first", "never"):
        raise ValueError(f"{path}: the Metaspace pre-tokenizer {spec!r:.120} is not supported")
    cuts: list[dict[str, Any]] = [{"type": "WhitespaceSplit"}] if words else []
    if spec.get("split", True):
        cuts.append({"type": "Split", "pattern": {"String": SPACE}, "behavior": "MergedWithNext"})
    return (normalizer, build_pre_tokenizer(path, {"type": "Sequence", "pretokenizers": cuts})), (scheme, words)


def _words_then_metaspace(spec: dict[str, Any]) -> bool:
    """T5's and XLM-R's layout, read by WordModel._prefix_words."""
    parts = spec.get("pretokenizers") or []
    return [part.get("type") if isinstance(part, dict) else None for part in parts] == ["WhitespaceSplit", "Metaspace"]


def _byte_level_cut(split: Split | None, symbols: str, bounds: Bounds) -> Bounds:
    """A ByteLevel pre-tokenizer's chunks of ``symbols`` (the normalized text as GPT-2's
    byte characters, see WordModel._normalize): its regex's matches in the text they
    stand for (all of it without ``use_regex``), as bounds in the symbols."""
    if split is None or not symbols:
        return [(0, len(symbols))] if symbols else []
    text = from_symbols(symbols).decode("utf-8", "replace")
    at = [0, *accumulate(len(character.encode("utf-8", "replace")) for character in text)]
    return [(at[start], at[end]) for start, end in split.bounds(text, 0, len(text))]


def _unigram_pieces(path: str, model: dict[str, Any]) -> list[tuple[str, float]]:
    vocab = model.get("vocab")
    if not isinstance(vocab, list) or not all(
        isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str) and isinstance(entry[1], int | float)
        for entry in vocab
    ):
        raise ValueError(f"{path}: a Unigram model.vocab must be [piece, score] pairs")
    return [(piece, float(score)) for piece, score in vocab]


def _bpe(source: str, model: dict[str, Any], stages: Any, decoder: Any, options: dict[str, Any]) -> HFBPE:
    """An :class:`HFBPE` of the ``model`` (its ``vocab`` checked), refusing what HF's
    Rust would refuse to build (``dropout`` is refused before, by hf_bpe.load_hf_bpe)."""
    vocab = model["vocab"]
    prefix = model.get("continuing_subword_prefix") or ""
    suffix = model.get("end_of_word_suffix") or ""
    pairs = _merge_pairs(source, model.get("merges", []))
    for left, right in pairs:
        joined = left + right[len(prefix) :]
        missing = next((piece for piece in (left, right, joined) if piece not in vocab), None)
        if missing is not None:
            raise ValueError(f"{source}: the merge {left!r} {right!r} needs {missing!r:.40}, not in model.vocab")
    unk = model.get("unk_token")
    unknown = (isinstance(unk, str), bool(model.get("fuse_unk")), bool(model.get("byte_fallback")))
    return HFBPE(
        source,
        vocab,
        stages,
        unk if isinstance(unk, str) else "<unk>",
        decoder,
        ranks=dict(zip(pairs, range(len(pairs)), strict=True)),
        affixes=(str(prefix), str(suffix)),
        unknown=unknown,
        ignore_merges=bool(model.get("ignore_merges")),
        **options,
    )


def _merge_pairs(path: str, raw: Any) -> list[tuple[str, str]]:
    """The merges as ``(left, right)`` pairs, in rank order: ``[left, right]`` lists, or
    ``"left right"`` strings (HF's older format, cut at their one space; ``#version``
    lines skipped, as HF skips them)."""
    if not isinstance(raw, list):
        raise ValueError(f"{path}: model.merges must be a list")
    pairs: list[tuple[str, str]] = []
    for merge in raw:
        if isinstance(merge, str) and not merge.startswith("#version"):
            merge = merge.split(" ")
        elif isinstance(merge, str):
            continue
        if not (isinstance(merge, list) and len(merge) == 2 and all(isinstance(side, str) and side for side in merge)):
            raise ValueError(f"{path}: the merge {merge!r:.80} is not two non-empty pieces")
        pairs.append((merge[0], merge[1]))
    return pairs


def load_hf_word_model(path: str | Path, data: dict[str, Any], *, match_specials: bool = False) -> WordModel:
    """A WordPiece, WordLevel or Unigram tokenizer from the parsed ``tokenizer.json`` ``data``."""
    source = str(path)
    model = data["model"]
    staged = changing_steps(source, data.get("pre_tokenizer"))
    if staged is None or _words_then_metaspace(data["pre_tokenizer"]):
        stages, metaspace = _stages(source, data)
    else:
        stages, metaspace = (build_normalizer(source, data.get("normalizer")), build_pre_tokenizer(source, None)), None
    byte_level = isinstance(data.get("pre_tokenizer"), dict) and data["pre_tokenizer"].get("type") == "ByteLevel"
    specials, always = added_tokens(source, data.get("added_tokens") or [])
    options: dict[str, Any] = {
        "specials": specials,
        "always_matched": always,
        "match_specials": match_specials,
        "around": post_processor_around(source, data.get("post_processor"), {**always, **specials}),
        "metaspace": metaspace,
        "staged": staged if metaspace is None else None,
        "byte_level": byte_level,
        "byte_prefix": byte_level and bool(data["pre_tokenizer"].get("add_prefix_space")),
        "added_flags": added_flags(data["added_tokens"]) if data.get("added_tokens") else {},
        "normalized_added": _normalized_added(data.get("added_tokens") or [], stages[0]),
    }
    decoder = decoder_from(source, data.get("decoder"))
    if model["type"] == "Unigram":
        unk_id = model.get("unk_id")
        pieces = _unigram_pieces(source, model)
        if unk_id is not None and not (isinstance(unk_id, int) and 0 <= unk_id < len(pieces)):
            raise ValueError(f"{source}: model.unk_id {unk_id!r:.20} is no piece's")
        byte_fallback = bool(model.get("byte_fallback"))
        return HFUnigram(source, pieces, unk_id, stages, decoder, byte_fallback=byte_fallback, **options)
    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or not vocab_ids_valid(vocab):
        raise ValueError(f"{source}: model.vocab must map pieces to non-negative IDs")
    if model["type"] == "BPE":
        return _bpe(source, model, stages, decoder, options)
    unk = str(model.get("unk_token", "[UNK]" if model["type"] == "WordPiece" else "<unk>"))
    if model["type"] == "WordLevel":
        return HFWordLevel(source, vocab, stages, unk, decoder, **options)
    prefix = str(model.get("continuing_subword_prefix", "##"))
    longest = int(model.get("max_input_chars_per_word", 100))
    return HFWordPiece(source, vocab, stages, unk, decoder, prefix=prefix, longest=longest, **options)
