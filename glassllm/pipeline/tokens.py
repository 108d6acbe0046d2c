"""What every tokenizer gives, glassllm's own and real models': its tokens placed in the
text and its chunks explained merge by merge, and the checks on what callers hand it.

:class:`~glassllm.tokenizer.Tokenizer` and the real models' tokenizers
(:class:`~glassllm.formats.model_tokenizer.ModelTokenizer`) both build these records and
refuse the same wrong arguments with the same errors, so they live here, where both import
them.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from glassllm.pipeline.bpe import Pair

__all__ = ["ChunkExplanation", "MergeStep", "Span", "TokenSpan", "as_ids", "require_text"]


class TokenSpan(NamedTuple):
    """One token of :meth:`~glassllm.Tokenizer.encode_spans` (and of every tokenizer's ``encode_spans``).

    ``start`` and ``end`` are code-point offsets into the text as given (before NFC);
    ``chunk`` is the index of the chunk the token belongs to. ``piece`` is the piece as
    BPE produced it, so for an ``<unk>`` token it is the unknown character itself.
    """

    id: int
    piece: str
    start: int
    end: int
    chunk: int


class Span(Protocol):
    """A token placed in a text, as code that shows tokens reads it: its ID and piece,
    its code-point offsets ``[start, end)`` and the index of its chunk.

    :class:`TokenSpan` is one; so is any record with these fields, such as the language
    server's spans of one line (offsets within the line)."""

    @property
    def id(self) -> int: ...
    @property
    def piece(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def chunk(self) -> int: ...


@dataclass(frozen=True)
class MergeStep:
    """One step of BPE on a chunk: every occurrence of ``pair`` became ``result``."""

    rank: int
    pair: Pair
    result: str
    count: int | None  # how often training saw the pair when it chose it, if recorded
    pieces: list[str]  # the chunk's pieces after this step
    score: float | None = None  # a SentencePiece model's score of ``result`` (it orders the merges)


@dataclass(frozen=True)
class ChunkExplanation:
    """How one chunk became tokens: its characters, each merge step, the final pieces."""

    index: int
    chunk: str
    start: int  # code-point offsets of the chunk in the text as given
    end: int
    characters: list[str]
    steps: list[MergeStep]
    pieces: list[str]
    ids: list[int]


def require_text(text: object) -> None:
    """Refuse anything but a ``str`` where text is expected, naming what came instead."""
    if not isinstance(text, str):
        raise TypeError(f"expected text as str, got {type(text).__name__}")


def as_ids(ids: object) -> list[int]:
    """``ids`` as a list of ints (anything with ``__index__``); text or bytes, which
    iterate too, are refused."""
    if isinstance(ids, (str, bytes, bytearray)):
        raise TypeError(f"expected a sequence of token IDs (int), got {type(ids).__name__}")
    try:
        return [operator.index(token_id) for token_id in ids]  # type: ignore[attr-defined]
    except TypeError:
        raise TypeError(f"expected a sequence of token IDs (int), got {ids!r:.80}") from None
