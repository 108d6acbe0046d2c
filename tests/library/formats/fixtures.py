"""Real model tokenizers for the tests, fetched by tests/fixtures/fetch_models.sh, and the
Metaspace ``tokenizer.json`` files Hugging Face makes of one of them.

The test modules import these fixtures by name: a second ``conftest.py`` would clash with
the server tests' ``from conftest import …``.

A test that needs one is skipped, naming the script, when the file is not there — and
fails instead under ``CI=true``, where the script runs first (.ci/run). Each model is
loaded once per session (a few seconds each); so is its reference implementation.

No registry ships a Metaspace ``tokenizer.json`` with byte fallback (Llama 2's, Mistral's
converted), so :func:`converted` makes one as a user gets it: transformers' own conversion
of Mistral v1's ``.model`` (``AutoTokenizer`` with ``legacy=False``: the ``Metaspace``
pre-tokenizer, ``prepend_scheme`` "first"), written once per session into a temporary
folder, never into the repository. The other layouts HF writes are that file with its
normalizer and pre-tokenizer as HF writes them: ``prepend_scheme`` "always"
(transformers 5's ``legacy=True``), the ``Prepend`` + ``Replace`` normalizer with a
``<s>`` post-processor (transformers 4's ``legacy=True``, the layout of Llama 2's and
Mistral 7B v0.1's own files), transformers 5's conversion of a bare SentencePiece model
(a leading ``▁`` doubled, Metaspace in a ``Sequence``), ``split`` (files written before
``split`` was an option), and one without byte fallback. HF ``tokenizers`` reading each
file is its oracle.
"""

from __future__ import annotations

import copy
import json
import random
import shutil
from collections.abc import Callable, Iterable
from itertools import groupby
from operator import attrgetter
from pathlib import Path

import pytest

from glassllm.formats.load import load_model
from glassllm.pipeline.any_tokenizer import AnyTokenizer
from glassllm.pipeline.tokens import TokenSpan

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
MODELS = FIXTURES / "models"
FETCH = "tests/fixtures/fetch_models.sh"

# name → file under tests/fixtures/models/
FILES = {
    "llama3": "llama3/tokenizer.json",
    "gpt4o": "gpt4o/tokenizer.json",
    "mistral-v1": "mistral/tokenizer.model.v1",
    "mistral-v7": "mistral/mistral_instruct_tokenizer_241114.model.v7",
    "tekken": "mistral/tekken_240911.json",
}
HF_MODELS = ("llama3", "gpt4o")
SENTENCEPIECE_MODELS = ("mistral-v1", "mistral-v7")
# Metaspace tokenizer.json files made from mistral-v1 by transformers (see converted).
METASPACE_MODELS = (
    "hf-metaspace-first",
    "hf-metaspace-always",
    "hf-metaspace-legacy",
    "hf-metaspace-sentencepiece",
    "hf-metaspace-split",
)
# The first without byte fallback: unknown characters are one "<unk>" per run (fuse_unk).
UNKNOWN_MODEL = "hf-metaspace-unk"
CONVERTED = (*METASPACE_MODELS, UNKNOWN_MODEL)
_PREPEND_NORMALIZER = {
    "type": "Sequence",
    "normalizers": [
        {"type": "Prepend", "prepend": "\u2581"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
    ],
}
# transformers 5's conversion of a SentencePiece model without a tokenizer class of its
# own (SpmConverter.build_tokenizer_from_spm_proto, legacy): a leading "▁" doubled, then
# Metaspace in a Sequence, so that a text opening with a space gets SentencePiece's prefix.
_SENTENCEPIECE_NORMALIZER = {
    "type": "Sequence",
    "normalizers": [
        {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
        {"type": "Replace", "pattern": {"Regex": "\\A\u2581"}, "content": "\u2581\u2581"},
    ],
}
_BOS_PROCESSOR = {
    "type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
    "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
    "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}},
}


def model_file(name: str) -> Path:
    """The fixture file of model ``name``; skips (fails under CI=true) when it is missing."""
    path = MODELS / FILES[name]
    if not path.is_file():
        pytest.skip(f"{FILES[name]} is missing: run `bash {FETCH}` to fetch the real model tokenizers")
    return path


_loaded: dict[tuple[str, bool], AnyTokenizer] = {}
_references: dict[tuple[str, bool], object] = {}
_converted: dict[str, Path] = {}


@pytest.fixture(scope="session")
def converted(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """``converted(name)``: the Metaspace tokenizer.json ``name`` of :data:`CONVERTED`,
    made from Mistral v1's ``.model`` by transformers (see the module's docstring)."""

    def get(name: str) -> Path:
        if name not in _converted:
            _convert(tmp_path_factory.mktemp("hf-metaspace"))
        return _converted[name]

    return get


def _convert(folder: Path) -> None:
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("sentencepiece")
    pytest.importorskip("google.protobuf")
    shutil.copyfile(model_file("mistral-v1"), folder / "tokenizer.model")
    config = {"tokenizer_class": "LlamaTokenizer", "legacy": False}
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    made = transformers.AutoTokenizer.from_pretrained(str(folder))
    first = json.loads(made.backend_tokenizer.to_str())
    assert first["model"]["byte_fallback"] and first["pre_tokenizer"]["type"] == "Metaspace", first["pre_tokenizer"]
    layouts = {name: copy.deepcopy(first) for name in CONVERTED}
    layouts["hf-metaspace-always"]["pre_tokenizer"]["prepend_scheme"] = "always"
    layouts["hf-metaspace-legacy"].update(
        normalizer=_PREPEND_NORMALIZER, pre_tokenizer=None, post_processor=_BOS_PROCESSOR
    )
    layouts["hf-metaspace-split"]["pre_tokenizer"]["split"] = True
    always = {**first["pre_tokenizer"], "prepend_scheme": "always"}
    layouts["hf-metaspace-sentencepiece"].update(
        normalizer=_SENTENCEPIECE_NORMALIZER, pre_tokenizer={"type": "Sequence", "pretokenizers": [always]}
    )
    layouts[UNKNOWN_MODEL]["model"].update(byte_fallback=False, unk_token="<unk>")
    for name, layout in layouts.items():
        path = folder / f"{name}.json"
        path.write_text(json.dumps(layout, ensure_ascii=False), encoding="utf-8")
        _converted[name] = path


def model_path(name: str) -> Path:
    """A model's file: a fixture, or a converted one (made already: see ``converted``)."""
    return _converted[name] if name in CONVERTED else model_file(name)


@pytest.fixture(scope="session")
def model(converted: Callable[[str], Path]) -> Callable[..., AnyTokenizer]:
    """``model(name, match_specials=False)``: glassllm's reading of a real model's file."""

    def get(name: str, match_specials: bool = False) -> AnyTokenizer:
        key = (name, match_specials)
        if key not in _loaded:
            if name in CONVERTED:
                converted(name)
            _loaded[key] = load_model(model_path(name), match_specials=match_specials)
        return _loaded[key]

    return get


@pytest.fixture(scope="session")
def reference(converted: Callable[[str], Path]) -> Callable[..., Callable[[str], list[int]]]:
    """``reference(name, match_specials=False)``: the format's own implementation, as a
    function from text to the text's own IDs (nothing added around them)."""

    def get(name: str, match_specials: bool = False) -> Callable[[str], list[int]]:
        key = (name, match_specials)
        if key not in _references:
            if name in CONVERTED:
                converted(name)
            _references[key] = _reference(name, match_specials)
        return _references[key]  # type: ignore[return-value]

    return get


@pytest.fixture(scope="session")
def hf_tokenizer(converted: Callable[[str], Path]) -> Callable[..., object]:
    """``hf_tokenizer(name, match_specials=False)``: HF ``tokenizers``' own reading of a
    tokenizer.json model (special-token text as ordinary text, as glassllm reads it by
    default)."""

    def get(name: str, match_specials: bool = False) -> object:
        if name in CONVERTED:
            converted(name)
        return _hf(name, match_specials)

    return get


def _hf(name: str, match_specials: bool = False) -> object:
    key = (f"hf:{name}", match_specials)
    if key not in _references:
        tokenizers = pytest.importorskip("tokenizers")
        hf = tokenizers.Tokenizer.from_file(str(model_path(name)))
        # HF reads special-token text as special tokens unless told otherwise.
        hf.encode_special_tokens = not match_specials
        _references[key] = hf
    return _references[key]


def _reference(name: str, match_specials: bool) -> Callable[[str], list[int]]:
    path = str(model_path(name))
    if name in HF_MODELS or name in CONVERTED:
        hf = _hf(name, match_specials)
        return lambda text: hf.encode(text, add_special_tokens=False).ids  # type: ignore[attr-defined]
    if name in SENTENCEPIECE_MODELS:
        sentencepiece = pytest.importorskip("sentencepiece")
        processor = sentencepiece.SentencePieceProcessor(model_file=path)
        return lambda text: processor.encode(text)
    tekken = pytest.importorskip("mistral_common.tokens.tokenizers.tekken")
    tekkenizer = tekken.Tekkenizer.from_file(path)
    return lambda text: tekkenizer.encode(text, bos=False, eos=False)


def trained_word_model(kind: str, path: Path) -> Path:
    """A small ``kind`` (``WordPiece``, ``WordLevel``, ``Unigram`` or ``BPE``) tokenizer.json
    written to ``path``: trained by HF's own trainer on the start of the Portuguese
    corpus, words split by ``Whitespace``, ``[UNK]`` the unknown token."""
    from tests.conftest import CORPORA

    tokenizers = pytest.importorskip("tokenizers")
    lines = (CORPORA / "pt" / "train.txt").read_text(encoding="utf-8")[:60_000].splitlines()
    unk = "[UNK]"
    model = getattr(tokenizers.models, kind)
    tokenizer = tokenizers.Tokenizer(model() if kind == "Unigram" else model(unk_token=unk))
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    options = {"unk_token": unk} if kind == "Unigram" else {}
    trainer_kind = "Bpe" if kind == "BPE" else kind
    trainer = getattr(tokenizers.trainers, f"{trainer_kind}Trainer")(vocab_size=600, special_tokens=[unk], **options)
    tokenizer.train_from_iterator(lines, trainer=trainer)
    tokenizer.save(str(path))
    return path


def large_bpe_file(path: Path, entries: int, longest: int = 30) -> Path:
    """A byte-level BPE tokenizer.json of ``entries`` vocabulary entries written to
    ``path`` by HF's own writer, as the largest vocabularies ship: every entry past the
    256 bytes and 784 two-letter pieces is one of the last thousand pieces of at most
    ``longest - 2`` characters (or, once those are used up, any) followed by a
    two-letter one, merged in that order, so
    each merge's sides and result are entries, as HF checks (``longest`` sets the file's
    size: about 90 bytes an entry at 30). Drawn from a seeded generator: the same file
    every time."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    from glassllm.formats.byte_level import BYTE_SYMBOLS

    draw = random.Random(29)
    vocab = {symbol: token_id for token_id, symbol in enumerate(BYTE_SYMBOLS)}
    letters = "abcdefghijklmnopqrstuvwxyz" + BYTE_SYMBOLS[ord(" ")] + BYTE_SYMBOLS[ord("\n")]
    merges = [(left, right) for left in letters for right in letters]
    pairs = [left + right for left, right in merges]
    vocab.update(zip(pairs, range(len(vocab), len(vocab) + len(pairs)), strict=True))
    grown = list(pairs)  # the pieces short enough to grow
    while len(vocab) < entries:
        left, right = grown[-draw.randint(1, min(len(grown), 1000))], draw.choice(pairs)
        piece = left + right
        if piece in vocab:  # the recent pieces are used up: any earlier one
            left = draw.choice(grown)
            piece = left + right
            if piece in vocab:
                continue
        vocab[piece] = len(vocab)
        merges.append((left, right))
        if len(piece) <= longest - 2:
            grown.append(piece)
    tokenizer = Tokenizer(models.BPE(vocab, merges))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.save(str(path))
    return path


def training_lines(characters: int) -> list[str]:
    """The first ``characters`` of each training corpus, line by line: what the tests' HF
    trainers learn from (a trainer given one long text with no pre-tokenizer cut, as
    Metaspace without ``split``, would take it as one word)."""
    from tests.conftest import CORPORA

    return [
        line
        for language in ("pt", "en")
        for line in (CORPORA / language / "train.txt").read_text(encoding="utf-8")[:characters].splitlines()
    ]


def ids_by_chunk(spans: Iterable[TokenSpan]) -> list[tuple[int, ...]]:
    """The spans' IDs grouped chunk by chunk: what ``encode_chunks`` gives of the same text."""
    return [tuple(span.id for span in group) for _, group in groupby(spans, attrgetter("chunk"))]
