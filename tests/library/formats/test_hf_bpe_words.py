"""BPE ``tokenizer.json`` files in layouts outside the byte-level and Metaspace ones, read
by HF's stages one by one (:class:`~glassllm.formats.hf_word_models.HFBPE`), against HF
``tokenizers``.

Each is assembled with HF's Python API from the components it tests and trained with
``BpeTrainer`` on the start of the training corpora (small vocabularies: a second in all),
saved once per session into a temporary folder: HF's quicktour layout (``Whitespace``)
behind NFKC and lowercasing, BERT's normalizer and pre-tokenizer with ``##`` on every
symbol after a word's first, ``</w>`` on a word's last symbol, ``UnicodeScripts`` with
``ignore_merges``, a small alphabet with ``unk_token`` fused, byte fallback, and
byte-level BPE behind NFKC. HF
reading the file is the oracle: IDs and offsets on both held-out books, the seeds, the
hard cases and hypothesis text, special-token text both ways, ``decode``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from glassllm.formats.hf_word_models import HFBPE
from glassllm.formats.load import load_model
from tests.conftest import CORPORA
from tests.library.formats.fixtures import training_lines
from tests.library.formats.test_differential import HARD, MARKS_AGREED_TEXT, SEED_TEXTS

tokenizers = pytest.importorskip("tokenizers")
models, normalizers, pre_tokenizers, decoders = (
    tokenizers.models,
    tokenizers.normalizers,
    tokenizers.pre_tokenizers,
    tokenizers.decoders,
)
SPECIALS = ["[UNK]", "[CLS]", "[SEP]"]
# Characters of the corpora trained on, and of each held-out book encoded.
_TRAINED_ON = 100_000
_BOOK = 30_000


def _trainer(**options: Any) -> Any:
    return tokenizers.trainers.BpeTrainer(vocab_size=1500, special_tokens=SPECIALS, **options)


def _whitespace_nfkc() -> Any:
    """HF's quicktour layout (``Whitespace``) behind NFKC and lowercasing."""
    tokenizer = tokenizers.Tokenizer(models.BPE(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    return tokenizer, _trainer()


def _bert_prefix() -> Any:
    """BERT's normalizer and pre-tokenizer, ``##`` on every symbol after a word's first."""
    tokenizer = tokenizers.Tokenizer(models.BPE(unk_token="[UNK]", continuing_subword_prefix="##"))
    tokenizer.normalizer = normalizers.BertNormalizer()
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece(prefix="##")
    return tokenizer, _trainer(continuing_subword_prefix="##")


def _suffix() -> Any:
    """``</w>`` on a word's last symbol (the original BPE's), words cut at whitespace
    and punctuation."""
    tokenizer = tokenizers.Tokenizer(models.BPE(unk_token="[UNK]", end_of_word_suffix="</w>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
    tokenizer.decoder = decoders.BPEDecoder(suffix="</w>")
    return tokenizer, _trainer(end_of_word_suffix="</w>")


def _scripts() -> Any:
    """Words cut where the Unicode script changes, a word that is an entry whole taken
    as it is (``ignore_merges``)."""
    tokenizer = tokenizers.Tokenizer(models.BPE(unk_token="[UNK]", ignore_merges=True))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.UnicodeScripts(), pre_tokenizers.Digits()])
    return tokenizer, _trainer()


def _fused() -> Any:
    """A small alphabet: unknown characters in a row are one ``[UNK]``."""
    tokenizer = tokenizers.Tokenizer(models.BPE(unk_token="[UNK]", fuse_unk=True))
    tokenizer.normalizer = normalizers.Strip()
    tokenizer.pre_tokenizer = pre_tokenizers.CharDelimiterSplit(" ")
    return tokenizer, _trainer(limit_alphabet=40)


def _byte_fallback() -> Any:
    """A small alphabet, each other character its UTF-8 bytes ``<0xXX>`` (the byte
    entries are added to the vocabulary after training, as converted models hold them)."""
    tokenizer = tokenizers.Tokenizer(models.BPE(unk_token="[UNK]", byte_fallback=True))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Fuse()])
    return tokenizer, _trainer(limit_alphabet=40)


def _byte_level_nfkc() -> Any:
    """Byte-level BPE behind NFKC (a normalizer the byte-level reader does not take),
    ``ByteLevel`` with ``add_prefix_space`` and its decoder."""
    tokenizer = tokenizers.Tokenizer(models.BPE())
    tokenizer.normalizer = normalizers.NFKC()
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer, _trainer(initial_alphabet=pre_tokenizers.ByteLevel.alphabet())


BUILDERS = {
    "whitespace-nfkc": _whitespace_nfkc,
    "bert-prefix": _bert_prefix,
    "suffix": _suffix,
    "scripts": _scripts,
    "fused": _fused,
    "byte-fallback": _byte_fallback,
    "byte-level-nfkc": _byte_level_nfkc,
}
NAMES = tuple(BUILDERS)


@pytest.fixture(scope="session")
def bpe_word_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("bpe-words")
    texts = training_lines(_TRAINED_ON)
    files = {}
    for name, build in BUILDERS.items():
        tokenizer, trainer = build()
        tokenizer.train_from_iterator(texts, trainer=trainer)
        files[name] = folder / f"{name}.json"
        tokenizer.save(str(files[name]))
        if name == "byte-fallback":
            data = json.loads(files[name].read_text(encoding="utf-8"))
            vocab = data["model"]["vocab"]
            for byte in range(256):
                vocab.setdefault(f"<0x{byte:02X}>", len(vocab))
            files[name].write_text(json.dumps(data), encoding="utf-8")
    return files


def _pair(files: dict[str, Path], name: str, match_specials: bool = False) -> tuple[HFBPE, Any]:
    """Both readings of a file, loaded once per session (hypothesis asks for each example)."""
    key = (files[name], match_specials)
    if key not in _LOADED:
        ours = load_model(files[name], match_specials=match_specials)
        assert isinstance(ours, HFBPE)
        oracle = tokenizers.Tokenizer.from_file(str(files[name]))
        oracle.encode_special_tokens = not match_specials
        _LOADED[key] = ours, oracle
    return _LOADED[key]


_LOADED: dict[tuple[Path, bool], tuple[HFBPE, Any]] = {}


def _same(ours: HFBPE, oracle: Any, text: str) -> None:
    found = oracle.encode(text, add_special_tokens=False)
    assert ours.encode(text) == found.ids, repr(text[:80])
    spans = ours.encode_spans(text)
    assert [span.piece for span in spans] == found.tokens, repr(text[:80])
    assert [(span.start, span.end) for span in spans] == found.offsets, repr(text[:80])


@pytest.mark.parametrize("language", ["pt", "en"])
@pytest.mark.parametrize("name", NAMES)
def test_held_out_books_encode_exactly_with_hf_offsets(bpe_word_files, name, language):
    book = (CORPORA / language / "heldout.txt").read_text(encoding="utf-8")[:_BOOK]
    _same(*_pair(bpe_word_files, name), book)


@pytest.mark.parametrize("name", NAMES)
def test_seeds_and_hard_cases_encode_exactly_with_hf_offsets(bpe_word_files, name):
    ours, oracle = _pair(bpe_word_files, name)
    extra = ["Ａｂｃ ﬁne ½ 12345", "  Olá,  MUNDO!! ", "どこで生れ。Yes Ελλάδα1", "a\r\nb\r\n\r\n", "👍🏽 ☃☃ x"]
    for text in [*SEED_TEXTS, *HARD, *extra]:
        _same(ours, oracle, text)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=MARKS_AGREED_TEXT)
def test_hypothesis_text_encodes_exactly_with_hf_offsets(bpe_word_files, name, text):
    _same(*_pair(bpe_word_files, name), text)


@pytest.mark.parametrize("match_specials", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_special_token_text_both_ways(bpe_word_files, name, match_specials):
    ours, oracle = _pair(bpe_word_files, name, match_specials)
    for text in ["[CLS] Era uma vez [SEP]", "a[UNK]b", "[CLS][CLS]", "1[SEP]2 [cls]"]:
        _same(ours, oracle, text)


@pytest.mark.parametrize("name", NAMES)
def test_decode_is_hf_decode(bpe_word_files, name):
    ours, oracle = _pair(bpe_word_files, name)
    text = (CORPORA / "pt" / "heldout.txt").read_text(encoding="utf-8")[:5000] + " ☃ 👍🏽 [CLS] x"
    ids = oracle.encode(text, add_special_tokens=False).ids
    assert ours.decode(ids) == oracle.decode(ids)


@pytest.mark.parametrize("name", NAMES)
def test_explain_shows_each_merge_by_its_rank(bpe_word_files, name):
    """Each step merges the lowest-ranked pair standing (the leftmost among equals),
    ``##`` dropped from the right side; the last step's pieces are the tokens'."""
    ours, _ = _pair(bpe_word_files, name)
    for explained in ours.explain("Era uma vez inacreditavelmente ☃ ações"):
        pieces = list(explained.characters)
        for step in explained.steps:
            standing = [ours.ranks[pair] for pair in pairwise(pieces) if pair in ours.ranks]
            assert step.rank == ours.ranks[step.pair] == min(standing)
            assert step.result == step.pair[0] + step.pair[1].removeprefix(ours.prefix)
            at = next(i for i, pair in enumerate(pairwise(pieces)) if pair == step.pair)
            pieces[at : at + 2] = [step.result]
            assert pieces == step.pieces
        if explained.steps:
            assert explained.steps[-1].pieces == explained.pieces
    if name == "bert-prefix":
        assert ours.explain("inacreditavelmente")[0].characters[1] == "##n"
    if name == "suffix":
        assert ours.explain("menina")[0].characters[-1] == "a</w>"


def test_ignore_merges_takes_a_whole_word_without_merging(bpe_word_files):
    ours, oracle = _pair(bpe_word_files, "scripts")
    word = next(piece for piece in sorted(ours.ids, key=len, reverse=True) if piece.isalpha())
    assert ours.encode(word) == oracle.encode(word, add_special_tokens=False).ids == [ours.ids[word]]
    assert ours.explain(word)[0].steps == []


def test_glassllm_explain_json_keeps_the_bpe_shape(bpe_word_files):
    done = subprocess.run(
        [sys.executable, "-m", "glassllm.cli", "explain", "--json", "-t", str(bpe_word_files["bert-prefix"]), "ações"],
        capture_output=True,
        text=True,
        check=True,
    )
    ours, _ = _pair(bpe_word_files, "bert-prefix")
    explained = ours.explain("ações")[0]
    assert json.loads(done.stdout) == [
        {
            "chunk": explained.chunk,
            "steps": [{"rank": step.rank, "pair": list(step.pair), "result": step.result} for step in explained.steps],
            "pieces": explained.pieces,
            "ids": explained.ids,
        }
    ]


def test_without_an_unk_token_an_unknown_character_is_dropped_as_hf_drops_it(bpe_word_files, tmp_path):
    """HF drops it, and counts none of its bytes: the tokens after it in its word have
    offsets shifted back by them, which glassllm gives too."""
    data = json.loads(bpe_word_files["bert-prefix"].read_text(encoding="utf-8"))
    data["model"]["unk_token"] = None
    path = tmp_path / "no-unk.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    ours, oracle = load_model(path), tokenizers.Tokenizer.from_file(str(path))
    assert isinstance(ours, HFBPE)
    for text in ["ab☃☃cd x☃y ☃", "Era uma vez ações ☃é😀x"]:
        _same(ours, oracle, text)
