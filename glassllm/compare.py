"""The same text through several tokenizers, aligned chunk by chunk.

Every glassllm tokenizer runs the same first stages — NFC, ``▁`` for spaces, the chunk
rule — and differs only in its merges. So the chunks of a text are the same whatever the
tokenizer, and a comparison lines them up exactly: for each chunk, each tokenizer's pieces
and IDs. Nothing here re-implements a stage: each tokenizer's
:meth:`~glassllm.Tokenizer.encode_spans` does the whole pipeline, and its spans are grouped
by their chunk index.

    >>> from glassllm import compare, packaged
    >>> result = compare("menina bonita", {"pt": packaged("pt"), "en": packaged("en")})
    >>> [chunk.chunk for chunk in result.chunks]
    ['menina', '▁bonita']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from operator import attrgetter

from glassllm.chunks import pre_tokenize
from glassllm.tokenizer import UNK_ID, ChunkExplanation, MergeStep, Tokenizer, TokenSpan

__all__ = ["ComparedChunk", "Comparison", "TokenizerTotals", "by_difference", "compare"]

_CHUNK = attrgetter("chunk")


@dataclass(frozen=True)
class ComparedChunk:
    """One chunk of the text and how each tokenizer splits it (in the comparison's order)."""

    index: int
    chunk: str  # after NFC, spaces as ▁
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


def _by_chunk(spans: list[TokenSpan]) -> list[list[TokenSpan]]:
    return [list(group) for _, group in groupby(spans, _CHUNK)]


def compare(text: str, tokenizers: Mapping[str, Tokenizer]) -> Comparison:
    """Tokenize ``text`` with each of ``tokenizers`` (name → tokenizer, in the order to
    show them) and align the results chunk by chunk."""
    if not tokenizers:
        raise ValueError("compare needs at least one tokenizer")
    names = tuple(tokenizers)
    chunk_texts = pre_tokenize(text)
    grouped = [_by_chunk(tok.encode_spans(text)) for tok in tokenizers.values()]
    for name, groups in zip(names, grouped, strict=False):
        if len(groups) != len(chunk_texts):  # the chunk rule is shared; this cannot happen
            raise AssertionError(f"tokenizer {name} cut {len(groups)} chunks where the text has {len(chunk_texts)}")
    chunks = []
    for index, chunk_text in enumerate(chunk_texts):
        per_tokenizer = [groups[index] for groups in grouped]
        first = per_tokenizer[0]
        chunks.append(
            ComparedChunk(
                index=index,
                chunk=chunk_text,
                start=first[0].start,
                end=first[-1].end,
                pieces=tuple(tuple(span.piece for span in spans) for spans in per_tokenizer),
                ids=tuple(tuple(span.id for span in spans) for spans in per_tokenizer),
            )
        )
    totals = [
        TokenizerTotals(
            name=name,
            tokens=sum(map(len, group_list)),
            chunks=len(chunk_texts),
            characters=len(text),
            unknown=sum(span.id == UNK_ID for group in group_list for span in group),
        )
        for name, group_list in zip(names, grouped, strict=False)
    ]
    return Comparison(names, chunks, totals)
