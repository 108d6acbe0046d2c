"""Unigram ``tokenizer.json`` files made from SentencePiece models, against HF
``tokenizers``: the ``Precompiled`` normalizer (a ``.model``'s character map), ``Nmt``,
and the ``WhitespaceSplit`` + ``Metaspace`` pre-tokenizer of T5, XLM-R and mBART, and
Unigram's ``byte_fallback``.

No third-party file is committed. Three tokenizers are assembled with HF's Python API and
trained (``UnigramTrainer``, on the start of the training corpora); two are
transformers' own conversion (``T5Tokenizer``, ``XLMRobertaTokenizer``) of a Unigram
``.model`` that ``sentencepiece`` trains: all in temporary folders. HF reading each file
is the oracle: IDs and offsets on the start of both held-out books, the seeds, the hard
cases and hypothesis text, special-token text both ways, ``decode``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from glassllm.formats.hf_word_models import HFUnigram
from glassllm.formats.load import load_model
from glassllm.formats.protobuf import fields
from tests.conftest import CORPORA
from tests.library.formats.test_differential import HARD, SEED_TEXTS, TEXT

tokenizers = pytest.importorskip("tokenizers")
sentencepiece = pytest.importorskip("sentencepiece")
normalizers, pre_tokenizers = tokenizers.normalizers, tokenizers.pre_tokenizers
SPECIALS = ["<unk>", "<s>", "</s>"]
_TRAINED_ON = 100_000
_BOOK = 20_000


def _t5_layout() -> Any:
    """SentencePiece's ``nmt_nfkc`` map (``Precompiled``), words cut at whitespace, a
    Metaspace prefix before each and a cut before each ``▁``."""
    spec = dict(fields(sentencepiece.SentencePieceNormalizer(rule_name="nmt_nfkc").serialized_normalizer_spec()))
    tokenizer = tokenizers.Tokenizer(tokenizers.models.Unigram())
    tokenizer.normalizer = normalizers.Precompiled(spec[2])
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace(prepend_scheme="always", split=True)]
    )
    tokenizer.decoder = tokenizers.decoders.Metaspace(prepend_scheme="always")
    return tokenizer


def _nmt_layout() -> Any:
    """HF's Nmt, NFKC and runs of spaces made one, then after a WhitespaceSplit a Metaspace
    prefix before the text's first word only."""
    tokenizer = tokenizers.Tokenizer(tokenizers.models.Unigram())
    tokenizer.normalizer = normalizers.Sequence(
        [normalizers.Nmt(), normalizers.NFKC(), normalizers.Replace(tokenizers.Regex(" {2,}"), " ")]
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace(prepend_scheme="first", split=False)]
    )
    tokenizer.decoder = tokenizers.decoders.Metaspace(prepend_scheme="first")
    return tokenizer


def _byte_fallback() -> Any:
    """Unigram with byte fallback (set, with the ``<0xXX>`` pieces, after training, as
    SentencePiece's converted models hold them) behind a Metaspace pre-tokenizer."""
    tokenizer = tokenizers.Tokenizer(tokenizers.models.Unigram())
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="always", split=True)
    tokenizer.decoder = tokenizers.decoders.Metaspace(prepend_scheme="always")
    return tokenizer


BUILT = {"precompiled-t5": _t5_layout, "nmt": _nmt_layout, "byte-fallback": _byte_fallback}
CONVERTED = ("T5Tokenizer", "XLMRobertaTokenizer")
NAMES = (*BUILT, *CONVERTED)


def _convert(folder: Path, model: Path, cls: str) -> Path:
    """transformers' conversion of ``model`` as tokenizer class ``cls``, written out."""
    transformers = pytest.importorskip("transformers")
    where = folder / cls
    where.mkdir()
    for name in ("spiece.model", "sentencepiece.bpe.model"):
        shutil.copyfile(model, where / name)
    (where / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": cls}), encoding="utf-8")
    converted = transformers.AutoTokenizer.from_pretrained(str(where))
    path = where / "tokenizer.json"
    path.write_text(converted.backend_tokenizer.to_str(), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("sentencepiece-json")
    lines = [
        line
        for language in ("pt", "en")
        for line in (CORPORA / language / "train.txt").read_text(encoding="utf-8")[:_TRAINED_ON].splitlines()
    ]
    made = {}
    for name, build in BUILT.items():
        tokenizer = build()
        trainer = tokenizers.trainers.UnigramTrainer(vocab_size=2000, special_tokens=SPECIALS, unk_token="<unk>")
        tokenizer.train_from_iterator(lines, trainer=trainer)
        data = json.loads(tokenizer.to_str())
        if name == "byte-fallback":  # the trainer's model leaves it off
            data["model"]["byte_fallback"] = True
            lowest = min(score for _, score in data["model"]["vocab"])
            data["model"]["vocab"].extend([f"<0x{byte:02X}>", lowest] for byte in range(256))
        made[name] = folder / f"{name}.json"
        made[name].write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    (folder / "corpus.txt").write_text("\n".join(lines), encoding="utf-8")
    sentencepiece.SentencePieceTrainer.train(
        input=str(folder / "corpus.txt"), model_prefix=str(folder / "spm"), vocab_size=1000, minloglevel=2
    )
    for cls in CONVERTED:
        made[cls] = _convert(folder, folder / "spm.model", cls)
    return made


def _pair(files: dict[str, Path], name: str, match_specials: bool = False) -> tuple[HFUnigram, Any]:
    ours = load_model(files[name], match_specials=match_specials)
    assert isinstance(ours, HFUnigram)
    oracle = tokenizers.Tokenizer.from_file(str(files[name]))
    oracle.encode_special_tokens = not match_specials
    return ours, oracle


def _same(ours: HFUnigram, oracle: Any, text: str) -> None:
    found = oracle.encode(text, add_special_tokens=False)
    assert ours.encode(text) == found.ids, repr(text[:80])
    assert [(span.start, span.end) for span in ours.encode_spans(text)] == found.offsets, repr(text[:80])


def test_the_converted_files_use_the_layouts_tested_here(files):
    for cls in CONVERTED:
        data = json.loads(files[cls].read_text(encoding="utf-8"))
        assert data["normalizer"]["type"] in ("Precompiled", "Sequence")
        assert [part["type"] for part in data["pre_tokenizer"]["pretokenizers"]] == ["WhitespaceSplit", "Metaspace"]


@pytest.mark.parametrize("language", ["pt", "en"])
@pytest.mark.parametrize("name", NAMES)
def test_held_out_books_encode_exactly_with_hf_offsets(files, name, language):
    _same(*_pair(files, name), (CORPORA / language / "heldout.txt").read_text(encoding="utf-8")[:_BOOK])


@pytest.mark.parametrize("name", NAMES)
def test_seeds_and_hard_cases_encode_exactly_with_hf_offsets(files, name):
    ours, oracle = _pair(files, name)
    for text in [*SEED_TEXTS, *HARD, "  Ａｂｃ  ﬁne ½ 12345\u3000A\u030a ß \r\n x", "\u2581a \u2581 b"]:
        _same(ours, oracle, text)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_hypothesis_text_encodes_exactly_with_hf_offsets(files, name, text):
    _same(*_pair(files, name), text)


@pytest.mark.parametrize("match_specials", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_special_token_text_both_ways(files, name, match_specials):
    ours, oracle = _pair(files, name, match_specials)
    for text in ["<s> Era uma vez </s>", "a<unk>b", " <s>x"]:
        _same(ours, oracle, text)


@pytest.mark.parametrize("name", NAMES)
def test_decode_is_hf_decode(files, name):
    ours, oracle = _pair(files, name)
    text = (CORPORA / "pt" / "heldout.txt").read_text(encoding="utf-8")[:3000] + "  ⿰ 👍🏽  x"
    ids = oracle.encode(text, add_special_tokens=True).ids
    assert ours.decode(ids) == oracle.decode(ids)


def test_unknown_characters_fall_back_to_their_bytes_over_the_run(files):
    ours, oracle = _pair(files, "byte-fallback")
    spans = ours.encode_spans("a \u2603\u2603")
    fallen = [span for span in spans if span.piece.startswith("<0x")]
    assert [span.piece for span in fallen] == ["<0xE2>", "<0x98>", "<0x83>"] * 2
    assert {(span.start, span.end) for span in fallen} == {(2, 4)}
    _same(ours, oracle, "a \u2603\u2603")
