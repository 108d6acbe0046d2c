"""Loading a tokenizer file of any format, recognized from its content.

:func:`load_model` takes a file (or ``hf:ORG/NAME``) and recognizes its format from the
content: a Hugging Face ``tokenizer.json`` of a BPE model (byte-level: GPT-2, Llama 3,
GPT-4o…; or Metaspace ``▁`` with byte fallback: Llama 2, Mistral converted;
:mod:`~glassllm.formats.hf_bpe`; or WordPiece, WordLevel and Unigram,
:mod:`~glassllm.formats.hf_word_models`), a Tekken JSON (:mod:`~glassllm.formats.tekken`) or a
SentencePiece ``.model``, BPE (:mod:`~glassllm.formats.sentencepiece_bpe`) or Unigram
(:mod:`~glassllm.formats.sentencepiece_unigram`). Each satisfies
:class:`glassllm.pipeline.any_tokenizer.AnyTokenizer`, as glassllm's own :class:`~glassllm.Tokenizer`
does, so the command line and :func:`glassllm.compare` take any of them.
"""

from __future__ import annotations

import json
from pathlib import Path

from glassllm.formats.files import (
    MAX_FILE_BYTES,
    MAX_MODEL_BYTES,
    MAX_MODEL_VALUES,
    parse_tokenizer_file,
    read_bounded_bytes,
    too_large,
)
from glassllm.formats.hf_bpe import OtherLayout, load_hf_bpe
from glassllm.formats.hf_word_models import load_hf_word_model
from glassllm.formats.hub import PREFIX, resolve
from glassllm.formats.sentencepiece_bpe import is_sentencepiece, load_sentencepiece
from glassllm.formats.tekken import is_tekken, load_tekken
from glassllm.pipeline.any_tokenizer import AnyTokenizer
from glassllm.pipeline.bpe import collector_paused
from glassllm.shown.problems import number_pt, problem
from glassllm.tokenizer import Tokenizer

__all__ = ["EXPECTED", "load_model", "model_kind", "read_model_file"]

EXPECTED = (
    "a glassllm tokenizer JSON, a Hugging Face tokenizer.json (BPE, WordPiece, WordLevel or Unigram), a Tekken JSON"
    " or a SentencePiece .model (BPE or Unigram)"
)
_EXPECTED_PT = (
    "um JSON de tokenizador do glassllm, um tokenizer.json da Hugging Face (BPE, WordPiece, WordLevel ou Unigram),"
    " um JSON Tekken ou um .model do SentencePiece (BPE ou Unigram)"
)


def model_kind(data: bytes) -> str | None:
    """Which format ``data`` (a file's bytes) holds: ``"glassllm"``, ``"hf"``, ``"tekken"``,
    ``"sentencepiece"``, or ``None``."""
    return _recognize(data)[0]


def _recognize(data: bytes) -> tuple[str | None, object]:
    """The format of ``data`` and, for JSON, the parsed document (parsed once: a large
    ``tokenizer.json`` takes a while)."""
    if _is_json(data):
        try:
            parsed = json.loads(data)
        except (ValueError, UnicodeDecodeError, RecursionError):
            # glassllm's own reader says what is wrong with it (load_model).
            return None, None
        if isinstance(parsed, dict) and isinstance(parsed.get("model"), dict):
            return "hf", parsed
        if is_tekken(parsed):
            return "tekken", parsed
        if isinstance(parsed, dict) and "alphabet" in parsed and "merges" in parsed:
            return "glassllm", parsed
        return None, parsed
    return ("sentencepiece" if is_sentencepiece(data) else None), None


def read_model_file(path: str | Path) -> bytes:
    """The bytes of a tokenizer file, refusing one too large to be a tokenizer (or, for
    JSON, holding too many values to parse in bounded memory); never blocks for good (a
    FIFO no one writes to, a device: see :func:`read_bounded_bytes`)."""
    # files.MAX_MODEL_BYTES (256 MB): the largest vocabularies' tokenizer.json files are
    # over 128 MB; glassllm's own format keeps its smaller bound (load_model).
    data = read_bounded_bytes(path, "tokenizer file", MAX_MODEL_BYTES)
    if _is_json(data):
        # Every JSON value but the first follows one of these: a bound on them is a bound
        # on the objects parsing makes (counted in C, a fraction of the parse's time).
        values = sum(map(data.count, (b",", b":", b"[", b"{")))
        if values > MAX_MODEL_VALUES:
            raise problem(
                ValueError,
                "file.json_values",
                path=path,
                count=values,
                limit=MAX_MODEL_VALUES,
                count_pt=number_pt(values),
                limit_pt=number_pt(MAX_MODEL_VALUES),
            )
    return data


def _is_json(data: bytes) -> bool:
    return data.lstrip()[:1] in (b"{", b"[")


def load_model(spec: str | Path, *, match_specials: bool = False) -> AnyTokenizer:
    """A tokenizer from a file path or ``hf:ORG/NAME[@REV]`` (from the local Hugging Face
    cache only), its format recognized from the content: a real model's, or a glassllm
    tokenizer JSON (which :meth:`glassllm.Tokenizer.load` reads and checks).

    ``match_specials``: read special-token text in the user's text (``<|endoftext|>``) as
    the special token, as HF's ``encode`` does by default; otherwise it is ordinary text.
    Raises ``FileNotFoundError``/``OSError`` when the file cannot be read and
    ``ValueError`` naming the file and what was expected otherwise.
    """
    path = resolve(spec) if isinstance(spec, str) and spec.startswith(PREFIX) else Path(spec)
    data = read_model_file(path)
    # Parsing and reading a large file allocate millions of containers, none in a cycle:
    # the collections they would trigger are most of a 2,000,000-entry file's parse.
    with collector_paused():
        return _load(path, data, match_specials)


def _load(path: Path, data: bytes, match_specials: bool) -> AnyTokenizer:
    kind, parsed = _recognize(data)
    if kind == "sentencepiece":
        return load_sentencepiece(path, data, match_specials=match_specials)
    if kind == "hf" and isinstance(parsed, dict):
        if parsed["model"].get("type") in ("WordPiece", "WordLevel", "Unigram"):
            return load_hf_word_model(path, parsed, match_specials=match_specials)
        try:
            return load_hf_bpe(path, parsed, match_specials=match_specials)
        except OtherLayout:
            # Not a fast layout (byte-level, Metaspace): HF's stages one by one.
            return load_hf_word_model(path, parsed, match_specials=match_specials)
    if kind == "tekken" and isinstance(parsed, dict):
        return load_tekken(path, parsed, match_specials=match_specials)
    if kind == "glassllm" or _is_json(data):
        # glassllm's own reader says what is wrong with any other JSON, from the bytes
        # already read (a pipe cannot be read twice), within its own format's bound.
        if len(data) > MAX_FILE_BYTES:
            raise too_large(path, MAX_FILE_BYTES, "glassllm tokenizer file")
        contents = parse_tokenizer_file(data, path)
        return Tokenizer(contents.alphabet, contents.merges, contents.merge_counts)
    raise problem(ValueError, "model.unknown_file", path=path, expected=EXPECTED, expected_pt=_EXPECTED_PT)
