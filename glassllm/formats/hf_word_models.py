"""Hugging Face ``tokenizer.json`` files whose model looks words up instead of merging:
``WordPiece`` (BERT and the embedding models built on it) and ``WordLevel``.

The text goes through HF's own stages, read by :mod:`~glassllm.formats.hf_normalizers`
(every character's place in the text as given kept, as HF keeps it) and
:mod:`~glassllm.formats.hf_pre_tokenizers`; each chunk (a word) is then:

- ``WordPiece``: cut greedily, longest match first: from each position the longest
  vocabulary entry that starts there (after the first position with the
  ``continuing_subword_prefix``, ``##``); where none does, or the word has more than
  ``max_input_chars_per_word`` characters, the whole word is the ``unk_token``.
  :meth:`HFWordPiece.lookups` shows every prefix tried;
- ``WordLevel``: the word's own entry, or the ``unk_token``.

``decode`` is the ``WordPiece`` decoder's (``##`` pieces joined to the piece before,
the others after a space, with its ``cleanup`` of spaces before punctuation), or, with
no decoder, HF's default: the pieces joined by spaces.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from glassllm.formats.hf_bpe import added_tokens, entries, post_processor_around
from glassllm.formats.hf_normalizers import Normalizer, build_normalizer
from glassllm.formats.hf_pre_tokenizers import PreTokenizer, build_pre_tokenizer
from glassllm.formats.model_tokenizer import ChunkTokens, ModelTokenizer
from glassllm.pipeline.tokens import as_ids

__all__ = ["HFWordLevel", "HFWordPiece", "Lookup", "WordModel", "load_hf_word_model"]

# HF's WordPiece decoder's cleanup, in its order.
_CLEANUP = (
    (" .", "."),
    (" ?", "?"),
    (" !", "!"),
    (" ,", ","),
    (" ' ", "'"),
    (" n't", "n't"),
    (" 'm", "'m"),
    (" do not", " don't"),
    (" 's", "'s"),
    (" 've", "'ve"),
    (" 're", "'re"),
)


class Lookup(NamedTuple):
    """One position of WordPiece's greedy cut: the candidates tried there, longest first,
    and the one found (``None``: none was, so the word is the unknown token)."""

    start: int
    tried: list[str]
    found: str | None


class WordModel(ModelTokenizer):
    """What WordPiece and WordLevel share: HF's normalizer and pre-tokenizer, a vocabulary
    looked up, an unknown token, and the decoder (see the module's docstring)."""

    def __init__(
        self,
        source: str,
        vocab: dict[str, int],
        stages: tuple[Normalizer | None, PreTokenizer],
        unk_token: str,
        decoder: tuple[str, bool] | None,
        **options: Any,
    ) -> None:
        super().__init__(source, entries(vocab, options["specials"], options["always_matched"]), **options)
        self.ids = dict(vocab)
        self.unk_token = unk_token
        self.unk_id = vocab.get(unk_token)
        self._normalizer, self._pre_tokenizer = stages
        self._decoder = decoder
        self._cuttable = False

    def _normalize(self, text: str, at_start: bool) -> tuple[str, list[int] | None]:
        if self._normalizer is None:
            return text, None
        normalized, align = self._normalizer(text, [(index, index + 1) for index in range(len(text))])
        if len(normalized) == len(text) and all(pair == (index, index + 1) for index, pair in enumerate(align)):
            return normalized, None
        # Each normalized character's start and end, one after the other (see _origin_span).
        return normalized, [offset for pair in align for offset in pair]

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
        pieces = [self.vocab[token_id] for token_id in as_ids(ids) if token_id not in self._special_ids]
        if self._decoder is None:
            return " ".join(pieces)
        prefix, cleanup = self._decoder
        shown = []
        for index, piece in enumerate(pieces):
            if index:
                piece = piece.removeprefix(prefix) if piece.startswith(prefix) else " " + piece
            if cleanup:
                for dirty, clean in _CLEANUP:
                    piece = piece.replace(dirty, clean)
            shown.append(piece)
        return "".join(shown)


class HFWordPiece(WordModel):
    """A ``WordPiece`` tokenizer.json (see the module's docstring)."""

    kind = "Hugging Face WordPiece"

    def __init__(self, *args: Any, prefix: str, longest: int, **options: Any) -> None:
        super().__init__(*args, **options)
        self.prefix = prefix
        self.max_input_chars_per_word = longest

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

    def _tokens(self, chunk: str, pieces: list[str]) -> ChunkTokens:
        token_id = self.ids.get(chunk)
        if token_id is None:
            return self._unknown(chunk)
        return ChunkTokens((token_id,), (chunk,), (0,), (len(chunk),))


def _decoder(path: str, spec: Any) -> tuple[str, bool] | None:
    """The WordPiece decoder's prefix and cleanup (``None``: no decoder)."""
    if spec is None:
        return None
    if isinstance(spec, dict) and spec.get("type") == "WordPiece":
        return str(spec.get("prefix", "##")), bool(spec.get("cleanup", True))
    kind = spec.get("type") if isinstance(spec, dict) else spec
    raise ValueError(f"{path}: the decoder {kind!r} is not supported with a WordPiece or WordLevel model")


def _check_added(path: str, tokens: list[Any], normalizer: Normalizer | None) -> None:
    for token in tokens:
        for flag in ("lstrip", "rstrip", "single_word"):
            if isinstance(token, dict) and token.get(flag):
                raise ValueError(f"{path}: the added token {token.get('content')!r:.40} with {flag} is not supported")
        if isinstance(token, dict) and normalizer and token.get("normalized") and not token.get("special"):
            raise ValueError(
                f"{path}: the added token {token.get('content')!r:.40} matched after normalization is not supported"
            )


def load_hf_word_model(path: str | Path, data: dict[str, Any], *, match_specials: bool = False) -> WordModel:
    """A WordPiece or WordLevel tokenizer from the parsed ``tokenizer.json`` ``data``."""
    source = str(path)
    model = data["model"]
    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or not all(isinstance(v, int) and v >= 0 for v in vocab.values()):
        raise ValueError(f"{source}: model.vocab must map pieces to non-negative IDs")
    normalizer = build_normalizer(source, data.get("normalizer"))
    _check_added(source, data.get("added_tokens") or [], normalizer)
    specials, always = added_tokens(source, data.get("added_tokens") or [])
    options: dict[str, Any] = {
        "specials": specials,
        "always_matched": always,
        "match_specials": match_specials,
        "around": post_processor_around(source, data.get("post_processor"), {**always, **specials}),
    }
    stages = (normalizer, build_pre_tokenizer(source, data.get("pre_tokenizer")))
    unk = str(model.get("unk_token", "[UNK]" if model["type"] == "WordPiece" else "<unk>"))
    decoder = _decoder(source, data.get("decoder"))
    if model["type"] == "WordLevel":
        return HFWordLevel(source, vocab, stages, unk, decoder, **options)
    prefix = str(model.get("continuing_subword_prefix", "##"))
    longest = int(model.get("max_input_chars_per_word", 100))
    return HFWordPiece(source, vocab, stages, unk, decoder, prefix=prefix, longest=longest, **options)
