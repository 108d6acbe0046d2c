"""What every real model's tokenizer shares: the pipeline, its caches, offsets and explanations.

    text → special tokens (only when asked) → normalization → chunks (the model's
    pre-tokenizer) → initial symbols → merges, best-ranked first → pieces → IDs

A format (:mod:`~glassllm.formats.hf_bpe`, :mod:`~glassllm.formats.sentencepiece_bpe`,
:mod:`~glassllm.formats.tekken`) says how each stage goes for it by filling in the
``_``-methods of :class:`ModelTokenizer`; encoding, spans, explanations, the per-chunk
cache and the way back to offsets in the text as given are written once, here.

Offsets: a token's ``[start, end)`` covers the characters of the text as given whose
bytes (or code points) it holds. A character split over several tokens (a byte-level
piece that holds part of its UTF-8, or SentencePiece's byte fallback) is covered by each
of them: the only place spans overlap. A token that holds nothing of the text (the
dummy prefix ``▁`` of SentencePiece) is an empty span where it stands.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import accumulate, chain, compress, islice, repeat
from operator import add, attrgetter, not_, sub
from typing import Any, NamedTuple, TypeVar

from glassllm.formats.added_tokens import AddedFlags, find_added, pattern_of
from glassllm.formats.merging import Merge, merge_by_table, merge_symbols
from glassllm.pipeline.bpe import collector_paused

# One rule for what counts as text and as token IDs, glassllm's own tokenizer's.
from glassllm.pipeline.tokens import ChunkExplanation, MergeStep, TokenSpan, as_ids, require_text
from glassllm.pipeline.two_cores import each_of

__all__ = ["CUT_WITHIN_CONTEXT", "ChunkTokens", "ModelTokenizer", "Segment", "TokenColumns"]

# Distinct chunks kept before the cache starts afresh (as glassllm's own tokenizer does).
_CACHE_LIMIT = 1 << 17
# Chunks of more symbols than this merge by the heap (n log n), shorter ones by the table.
_TABLE_MERGE_LIMIT = 256

_T = TypeVar("_T")


_IDS, _PIECES, _STARTS, _ENDS = map(attrgetter, ("ids", "pieces", "starts", "ends"))

# A token column each: IDs, pieces, starts, ends, chunk numbers.
_Columns = tuple[Iterable[int], Iterable[str], Iterable[int], Iterable[int], Iterable[int]]

# ``tuple.__new__(TokenSpan, fields)`` builds a record without a Python-level call.
_new_span = tuple.__new__


class Segment(NamedTuple):
    """A stretch of the text as given: ordinary text, or one special token's text."""

    start: int
    end: int
    special: int | None  # the special token's ID, or None for ordinary text


class TokenColumns(NamedTuple):
    """The tokens of :meth:`ModelTokenizer.encode_spans`, a list per field: what the
    language server keeps of a document, built without a record per token."""

    ids: list[int]
    pieces: list[str]
    starts: list[int]
    ends: list[int]
    chunks: list[int]  # each token's chunk number


class ChunkTokens(NamedTuple):
    """A chunk's tokens, as the cache keeps them: offsets in the chunk's characters."""

    ids: tuple[int, ...]
    pieces: tuple[str, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]


class ModelTokenizer:
    """A real model's BPE tokenizer (a subclass per format), with glassllm's API.

    ``specials`` are the model's special tokens (text → ID); their text inside the user's
    text is ordinary text unless ``match_specials`` is set, as ``tiktoken``'s
    ``encode_ordinary`` and HF's ``split_special_tokens=True`` read it; with it set, they
    are matched as HF's ``encode`` matches them by default. ``around`` is what the model
    adds before and after a text's own tokens (BOS, a post-processor's
    ``<|begin_of_text|>``): never part of ``encode``, shown and counted apart.

    ``added_flags``: an added token's ``lstrip``, ``rstrip``, ``single_word`` by ID (see
    :mod:`~glassllm.formats.added_tokens`); ``normalized_added``: the tokens matched on
    the normalized text instead, by their normalized content.
    """

    kind = "BPE"  # a format's name, as shown to a person
    has_counts = False  # real models ship no training counts: steps give a rank or score
    priority_name = "rank"  # what orders the merges: "rank" (lower first) or "score" (higher first)
    unk_id: int | None = None

    def __init__(
        self,
        source: str,
        vocab: list[str],
        specials: dict[str, int],
        *,
        always_matched: dict[str, int] | None = None,
        match_specials: bool = False,
        around: tuple[Sequence[int], Sequence[int]] = ((), ()),
        added_flags: dict[int, AddedFlags] | None = None,
        normalized_added: dict[str, int] | None = None,
    ) -> None:
        self.source = source
        self.vocab = vocab
        self.specials = dict(specials)
        self.match_specials = match_specials
        self.around = (tuple(around[0]), tuple(around[1]))
        self._special_ids = frozenset(self.specials.values())
        matched = dict(always_matched or {})
        if match_specials:
            matched.update(self.specials)
        self._matched = matched
        self._matched_ids = frozenset(matched.values())
        self._flags = added_flags or {}
        later = {*(normalized_added or {}).values()}
        # Found on the text as given: special tokens read as text too, when anything is
        # matched at all, to be passed over as HF passes over them.
        self._raw_ids = {text: token_id for text, token_id in matched.items() if token_id not in later}
        found = [text for text, token_id in {**self.specials, **matched}.items() if token_id not in later]
        self._special_pattern = pattern_of(found) if self._raw_ids else None
        self._normalized_ids = {
            text: token_id for text, token_id in (normalized_added or {}).items() if token_id in self._matched_ids
        }
        self._normalized_pattern = pattern_of(list(normalized_added or {})) if self._normalized_ids else None
        self._cache: dict[str, ChunkTokens] = {}
        self._ids_cache: dict[str, tuple[int, ...]] = {}  # the same IDs, for encode's fast path
        self._flat_cache: dict[str, tuple[Any, ...]] = {}  # the same tokens, for spans (see _flat_of)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.kind}, {self.vocab_size} entries, from {self.source}>"

    @property
    def vocab_size(self) -> int:
        """The number of vocabulary entries, special tokens included."""
        return len(self.vocab)

    # What a format fills in

    def _normalize(self, text: str, at_start: bool) -> tuple[str, list[int] | None]:
        """The segment ``text`` normalized, and the map from normalized boundaries back
        to ``text`` (``None``: the identity); ``at_start``: the segment opens the text."""
        return text, None

    def _origin_span(self, origin: list[int], start: int, end: int) -> tuple[int, int]:
        """Where the normalized ``[start, end)`` lies in the segment as given, read from the
        ``origin`` that :meth:`_normalize` returned (a format may keep another map there)."""
        return origin[start], origin[end]

    def _chunk_bounds(self, normalized: str) -> Iterable[tuple[int, int]]:
        """Where the pre-tokenizer cuts ``normalized``: each chunk's ``[start, end)``."""
        return ((0, len(normalized)),)

    def _chunk_texts(self, normalized: str) -> list[str]:
        """The chunks of ``normalized`` themselves (a format may find them faster than
        their bounds)."""
        return [normalized[start:end] for start, end in self._chunk_bounds(normalized)]

    def _symbols(self, chunk: str) -> list[str]:
        """The symbols merging starts from."""
        raise NotImplementedError

    def _rank(self, left: str, right: str) -> float | None:
        """The priority of merging ``left`` and ``right`` (lower first), or ``None``."""
        raise NotImplementedError

    # ``(priorities, separator)`` when :meth:`_rank` is ``priorities[left + separator +
    # right]``: then short chunks merge by the table (see merging.merge_by_table).
    _merge_table: tuple[Mapping[str, float], str] | None = None

    @staticmethod
    def _join(left: str, right: str) -> str:
        """The symbol that merging ``left`` and ``right`` makes."""
        return left + right

    def _whole(self, chunk: str, symbols: list[str]) -> int | None:
        """The ID that stands for the whole chunk without merging, if the format has one."""
        return None

    def _tokens(self, chunk: str, pieces: list[str]) -> ChunkTokens:
        """IDs, pieces and character offsets in ``chunk`` of the final ``pieces``."""
        raise NotImplementedError

    def _step(self, merge: Merge) -> tuple[int, float | None]:
        """``(rank, score)`` of a merge as an explanation shows it."""
        return int(merge.priority), None

    def readable(self, piece: str) -> str:
        """``piece`` as a person reads it (the text it holds, spaces as ``▁``)."""
        return piece

    def decode(self, ids: Iterable[int]) -> str:
        """The text of ``ids``; special tokens vanish."""
        raise NotImplementedError

    # Whether a segment after a matched special token is normalized as a text's start
    # (HF's Prepend normalizer works on each segment: see metaspace.Prefix).
    _segments_open = False

    def _opens(self, segment: Segment, at_start: bool) -> bool:
        """Whether ``segment`` is normalized as the start of a text (its dummy prefix)."""
        return at_start if segment.start == 0 else self._segments_open

    # The pipeline

    def segments(self, text: str) -> list[Segment]:
        """``text`` cut at the special tokens matched in it (none unless matched)."""
        if self._special_pattern is None or not text:
            return [Segment(0, len(text), None)] if text else []
        found: list[Segment] = []
        at = 0
        for start, end, token_id in find_added(self._special_pattern, self._raw_ids, self._flags, text):
            if start > at:
                found.append(Segment(at, start, None))
            found.append(Segment(start, end, token_id))
            at = end
        if at < len(text):
            found.append(Segment(at, len(text), None))
        return found

    def chunk_spans(self, text: str, *, at_start: bool = True) -> list[tuple[str, int, int]]:
        """Each chunk (normalized, as merging sees it) with its ``[start, end)`` in ``text``;
        a matched special token is a chunk of its own. ``at_start=False``: ``text``
        continues a text (see :meth:`can_cut`), so no dummy prefix opens it."""
        return [(chunk, start, end) for chunk, start, end, _ in self._chunks(text, at_start)]

    def can_cut(self, before: str, after: str) -> bool:
        """Whether a text ``before + after``, where ``before`` ends with a line break, can be
        tokenized in two: ``before`` as it is, then ``after`` with ``at_start=False``, each
        token and chunk the same as those of the whole (offsets shifted). ``before`` need
        only hold the line before the cut (its last few hundred characters are read).

        The language server tokenizes a document in blocks of lines cut where this holds,
        so that an edit re-tokenizes the blocks it touches. Regex pre-tokenizers (Llama 3's
        ``\\s*[\\r\\n]+``, GPT-2's ``\\s+(?!\\S)``) can cross a line break, but only within a
        run of whitespace (and a punctuation chunk's trailing line breaks): with a
        character that is not whitespace on each side of the cut, what the pattern does
        near the cut is decided inside that window, so chunking the window whole and in
        two shows whether the cut changes anything (see :meth:`_cut_in_window`).
        """
        if not after:
            return True
        if not before.endswith(("\n", "\r")) or not self._cuttable:
            return False
        head = _first_ink(after)
        tail = before[-_CUT_WINDOW:]
        last_ink = _first_ink(tail[::-1])
        if head is None or last_ink is None:
            return False
        # From a little before the last character that is not whitespace: what the
        # pattern does at the cut depends on that character's chunk ending, not where
        # the chunk starts, and both sides of the comparison start alike.
        tail = tail[max(len(tail) - last_ink - 1 - _INK_CONTEXT, 0) :]
        return self._cut_in_window(tail, after[: head + 1])

    def can_cut_within(self, text: str, position: int) -> bool:
        """Whether ``text`` can be tokenized in two at ``position`` inside a line:
        ``text[:position]`` as it is, then ``text[position:]`` with ``at_start=False``,
        each token and chunk the same as those of the whole (offsets shifted).

        The language server cuts a very long line there. Only an ASCII space between two
        ASCII letters is a candidate: no pre-tokenizer here takes a space after a letter
        into the letter's chunk (a letter run, a contraction, ends at the space), so a
        chunk starts at the space; what the pattern does from there depends on the text
        from there on only (a pattern that looks behind is never cut), and NFC never
        composes across an ASCII character. Chunking the window around the position
        whole and in two confirms it for the model at hand (see :meth:`_cut_in_window`).
        """
        if not self._cuttable or not 0 < position < len(text) - 1 or text[position] != " ":
            return False
        if not (_is_ascii_letter(text[position - 1]) and _is_ascii_letter(text[position + 1])):
            return False
        tail = text[max(position - CUT_WITHIN_CONTEXT, 0) : position]
        return self._cut_in_window(tail, text[position : position + CUT_WITHIN_CONTEXT])

    def _cut_in_window(self, tail: str, head: str) -> bool:
        """Whether ``tail + head`` chunks as ``tail`` and then ``head`` (continued) do."""
        if self._special_pattern is None and self._normalized_pattern is None:
            # Nothing matched: where normalizing changes nothing and the chunks tile each
            # text, their texts alone tell (the server asks this of every line).
            whole = self._plain_chunks(tail + head, True)
            left = self._plain_chunks(tail, True)
            right = self._plain_chunks(head, False)
            if whole is not None and left is not None and right is not None:
                return whole == left + right
        return self._spans_agree(tail, head)

    def _plain_chunks(self, text: str, at_start: bool) -> list[str] | None:
        """``text``'s chunks where normalizing leaves it as it is and they tile it (so
        their texts give their spans), else ``None``."""
        normalized, origin = self._normalize(text, at_start)
        if origin is not None or normalized != text:
            return None
        chunks = self._chunk_texts(text)
        return chunks if sum(map(len, chunks)) == len(text) else None

    def _spans_agree(self, tail: str, head: str) -> bool:
        """:meth:`_cut_in_window` by the chunks' spans, whatever the format does."""
        whole = self.chunk_spans(tail + head)
        left = self.chunk_spans(tail)
        right = self.chunk_spans(head, at_start=False)
        shift = len(tail)
        return whole == left + [(chunk, start + shift, end + shift) for chunk, start, end in right]

    # Whether lines can be tokenized apart at all (a format with look-behind in its
    # pattern, say, cannot): see can_cut.
    _cuttable = True

    def _chunks(
        self, text: str, at_start: bool = True
    ) -> Iterator[tuple[str, int, int, tuple[int, list[int] | None, int] | int]]:
        """Each chunk, its span in ``text`` and how to place offsets inside it: ``(segment
        start, origin, chunk start in the normalized segment)``, or a matched token's ID."""
        for segment in self.segments(text):
            if segment.special is not None:
                yield text[segment.start : segment.end], segment.start, segment.end, segment.special
                continue
            normalized, origin = self._normalize(text[segment.start : segment.end], self._opens(segment, at_start))
            for start, end, token_id in self._cuts(normalized, origin):
                if origin is None:
                    span = (segment.start + start, segment.start + end)
                else:
                    first, last = self._origin_span(origin, start, end)
                    span = (segment.start + first, segment.start + last)
                place = (segment.start, origin, start) if token_id is None else token_id
                yield normalized[start:end], span[0], span[1], place

    def _cuts(self, normalized: str, origin: list[int] | None) -> Iterator[tuple[int, int, int | None]]:
        """The chunks of a normalized segment, with the added tokens matched on the
        normalized text (their ID; ``None`` for a chunk the model encodes): the
        pre-tokenizer cuts each stretch between them apart."""
        if self._normalized_pattern is None:
            yield from ((start, end, None) for start, end in self._chunk_bounds(normalized))
            return
        at = 0
        found = self._added_in(normalized, origin)
        for start, end, token_id in [*found, (len(normalized), len(normalized), None)]:
            if start > at:
                yield from ((at + first, at + last, None) for first, last in self._chunk_bounds(normalized[at:start]))
            if token_id is not None:
                yield start, end, token_id
            at = end

    def _added_in(self, normalized: str, origin: list[int] | None) -> list[tuple[int, int, int]]:
        """The added tokens matched on a normalized segment (``origin``: what
        :meth:`_normalize` returned with it; a format that matched them there keeps them in it)."""
        if self._normalized_pattern is None:
            return []
        return list(find_added(self._normalized_pattern, self._normalized_ids, self._flags, normalized))

    def _encode_chunk(self, chunk: str) -> ChunkTokens:
        entry = self._cache.get(chunk)
        if entry is None:
            ids = self._ids_cache.get(chunk)
            entry = self._entry(chunk) if ids is None else self._entry_of_ids(chunk, ids)
            self._make_room(self._cache)
            self._cache[chunk] = entry
            self._ids_cache[chunk] = entry.ids
        return entry

    def _chunk_ids(self, chunk: str) -> tuple[int, ...]:
        """The IDs of a chunk the IDs' cache lacks (so the entries' cache, whose chunks
        it always holds, lacks it too): merged without the pieces and offsets of an
        entry, which a first pass of ``encode`` would build for nothing."""
        symbols = self._symbols(chunk)
        whole = self._whole(chunk, symbols)
        return (whole,) if whole is not None else self._ids_of(chunk, self._merged(symbols))

    def _make_room(self, cache: dict[str, Any]) -> None:
        """Start every cache afresh when ``cache`` is full (they hold the same chunks)."""
        if len(cache) >= _CACHE_LIMIT:
            self._cache.clear()
            self._ids_cache.clear()
            self._flat_cache.clear()

    def _entry(self, chunk: str) -> ChunkTokens:
        """A chunk's tokens, merged."""
        symbols = self._symbols(chunk)
        whole = self._whole(chunk, symbols)
        if whole is not None:
            return ChunkTokens((whole,), (self.vocab[whole],), (0,), (len(chunk),))
        return self._tokens(chunk, self._merged(symbols))

    def _ids_of(self, chunk: str, pieces: list[str]) -> tuple[int, ...]:
        """The IDs of a chunk's final ``pieces`` (a format may find them without the rest
        of :meth:`_tokens`)."""
        return self._tokens(chunk, pieces).ids

    def _entry_of_ids(self, chunk: str, ids: tuple[int, ...]) -> ChunkTokens:
        """A chunk's tokens when its IDs are known (a format that can read the pieces
        back from them need not merge again)."""
        return self._entry(chunk)

    # Whether every chunk encoded so far ends with a token that ends where it does, so that
    # a text's token ends are running sums of its tokens' advances (see _segment_columns).
    _flat_tiles = True

    def _flat_of(self, chunk: str, entry: ChunkTokens) -> tuple[Any, ...]:
        """The chunk's tokens one after the other as ``(id, piece, advance, length, first)``:
        ``advance`` is how far the token's end lies past the previous token's (or the
        chunk's start), ``first`` is 1 for the chunk's first token. Chained over a text's
        chunks and sliced, these give every column in a pass each."""
        if len(entry.ids) == 1 and entry.starts[0] == 0 and entry.ends[0] == len(chunk):
            return (entry.ids[0], entry.pieces[0], len(chunk), len(chunk), 1)
        if not entry.ends or entry.ends[-1] != len(chunk):
            self._flat_tiles = False
            return ()
        count = len(entry.ids)
        flat: list[Any] = [0] * (5 * count)
        flat[0::5], flat[1::5] = entry.ids, entry.pieces
        flat[2::5] = map(sub, entry.ends, (0, *entry.ends[:-1]))
        flat[3::5] = map(sub, entry.ends, entry.starts)
        flat[4::5] = (1,) + (0,) * (count - 1)
        return tuple(flat)

    def _merged(self, symbols: list[str]) -> list[str]:
        table = self._merge_table
        if table is not None and len(symbols) <= _TABLE_MERGE_LIMIT:
            return merge_by_table(symbols, *table)
        return merge_symbols(symbols, self._rank, join=self._join)[0]

    def _fill(self, chunks: list[str], found: list[_T | None], cache: dict[str, _T]) -> list[_T]:
        """``found`` (each chunk's entry in ``cache``, ``None`` where it has none) with the
        missing entries encoded: each distinct chunk once, in C but for the merging (for
        ``encode``, many on two cores: see :mod:`~glassllm.pipeline.two_cores`), and kept
        apart from the cache, so a text of more distinct chunks than the cache holds
        still gets them all."""
        missing = list(set(compress(chunks, map(not_, found))))
        fresh: dict[str, _T] = {}
        if cache is self._ids_cache:
            for chunk, ids in zip(missing, each_of(missing, self._chunk_ids), strict=True):
                self._make_room(self._ids_cache)
                self._ids_cache[chunk] = fresh[chunk] = ids  # type: ignore[assignment]
            return list(map(fresh.get, chunks, found))  # type: ignore[arg-type]
        for chunk in missing:
            entry = self._encode_chunk(chunk)  # fills the cache and the IDs' cache
            if cache is self._flat_cache:
                # Made only for spans: a first pass of encode needs none.
                self._flat_cache[chunk] = self._flat_of(chunk, entry)
            fresh[chunk] = cache[chunk]
        return list(map(fresh.get, chunks, found))  # type: ignore[arg-type]

    def encode(self, text: str) -> list[int]:
        """The IDs of ``text``'s own tokens: nothing added around them (see ``around``)."""
        require_text(text)
        ids: list[int] = []
        # Lists and tuples of strings and ints only: as for encode_spans' records, the
        # collections a first pass's allocations trigger would find nothing to free.
        with collector_paused():
            for found in self._segments_chunk_ids(text, True):
                ids.extend(chain.from_iterable(found))
        return ids

    def encode_chunks(self, text: str, *, at_start: bool = True) -> list[tuple[int, ...]]:
        """:meth:`encode`'s IDs chunk by chunk (a matched added token is a chunk of its
        own), without offsets: what counting chunks and tokens needs (``at_start``: see
        :meth:`encode_spans`)."""
        require_text(text)
        with collector_paused():
            return list(chain.from_iterable(self._segments_chunk_ids(text, at_start)))

    def plain_chunk_ids(self, text: str, *, at_start: bool = True) -> tuple[list[str], list[tuple[int, ...]]] | None:
        """``text``'s chunks and the IDs of each, as :meth:`encode_chunks` gives them, where
        no added token is matched in it, normalizing leaves it as it is and its chunks tile
        it, so that their texts give every chunk's span; else ``None``. What the language
        server keeps of a line until something reads its tokens."""
        require_text(text)
        special = self._special_pattern
        if self._normalized_pattern is not None or (special is not None and special.search(text)):
            return None
        chunks = self._plain_chunks(text, at_start)
        if chunks is None:
            return None
        with collector_paused():
            return chunks, self._ids_of_chunks(chunks)

    def _segments_chunk_ids(self, text: str, at_start: bool) -> Iterator[list[tuple[int, ...]]]:
        """Each segment's chunks' IDs, chunk by chunk."""
        for segment in self.segments(text):
            if segment.special is not None:
                yield [(segment.special,)]
                continue
            normalized, origin = self._normalize(text[segment.start : segment.end], self._opens(segment, at_start))
            if self._normalized_pattern is not None:
                yield list(self._normalized_ids_of(normalized, origin))
                continue
            yield self._ids_of_chunks(self._chunk_texts(normalized))

    def _ids_of_chunks(self, chunks: list[str]) -> list[tuple[int, ...]]:
        """Each chunk's IDs, from the IDs' cache, the chunks it lacks merged IDs only."""
        found = list(map(self._ids_cache.get, chunks))
        if None in found:
            found = self._fill(chunks, found, self._ids_cache)
        return found  # type: ignore[return-value]

    def _normalized_ids_of(self, normalized: str, origin: list[int] | None) -> Iterator[tuple[int, ...]]:
        for start, end, token_id in self._cuts(normalized, origin):
            yield (token_id,) if token_id is not None else self._encode_chunk(normalized[start:end]).ids

    def encode_spans(self, text: str, *, at_start: bool = True) -> list[TokenSpan]:
        """One :class:`~glassllm.TokenSpan` per token of ``encode(text)``, with offsets
        in ``text`` (see the module's docstring for split characters); ``at_start=False``:
        ``text`` continues a text (see :meth:`can_cut`)."""
        require_text(text)
        columns = self._column_iterables(text, at_start)
        # Records of strings and ints only: the collections that allocating millions of
        # them triggers would find nothing to free. The columns are zipped as they are
        # made, never held as lists.
        with collector_paused():
            return list(map(_new_span, repeat(TokenSpan), zip(*columns, strict=True)))

    def _spans_one_by_one(self, text: str, at_start: bool) -> list[TokenSpan]:
        """:meth:`encode_spans` chunk by chunk, for a format that places offsets its own way."""
        spans: list[TokenSpan] = []
        for index, (chunk, start, end, place) in enumerate(self._chunks(text, at_start)):
            if isinstance(place, int):
                spans.append(TokenSpan(place, chunk, start, end, index))
                continue
            entry = self._encode_chunk(chunk)
            for token_id, piece, first, last in zip(entry.ids, entry.pieces, entry.starts, entry.ends, strict=True):
                spans.append(TokenSpan(token_id, piece, *self._place(place, first, last), index))
        return spans

    def encode_columns(self, text: str, *, at_start: bool = True) -> TokenColumns:
        """:meth:`encode_spans` as columns: what the language server keeps of a document,
        built column by column, each a pass in C, without a record per token."""
        require_text(text)
        ids, pieces, starts, ends, chunks = self._column_iterables(text, at_start)
        return TokenColumns(list(ids), list(pieces), list(starts), list(ends), list(chunks))

    def _column_iterables(self, text: str, at_start: bool) -> _Columns:
        """The five columns of ``text``'s tokens (see :class:`TokenColumns`), each an
        iterable to be read once."""
        # Offsets placed a format's own way, or added tokens matched inside normalized text:
        # chunk by chunk.
        if self._normalized_pattern is not None or type(self)._origin_span is not ModelTokenizer._origin_span:
            spans = self._spans_one_by_one(text, at_start)
            return tuple(zip(*spans, strict=True)) if spans else _no_columns()  # type: ignore[return-value]
        parts: list[_Columns] = []
        number = 0
        for segment in self.segments(text):
            if segment.special is not None:
                piece = text[segment.start : segment.end]
                parts.append(([segment.special], [piece], [segment.start], [segment.end], [number]))
                number += 1
                continue
            normalized, origin = self._normalize(text[segment.start : segment.end], self._opens(segment, at_start))
            number, part = self._segment_columns(normalized, origin, segment.start, number)
            parts.append(part)
        if len(parts) == 1:
            return parts[0]
        return tuple(map(chain.from_iterable, zip(*parts, strict=True))) if parts else _no_columns()  # type: ignore[return-value]

    def _segment_columns(
        self, normalized: str, origin: list[int] | None, offset: int, number: int
    ) -> tuple[int, _Columns]:
        """The number of the chunk after those of a normalized segment (``origin``: see
        :meth:`_normalize`) that starts at ``offset`` in the text, and its tokens' columns."""
        texts = self._chunk_texts(normalized)
        base = offset if origin is None else 0
        if sum(map(len, texts)) != len(normalized):  # the pattern leaves text out of every chunk
            bounds = list(self._chunk_bounds(normalized))
            texts = [normalized[start:end] for start, end in bounds]
            return self._shifted_columns(texts, [start + base for start, _ in bounds], origin, offset, number)
        if self._flat_tiles:
            flats: list[Any] = list(map(self._flat_cache.get, texts))
            if None in flats:
                flats = self._fill(texts, flats, self._flat_cache)
            if self._flat_tiles:
                # Chunks tile the segment: running sums of the tokens' advances are their ends.
                flat = list(chain.from_iterable(flats))
                starts, ends = _placed(flat[2::5], flat[3::5], base, origin, offset)
                chunks = islice(accumulate(flat[4::5], initial=number - 1), 1, None)
                return number + len(flats), (flat[0::5], flat[1::5], starts, ends, chunks)
        return self._shifted_columns(texts, accumulate(map(len, texts), initial=base), origin, offset, number)

    def _shifted_columns(
        self, texts: list[str], firsts: Iterable[int], origin: list[int] | None, offset: int, number: int
    ) -> tuple[int, _Columns]:
        """:meth:`_segment_columns` for chunks that start at ``firsts`` (in the normalized
        segment, or in the text when ``origin`` is ``None``), each token placed by its
        chunk's start."""
        found = list(map(self._cache.get, texts))
        if None in found:
            found = self._fill(texts, found, self._cache)
        counts = list(map(len, map(_IDS, found)))
        # Each chunk's offsets are shifted by its start, repeated once per token.
        shifts = list(chain.from_iterable(map(repeat, firsts, counts)))
        starts: Iterable[int] = map(add, chain.from_iterable(map(_STARTS, found)), shifts)
        ends: Iterable[int] = map(add, chain.from_iterable(map(_ENDS, found)), shifts)
        if origin is not None:
            starts, ends = (map(add, map(origin.__getitem__, column), repeat(offset)) for column in (starts, ends))
        chunks = chain.from_iterable(map(repeat, range(number, number + len(found)), counts))
        ids = chain.from_iterable(map(_IDS, found))
        pieces = chain.from_iterable(map(_PIECES, found))
        return number + len(found), (ids, pieces, starts, ends, chunks)

    def explain(self, text: str, *, at_start: bool = True) -> list[ChunkExplanation]:
        """Every chunk of ``text`` with each merge step in the order the model applies
        them, with its rank (or score); ``count`` is ``None``: models ship no counts.
        ``at_start=False``: ``text`` continues a text (see :meth:`can_cut`)."""
        require_text(text)
        explanations = []
        for index, (chunk, start, end, place) in enumerate(self._chunks(text, at_start)):
            if isinstance(place, int):
                token_id = place
                explanations.append(ChunkExplanation(index, chunk, start, end, [chunk], [], [chunk], [token_id]))
                continue
            symbols = self._symbols(chunk)
            steps = [] if self._whole(chunk, symbols) is not None else self._steps(symbols)
            entry = self._encode_chunk(chunk)
            explanations.append(
                ChunkExplanation(index, chunk, start, end, symbols, steps, list(entry.pieces), list(entry.ids))
            )
        return explanations

    def _steps(self, symbols: list[str]) -> list[MergeStep]:
        _, merges = merge_symbols(symbols, self._rank, record=True, join=self._join)
        state: list[str | None] = list(symbols)
        steps = []
        for merge in merges:
            # The right symbol is the next one still standing after the merge's position.
            right = next(i for i in range(merge.position + 1, len(state)) if state[i] is not None)
            result = self._join(merge.left, merge.right)
            state[merge.position] = result
            state[right] = None
            rank, score = self._step(merge)
            pieces = [symbol for symbol in state if symbol is not None]
            steps.append(MergeStep(rank, (merge.left, merge.right), result, None, pieces, score))
        return steps

    # How the model turns a chunk into pieces, for a person: merges, or (a model that does
    # not merge) the search that :meth:`search` shows.
    method = "merges"

    def search(self, chunk: str) -> dict[str, object] | None:
        """How a model that does not merge cut ``chunk`` (a chunk as :meth:`explain` gives
        it), as plain data (``glassllm explain --json``'s ``"search"``); ``None`` for a
        BPE model, whose merge steps say it."""
        return None

    def derivation(self, piece: str) -> list[tuple[str, str, str]]:
        """How ``piece`` (a vocabulary entry) is built: ``(result, left, right)``
        merges, the last one first."""
        require_text(piece)
        _, merges = merge_symbols(self._symbols_of_piece(piece), self._rank, record=True, join=self._join)
        return [(self._join(m.left, m.right), m.left, m.right) for m in reversed(merges)]

    def is_matched(self, token_id: int) -> bool:
        """Whether ``token_id`` is a token matched as a whole in the text (a special one
        read as special, an added one), never built by merges."""
        return token_id in self._matched_ids

    def merge_order(self, left: str, right: str) -> tuple[int, float | None] | None:
        """``(rank, score)`` of the merge of ``left`` and ``right`` as an explanation's
        step gives them: its rank (lower merges first) and, where scores order the merges
        (see ``priority_name``), its piece's score; ``None``: they do not merge."""
        found = self._rank(left, right)
        return None if found is None else self._step(Merge(found, 0, left, right))

    def _place(self, place: tuple[int, list[int] | None, int], first: int, last: int) -> tuple[int, int]:
        """A token's ``[first, last)`` in its chunk as offsets in the text as given."""
        segment, origin, chunk = place
        if origin is None:
            return segment + chunk + first, segment + chunk + last
        start, end = self._origin_span(origin, chunk + first, chunk + last)
        return segment + start, segment + end

    def _symbols_of_piece(self, piece: str) -> list[str]:
        return self._symbols(piece)

    def tokens(self, ids: Iterable[int]) -> list[str]:
        """The vocabulary entry of each ID, as the model's files write it."""
        vocab = self.vocab
        return [vocab[token_id] for token_id in as_ids(ids)]


# How much of the text before a cut can_cut reads: the whitespace run before the cut
# must end within it.
_CUT_WINDOW = 256
# Characters kept before that one (a contraction such as "'ll", a run of three digits).
_INK_CONTEXT = 16


# How much of the text on each side of a position can_cut_within reads.
CUT_WITHIN_CONTEXT = 16


def _no_columns() -> TokenColumns:
    return TokenColumns([], [], [], [], [])


def _placed(
    advances: list[int], lengths: list[int], base: int, origin: list[int] | None, offset: int
) -> tuple[list[int], list[int]]:
    """The starts and ends of tokens that tile a segment from ``base`` on, each ending
    ``advances`` past the one before and ``lengths`` long (read through ``origin``)."""
    positions = list(accumulate(advances, initial=base))
    if sum(lengths) == positions[-1] - base:  # no token shares a character with the one before
        placed = _through(origin, positions, offset)
        return placed[:-1], placed[1:]
    ends = positions[1:]
    return _through(origin, list(map(sub, ends, lengths)), offset), _through(origin, ends, offset)


def _through(origin: list[int] | None, positions: list[int], offset: int) -> list[int]:
    """Normalized ``positions`` as offsets in the text (``origin``: see ``_normalize``)."""
    if origin is None:
        return positions
    positions = list(map(origin.__getitem__, positions))
    return list(map(add, positions, repeat(offset))) if offset else positions


def _first_ink(text: str) -> int | None:
    """The offset of ``text``'s first character that is not whitespace (``str.isspace``,
    which holds every ``\\s`` of the models' patterns), or ``None``."""
    stripped = text.lstrip()
    return len(text) - len(stripped) if stripped else None


def _is_ascii_letter(character: str) -> bool:
    return character.isascii() and character.isalpha()
