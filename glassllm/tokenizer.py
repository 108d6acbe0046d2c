"""The glassllm tokenizer: character-level BPE with a visible space marker.

The pipeline, each stage in its own module::

    text → NFC (normalize) → ▁ and chunks (chunks) → merges (bpe) → pieces → IDs
    IDs → pieces → specials removed, <unk> as ⁇ → ▁ back to spaces → text

The vocabulary is the four special tokens, then the alphabet (single characters, in code
point order when trained), then one entry per merge, in rank order. A piece that is not
in the vocabulary (a character never seen in training) becomes ``<unk>``: there is no
byte fallback.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from itertools import accumulate, chain, compress, filterfalse, islice, repeat
from operator import not_
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from glassllm.caches import LruCache
from glassllm.formats.files import TokenizerFile, read_tokenizer_file, write_tokenizer_file
from glassllm.formats.hf_export import save_hf
from glassllm.pipeline.bpe import Pair, Progress, apply_merges, collector_paused, learn_merges, merge, merge_pieces
from glassllm.pipeline.chunks import SPACE, chunk_text, pre_tokenize
from glassllm.pipeline.specials import BOS_ID, EOS_ID, PAD_ID, SPECIALS, UNK_ID, UNK_TEXT
from glassllm.pipeline.tokens import ChunkExplanation, MergeStep, TokenSpan, as_ids, require_text
from glassllm.pipeline.two_cores import each_of
from glassllm.shown.problems import problem
from glassllm.training.chunk_counting import count_chunks

__all__ = [
    "SPACE",
    "SPECIALS",
    "UNK_ID",
    "UNK_TEXT",
    "Tokenizer",
    "pre_tokenize",
]

_T = TypeVar("_T")

# ``tuple.__new__(TokenSpan, fields)`` builds a record without a Python-level call.
_new_span = tuple.__new__

# Chunks repeat a lot in prose; past this many distinct ones the cache starts afresh
# rather than grow without bound on an endless stream of new chunks.
_CHUNK_CACHE_LIMIT = 1 << 17


class _Encoded(NamedTuple):
    """A chunk's tokens, as the chunk cache keeps them."""

    ids: tuple[int, ...]
    pieces: tuple[str, ...]
    firsts: tuple[int, ...]  # 1 for the chunk's first token, then 0s

    @classmethod
    def of(cls, ids: tuple[int, ...], pieces: list[str]) -> _Encoded:
        return cls(ids, tuple(pieces), (1,) + (0,) * (len(ids) - 1))


class Tokenizer:
    """A BPE tokenizer over Unicode characters.

    ``Tokenizer(alphabet, merges)`` builds the vocabulary ``SPECIALS + alphabet +
    [a + b for a, b in merges]``; ``ranks`` maps each merge to its priority (its index).
    Use :meth:`train` to learn merges from text and :meth:`load` to read a saved file.
    """

    pad_id = PAD_ID
    unk_id = UNK_ID
    bos_id = BOS_ID
    eos_id = EOS_ID
    kind = "glassllm BPE"
    has_counts = True  # its merges keep the counts training saw (merge_counts)
    priority_name = "rank"  # what orders the merges: their rank, lower first
    # encode never adds BOS or EOS, and nothing in a text is read as a special token.
    around: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    match_specials = False

    def __init__(
        self,
        alphabet: list[str],
        merges: list[tuple[str, str]],
        merge_counts: list[int] | None = None,
    ) -> None:
        self.alphabet = list(alphabet)
        self.merges: list[Pair] = [(left, right) for left, right in merges]
        self.merge_counts = None if merge_counts is None else list(merge_counts)
        self.ranks: dict[Pair, int] = {}
        for rank, pair in enumerate(self.merges):
            self.ranks.setdefault(pair, rank)
        self.vocab = SPECIALS + self.alphabet + [a + b for a, b in self.merges]
        # A piece learned twice (``a+bc`` and ``ab+c``) maps to its first ID.
        self._ids: dict[str, int] = {}
        for index in range(len(SPECIALS), len(self.vocab)):
            self._ids.setdefault(self.vocab[index], index)
        self._surfaces = ["", UNK_TEXT, "", ""] + [piece.replace(SPACE, " ") for piece in self.vocab[4:]]
        self._cache: LruCache[str, _Encoded] = LruCache(_CHUNK_CACHE_LIMIT)
        self._ids_cache: LruCache[str, tuple[int, ...]] = LruCache(_CHUNK_CACHE_LIMIT)  # encode's fast path
        # encode_spans' (see _encode_chunk): each token's ``id, piece, length, first``.
        self._flat_cache: LruCache[str, tuple[Any, ...]] = LruCache(_CHUNK_CACHE_LIMIT)

    def __repr__(self) -> str:
        return f"<Tokenizer: {self.vocab_size} entries, {len(self.alphabet)} characters, {len(self.merges)} merges>"

    @property
    def vocab_size(self) -> int:
        """The number of vocabulary entries, specials included."""
        return len(self.vocab)

    # Learning

    @classmethod
    def train(cls, text: str, vocab_size: int, *, progress: Progress | None = None) -> Tokenizer:
        """Learn a tokenizer of at most ``vocab_size`` entries from ``text``.

        Raises ``ValueError`` when ``vocab_size`` cannot hold the specials and the
        alphabet, or when ``text`` holds a lone surrogate (it is not Unicode text, and no
        tokenizer file could store it). ``progress(done, total)`` is called after each merge.
        """
        require_text(text)
        surrogate = _SURROGATE.search(text)
        if surrogate is not None:
            offset = surrogate.start()
            raise problem(ValueError, "train.surrogate", code=ord(text[offset]), offset=offset)
        return cls.train_from_counts(count_chunks(text), vocab_size, progress=progress)

    @classmethod
    def train_from_counts(
        cls, counts: Mapping[str, int], vocab_size: int, *, progress: Progress | None = None
    ) -> Tokenizer:
        """Learn a tokenizer from chunk counts, as :func:`glassllm.training.chunk_counting.count_chunks`
        (or :func:`~glassllm.training.chunk_counting.count_files`) returns them, possibly summed over parts
        of a corpus counted elsewhere. ``train(text, n)`` is ``train_from_counts(
        count_chunks(text), n)``; chunks must not be empty and counts must be positive.
        """
        for chunk, count in counts.items():
            if not isinstance(chunk, str) or not chunk:
                raise problem(ValueError, "train.chunk", chunk=chunk)
            surrogate = _SURROGATE.search(chunk)
            if surrogate is not None:
                offset = surrogate.start()
                raise problem(ValueError, "train.chunk_surrogate", chunk=chunk, code=ord(chunk[offset]), offset=offset)
            if not isinstance(count, int) or isinstance(count, bool) or count < 1:
                raise problem(ValueError, "train.count", chunk=chunk, count=count)
        alphabet = sorted({character for chunk in counts for character in chunk})
        base = len(SPECIALS) + len(alphabet)
        if vocab_size < base:
            raise problem(
                ValueError,
                "train.vocab_size",
                vocab_size=vocab_size,
                specials=len(SPECIALS),
                alphabet=len(alphabet),
                needed=base,
            )
        merges, merge_counts = learn_merges(counts, vocab_size - base, progress)
        return cls(alphabet, merges, merge_counts)

    # Encoding

    def encode(self, text: str) -> list[int]:
        """Token IDs of ``text``: no BOS, EOS or padding, no length limit."""
        require_text(text)
        chunks = chunk_text(text).chunks
        try:
            # A text whose chunks are all in the recent generation (warm): read in C,
            # with no list of entries to check for the missing ones.
            return list(chain.from_iterable(map(self._ids_cache.recent.__getitem__, chunks)))
        except KeyError:
            # Tuples of ints and lists of strings only: the collections a first pass's
            # allocations trigger would find nothing to free (as in encode_spans).
            with collector_paused():
                return list(chain.from_iterable(self._cached(chunks, self._ids_cache)))

    def encode_spans(self, text: str, *, at_start: bool = True) -> list[TokenSpan]:
        """One :class:`TokenSpan` per token of ``encode(text)``, with offsets into ``text``.

        Spans are in order, never overlap and together cover ``text``. Where NFC merged
        several code points into one, the token holding it covers all of them.
        ``at_start`` changes nothing: glassllm adds nothing at a text's start (see
        :class:`~glassllm.pipeline.any_tokenizer.AnyTokenizer`).
        """
        require_text(text)
        chunked = chunk_text(text)
        # Chunks tile the normalized text, so token boundaries are running sums of the
        # tokens' lengths, and a token's chunk index is a running sum of "first token of
        # its chunk" flags: the chunks' tokens chained in one list and sliced into
        # columns keep per-token work in C.
        flat = list(chain.from_iterable(self._cached(chunked.chunks, self._flat_cache)))
        bounds = list(accumulate(flat[2::4], initial=0))
        origin = chunked.origin
        if origin is not None:
            bounds = list(map(origin.__getitem__, bounds))
        chunk_of = islice(accumulate(flat[3::4], initial=-1), 1, None)
        with collector_paused():
            return list(
                map(
                    _new_span,
                    repeat(TokenSpan),
                    zip(flat[0::4], flat[1::4], bounds, islice(bounds, 1, None), chunk_of, strict=False),
                )
            )

    def encode_verbose(self, text: str) -> list[dict[str, object]]:
        """Per chunk, ``{"chunk": str, "steps": list[list[str]]}``: the characters, then
        the pieces after each merge step."""
        return [
            {"chunk": item.chunk, "steps": [item.characters] + [step.pieces for step in item.steps]}
            for item in self.explain(text)
        ]

    def explain(self, text: str, *, at_start: bool = True) -> list[ChunkExplanation]:
        """Every chunk of ``text`` with each merge step: rank, pair, result, training count
        (``at_start`` changes nothing, as for :meth:`encode_spans`)."""
        require_text(text)
        explanations = []
        for index, (chunk, start, end) in enumerate(chunk_text(text).spans()):
            pieces, applied = apply_merges(chunk, self.ranks)
            state = list(chunk)
            steps = []
            for pair in applied:
                state = merge(state, pair)
                rank = self.ranks[pair]
                count = None if self.merge_counts is None else self.merge_counts[rank]
                steps.append(MergeStep(rank, pair, pair[0] + pair[1], count, state))
            ids = [self._ids.get(piece, UNK_ID) for piece in pieces]
            explanations.append(ChunkExplanation(index, chunk, start, end, list(chunk), steps, pieces, ids))
        return explanations

    def chunk_spans(self, text: str, *, at_start: bool = True) -> list[tuple[str, int, int]]:
        """Each chunk of ``text`` (after NFC, spaces as ``▁``) with its ``[start, end)`` in
        ``text`` (``at_start`` changes nothing, as for :meth:`encode_spans`)."""
        require_text(text)
        return list(chunk_text(text).spans())

    def can_cut(self, before: str, after: str) -> bool:
        """Whether a text ``before + after``, where ``before`` ends with a line break,
        tokenizes as ``before`` then ``after``: always, since a chunk never holds a line
        ending and what follows it, and merges never cross a chunk."""
        return True

    def readable(self, piece: str) -> str:
        """``piece`` as a person reads it: glassllm's pieces are text already (``▁`` for spaces)."""
        return piece

    def derivation(self, piece: str) -> list[tuple[str, str, str]]:
        """How ``piece`` is built: ``(result, left, right)`` merges, the last one first."""
        require_text(piece)
        applied = apply_merges(piece, self.ranks)[1]
        return [(left + right, left, right) for left, right in reversed(applied)]

    def _cached(self, chunks: list[str], cache: LruCache[str, _T]) -> list[_T]:
        """Each chunk's entry in ``cache`` (the full one or the IDs-only one), encoding
        the chunks not seen yet: each distinct one once, and kept apart from the cache,
        so a text of more distinct chunks than the cache holds still gets them all."""
        found = list(map(cache.recent.get, chunks))
        if None in found:
            missing = set(compress(chunks, map(not_, found)))
            unmerged: list[str] = []
            if cache is self._ids_cache:
                # The chunks no cache holds (a first pass's thousands), picked out in C.
                new = filterfalse(cache.older.__contains__, missing)
                new = filterfalse(self._cache.recent.__contains__, new)
                unmerged = list(filterfalse(self._cache.older.__contains__, new))
                missing.difference_update(unmerged)
            fresh: dict[str, _T] = {}
            for chunk in missing:
                entry = cache.get(chunk)
                fresh[chunk] = entry if entry is not None else self._entry(chunk, cache)
            if unmerged:
                # Merged on two cores when many (see pipeline.two_cores), IDs only: spans
                # asked later read their pieces back (_entry).
                merged = each_of(unmerged, self._merged_ids)
                self._ids_cache.put_new(unmerged, merged)
                fresh.update(zip(unmerged, merged, strict=True))  # type: ignore[arg-type]
            found = list(map(fresh.get, chunks, found))
        return found  # type: ignore[return-value]

    def _entry(self, chunk: str, cache: LruCache[str, _T]) -> _T:
        """What ``cache`` keeps of ``chunk``, which it lacks: merged unless the full cache
        has it (merging fills the full cache and the IDs' one)."""
        encoded = self._cache.get(chunk) or self._read_back(chunk) or self._encode_chunk(chunk)
        if cache is self._cache:
            return encoded  # type: ignore[return-value]
        if cache is self._ids_cache:
            return encoded.ids  # type: ignore[return-value]
        flat = _flat(encoded)  # made only for spans: a first pass of encode needs none
        self._flat_cache.put(chunk, flat)
        return flat  # type: ignore[return-value]

    def _merged(self, chunk: str) -> _Encoded:
        pieces = merge_pieces(chunk, self.ranks)
        return _Encoded.of(self._ids_of(pieces), pieces)

    def _merged_ids(self, chunk: str) -> tuple[int, ...]:
        """The IDs of ``chunk``'s merged pieces: all a first pass of encode keeps."""
        return self._ids_of(merge_pieces(chunk, self.ranks))

    def _ids_of(self, pieces: list[str]) -> tuple[int, ...]:
        return tuple(map(self._ids.get, pieces, repeat(UNK_ID)))

    def _read_back(self, chunk: str) -> _Encoded | None:
        """``chunk``'s entry from its IDs, if encode merged it: each piece is its ID's
        vocabulary entry (a piece learned twice maps to its first ID, of the same text),
        an unknown one a single character, the one at its place (no merge makes a piece
        of a character outside the alphabet)."""
        ids = self._ids_cache.get(chunk)
        if ids is None:
            return None
        vocab, pieces, at = self.vocab, [], 0
        for token_id in ids:
            piece = chunk[at] if token_id == UNK_ID else vocab[token_id]
            pieces.append(piece)
            at += len(piece)
        entry = _Encoded.of(ids, pieces)
        self._cache.put(chunk, entry)
        return entry

    def _encode_chunk(self, chunk: str) -> _Encoded:
        entry = self._merged(chunk)
        self._cache.put(chunk, entry)
        self._ids_cache.put(chunk, entry.ids)
        return entry

    # Decoding

    def tokens(self, ids: Iterable[int]) -> list[str]:
        """The vocabulary entry of each ID (list indexing: negative IDs count from the end)."""
        ids = as_ids(ids)
        vocab = self.vocab
        return [vocab[token_id] for token_id in ids]

    def decode(self, ids: Iterable[int]) -> str:
        """Text of ``ids``: ``<unk>`` shows as ⁇, other specials vanish, ▁ becomes a space."""
        ids = as_ids(ids)
        surfaces = self._surfaces
        return "".join([surfaces[token_id] for token_id in ids])

    # Files

    def save(self, path: str | Path) -> None:
        """Write the tokenizer as UTF-8 JSON (atomically; parent folders must exist)."""
        write_tokenizer_file(path, TokenizerFile(self.alphabet, self.merges, self.merge_counts))

    def save_hf(self, path: str | Path) -> None:
        """Write the tokenizer as a Hugging Face ``tokenizers`` file (``tokenizer.json``),
        atomically; ``tokenizers.Tokenizer.from_file`` then encodes and decodes as this
        tokenizer does (:mod:`glassllm.formats.hf_export` says where it cannot)."""
        save_hf(path, self.vocab, self.merges)

    @classmethod
    def load(cls, path: str | Path) -> Tokenizer:
        """Read a tokenizer written by :meth:`save` (with or without merge counts)."""
        contents = read_tokenizer_file(path)
        return cls(contents.alphabet, contents.merges, contents.merge_counts)


def _flat(entry: _Encoded) -> tuple[Any, ...]:
    """A chunk's tokens one after the other, as ``id, piece, length, first``."""
    flat: list[Any] = [0] * (4 * len(entry.ids))
    flat[0::4], flat[1::4], flat[2::4], flat[3::4] = entry.ids, entry.pieces, map(len, entry.pieces), entry.firsts
    return tuple(flat)


# Surrogates are UTF-16's halves of a code point: a Python str can hold one alone (from a
# JSON escape, or bytes decoded with surrogateescape), but no UTF-8 text can.
_SURROGATE = re.compile("[\ud800-\udfff]")
