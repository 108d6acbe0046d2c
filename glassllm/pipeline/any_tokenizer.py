"""AnyTokenizer: what every tokenizer glassllm reads offers, its own and real models'.

glassllm's :class:`~glassllm.Tokenizer` (character-level BPE with training counts) and
the real models' tokenizers of :mod:`glassllm.formats` (Hugging Face byte-level BPE,
SentencePiece BPE, Tekken) differ in every stage but offer the same things, so the
command line, :func:`glassllm.compare` and the language server take any of them:

- ``encode`` gives the text's own token IDs, nothing added around them; what the model
  adds (BOS, a post-processor's ``<|begin_of_text|>``) is ``around``, shown and counted
  apart;
- ``encode_spans`` places each token in the text as given (code-point offsets through
  normalization and bytes; only a character split over several tokens is covered by
  each of them, the one place spans may overlap);
- ``explain`` gives every chunk with each merge step in the order the tokenizer applies
  them: rank and pair and result, a training ``count`` where one was recorded (glassllm's
  own), a ``score`` where scores order the merges (SentencePiece);
- ``chunk_spans`` gives the chunks alone: the pre-tokenizer's cut, which differs between
  tokenizers (glassllm's chunk rule, Llama 3's regex, SentencePiece's words);
- these three take ``at_start``: whether the text opens a document or continues one (a
  SentencePiece model marks a document's first word alone with its dummy prefix), so a
  part of a document tokenizes as it does in place; glassllm's own adds nothing at a
  start, and a part of its text cut between chunks tokenizes alike either way;
- ``can_cut`` says whether a document can be tokenized in two at a line break (glassllm's
  own: always; a regex pre-tokenizer's chunk can cross one), ``has_counts`` whether its
  merges carry training counts, ``priority_name`` what orders them (``rank`` or ``score``);
- ``tokens`` gives vocabulary entries as the tokenizer's files write them (``Ġthe``) and
  ``readable`` shows one as a person reads it (``▁the``; ``<E2><80>`` for part of a
  character's bytes).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from glassllm.pipeline.tokens import ChunkExplanation, TokenSpan

__all__ = ["AnyTokenizer"]


@runtime_checkable
class AnyTokenizer(Protocol):
    """A tokenizer as the command line, :func:`glassllm.compare` and the server use it."""

    @property
    def kind(self) -> str:
        """The tokenizer's format, for a person ("glassllm BPE", "SentencePiece BPE"…)."""
        ...

    @property
    def vocab_size(self) -> int: ...

    @property
    def unk_id(self) -> int | None:
        """The ID of unknown pieces (``None``: the tokenizer has none, every byte is a token)."""
        ...

    @property
    def has_counts(self) -> bool:
        """Whether its merges carry the counts training saw (glassllm's own); a real
        model ships none, its steps give a rank or a score."""
        ...

    @property
    def priority_name(self) -> str:
        """What orders its merges: ``"rank"`` (lower first) or ``"score"`` (higher first)."""
        ...

    @property
    def match_specials(self) -> bool:
        """Whether special-token text in the user's text is read as the special token."""
        ...

    @property
    def around(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The IDs the model adds before and after a text's own tokens."""
        ...

    def encode(self, text: str) -> list[int]: ...

    def encode_spans(self, text: str, *, at_start: bool = True) -> list[TokenSpan]: ...

    def explain(self, text: str, *, at_start: bool = True) -> list[ChunkExplanation]: ...

    def chunk_spans(self, text: str, *, at_start: bool = True) -> list[tuple[str, int, int]]: ...

    def can_cut(self, before: str, after: str) -> bool:
        """Whether ``before + after`` (``before`` ends with a line break) tokenizes as
        ``before``, then ``after`` continuing it: each token and chunk the same."""
        ...

    def decode(self, ids: Iterable[int]) -> str: ...

    def tokens(self, ids: Iterable[int]) -> list[str]: ...

    def readable(self, piece: str) -> str: ...

    def derivation(self, piece: str) -> list[tuple[str, str, str]]: ...
