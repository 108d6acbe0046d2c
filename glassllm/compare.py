"""The same text through several tokenizers, aligned chunk by chunk.

Every glassllm tokenizer runs the same first stages — NFC, ``▁`` for spaces, the chunk
rule — and differs only in its merges. So the chunks of a text are the same whatever the
tokenizer, and a comparison lines them up exactly: for each chunk, each tokenizer's pieces
and IDs. Nothing here re-implements a stage: each tokenizer's
:meth:`~glassllm.Tokenizer.encode_spans` does the whole pipeline, and its spans are grouped
by their chunk index.

A real model's tokenizer (:mod:`glassllm.formats`) cuts text with its own pre-tokenizer,
so beside glassllm's or another model's the rows are the stretches of text where every
tokenizer's chunks meet: still whole chunks of each, lined up on the text as given.

    >>> from glassllm import compare, packaged
    >>> result = compare("menina bonita", {"pt": packaged("pt"), "en": packaged("en")})
    >>> [chunk.chunk for chunk in result.chunks]
    ['menina', '▁bonita']
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

from glassllm.pipeline.any_tokenizer import AnyTokenizer
from glassllm.pipeline.chunks import mark_spaces
from glassllm.pipeline.tokens import ChunkExplanation, MergeStep, TokenSpan

__all__ = ["ComparedChunk", "Comparison", "TokenizerTotals", "by_difference", "compare"]


@dataclass(frozen=True)
class ComparedChunk:
    """One chunk of the text and how each tokenizer splits it (in the comparison's order)."""

    index: int
    chunk: str  # after NFC, spaces as ▁ (tokenizers that chunk differently: the text, spaces as ▁)
    start: int  # code-point offsets of the chunk in the text as given
    end: int
    pieces: tuple[tuple[str, ...], ...]  # per tokenizer
    ids: tuple[tuple[int, ...], ...]  # per tokenizer
    steps: tuple[tuple[MergeStep, ...], ...] = ()  # per tokenizer, when made from explanations

    @classmethod
    def from_explanations(
        cls, index: int, start: int, end: int, explanations: Sequence[ChunkExplanation]
    ) -> ComparedChunk:
        """The chunk as each tokenizer explains it (:meth:`Tokenizer.explain`; the same
        chunk, the tokenizers in order), with every tokenizer's merge steps."""
        return cls(
            index=index,
            chunk=explanations[0].chunk,
            start=start,
            end=end,
            pieces=tuple(tuple(item.pieces) for item in explanations),
            ids=tuple(tuple(item.ids) for item in explanations),
            steps=tuple(tuple(item.steps) for item in explanations),
        )

    @property
    def counts(self) -> tuple[int, ...]:
        """How many tokens each tokenizer makes of the chunk."""
        return tuple(map(len, self.pieces))

    @property
    def spread(self) -> int:
        """Most tokens minus fewest tokens: 0 when every tokenizer needs as many."""
        return max(self.counts) - min(self.counts)

    @property
    def same(self) -> bool:
        """Whether every tokenizer cuts the chunk into the same pieces."""
        return all(pieces == self.pieces[0] for pieces in self.pieces)


@dataclass(frozen=True)
class TokenizerTotals:
    """One tokenizer's counts for the whole text."""

    name: str
    tokens: int
    chunks: int
    characters: int  # of the text as given
    unknown: int  # tokens that are <unk>

    @property
    def chars_per_token(self) -> float:
        """Characters per token (0 for an empty text): higher means fewer, longer tokens."""
        return self.characters / self.tokens if self.tokens else 0.0


@dataclass(frozen=True)
class Comparison:
    """A text tokenized by several tokenizers: the chunks aligned, and the totals."""

    names: tuple[str, ...]
    chunks: list[ComparedChunk]
    totals: list[TokenizerTotals]

    def most_different(self, limit: int | None = None) -> list[ComparedChunk]:
        """The chunks the tokenizers split differently, in :func:`by_difference` order."""
        differing = [chunk for chunk in by_difference(self.chunks) if not chunk.same]
        return differing if limit is None else differing[:limit]


def by_difference(chunks: Sequence[ComparedChunk]) -> list[ComparedChunk]:
    """``chunks``, those the tokenizers split most differently first: the largest gap in
    token counts, then other pieces with equal counts, then the same pieces; ties in
    order of ``index``."""
    return sorted(chunks, key=lambda chunk: (-chunk.spread, chunk.same, chunk.index))


def _segments(text: str, chunkings: list[list[tuple[str, int, int]]]) -> list[tuple[str, int, int]]:
    """What the comparison lines up: the chunks themselves when every tokenizer cuts the
    text alike (every glassllm tokenizer does), else the stretches between the offsets
    where every tokenizer has a chunk boundary, shown as the text with spaces as ``▁``."""
    if all(chunking == chunkings[0] for chunking in chunkings):
        return chunkings[0]
    common = {0, len(text)}
    for index, chunking in enumerate(chunkings):
        bounds = {0, len(text)} | {start for _, start, _ in chunking} | {end for _, _, end in chunking}
        common = bounds if index == 0 else common & bounds
    bounds = sorted(common)
    return [(mark_spaces(text[start:end]), start, end) for start, end in pairwise(bounds) if start < end]


def compare(text: str, tokenizers: Mapping[str, AnyTokenizer]) -> Comparison:
    """Tokenize ``text`` with each of ``tokenizers`` (name → tokenizer, in the order to
    show them) and align the results chunk by chunk.

    Tokenizers that cut the text into different chunks (a real model's pre-tokenizer
    beside glassllm's chunk rule) are aligned on the stretches where all their chunks
    meet, so each row still holds whole chunks of every tokenizer."""
    if not tokenizers:
        raise ValueError("compare needs at least one tokenizer")
    names = tuple(tokenizers)
    chunkings = [tok.chunk_spans(text) for tok in tokenizers.values()]
    segments = _segments(text, chunkings)
    starts = [start for _, start, _ in segments]
    per_tokenizer: list[list[list[TokenSpan]]] = []
    for tok, chunking in zip(tokenizers.values(), chunkings, strict=True):
        # Each chunk falls in one segment: the last one starting at or before it.
        segment_of = [max(bisect_right(starts, start) - 1, 0) for _, start, _ in chunking]
        grouped: list[list[TokenSpan]] = [[] for _ in segments]
        for span in tok.encode_spans(text):
            grouped[segment_of[span.chunk]].append(span)
        per_tokenizer.append(grouped)
    chunks = [
        ComparedChunk(
            index=index,
            chunk=chunk,
            start=start,
            end=end,
            pieces=tuple(tuple(span.piece for span in grouped[index]) for grouped in per_tokenizer),
            ids=tuple(tuple(span.id for span in grouped[index]) for grouped in per_tokenizer),
        )
        for index, (chunk, start, end) in enumerate(segments)
    ]
    totals = [
        TokenizerTotals(
            name=name,
            tokens=sum(map(len, grouped)),
            chunks=len(chunking),
            characters=len(text),
            unknown=0 if tok.unk_id is None else sum(span.id == tok.unk_id for group in grouped for span in group),
        )
        for name, tok, chunking, grouped in zip(names, tokenizers.values(), chunkings, per_tokenizer, strict=True)
    ]
    return Comparison(names, chunks, totals)
