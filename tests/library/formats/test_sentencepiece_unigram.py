"""SentencePiece Unigram ``.model`` files, and every normalization rule a ``.model``
stores, against the ``sentencepiece`` library.

No third-party file is committed: each model is trained with ``sentencepiece`` (small
vocabularies, on the start of the repository's training corpora) into a temporary
folder, once per session, under each rule — ``nmt_nfkc`` (the default), ``nfkc``,
``nmt_nfkc_cf``, ``nfkc_cf``, ``identity`` and a custom TSV rule — and with the options
that change encoding: byte fallback, user-defined pieces, extra whitespace kept, no
dummy prefix. ``sentencepiece`` reading the same file is the oracle: IDs, offsets (its
``begin``/``end``), the normalized text with each character's origin
(``SentencePieceNormalizer``) and ``decode``, on the start of both held-out books, the
seeds, the hard cases and hypothesis text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from glassllm.formats.load import load_model
from glassllm.formats.sentencepiece_normalizer import SentencePieceNormalizer
from glassllm.formats.sentencepiece_unigram import SentencePieceUnigram
from glassllm.pipeline.any_tokenizer import AnyTokenizer
from tests.conftest import CORPORA
from tests.library.formats.test_differential import HARD, SEED_TEXTS, TEXT

sentencepiece = pytest.importorskip("sentencepiece")

# A custom rule, as spm_train reads one: source code points, a tab, the replacement's.
_CUSTOM_RULE = "41\t61\nFB01\t66 20 69\n3000\t20\n2603\t\n"
_COMMON = {"vocab_size": 600, "character_coverage": 0.9995, "minloglevel": 2}
MODELS: dict[str, dict[str, Any]] = {
    "nmt_nfkc": {},
    "nfkc": {"normalization_rule_name": "nfkc"},
    "nmt_nfkc_cf": {"normalization_rule_name": "nmt_nfkc_cf"},
    "nfkc_cf": {"normalization_rule_name": "nfkc_cf"},
    "identity": {"normalization_rule_name": "identity"},
    "custom": {"normalization_rule_tsv": "custom.tsv"},
    "byte-fallback": {"byte_fallback": True},
    "user-defined": {"user_defined_symbols": ["[REF]", "ção", "  "], "remove_extra_whitespaces": False},
    "spaces-kept": {"remove_extra_whitespaces": False, "add_dummy_prefix": False},
}
NAMES = tuple(MODELS)
# Characters of each training corpus read, and of each held-out book encoded.
_TRAINED_ON = 40_000
_BOOK = 20_000


def train(folder: Path, model_type: str, names: tuple[str, ...]) -> dict[str, Path]:
    """The models ``names`` of :data:`MODELS` of ``model_type``, trained in ``folder``."""
    corpus = folder / "train.txt"
    corpus.write_text(
        "".join(
            (CORPORA / language / "train.txt").read_text(encoding="utf-8")[:_TRAINED_ON] for language in ("pt", "en")
        ),
        encoding="utf-8",
    )
    (folder / "custom.tsv").write_text(_CUSTOM_RULE, encoding="utf-8")
    files = {}
    for name in names:
        options = MODELS[name]
        if "normalization_rule_tsv" in options:
            options = {**options, "normalization_rule_tsv": str(folder / options["normalization_rule_tsv"])}
        prefix = folder / name
        sentencepiece.SentencePieceTrainer.train(
            input=str(corpus), model_prefix=str(prefix), model_type=model_type, **_COMMON, **options
        )
        files[name] = prefix.with_suffix(".model")
    return files


@pytest.fixture(scope="session")
def unigram_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return train(tmp_path_factory.mktemp("sentencepiece-unigram"), "unigram", NAMES)


def _pair(files: dict[str, Path], name: str) -> tuple[SentencePieceUnigram, Any]:
    ours = load_model(files[name])
    assert isinstance(ours, SentencePieceUnigram)
    return ours, sentencepiece.SentencePieceProcessor(model_file=str(files[name]))


def same(ours: Any, oracle: Any, text: str) -> None:
    """``ours`` encodes ``text`` as ``oracle`` (``sentencepiece``) does: IDs and offsets."""
    found = oracle.encode(text, return_type="proto")
    ids = [piece.id for piece in found.pieces]
    assert ours.encode(text) == ids, repr(text[:80])
    spans = ours.encode_spans(text)
    assert [span.id for span in spans] == ids
    # SentencePiece's offsets are in bytes, and of a character's byte-fallback pieces only
    # the last has its span (the others are empty where it starts): glassllm's each has it.
    characters = {len(text[:index].encode("utf-8")): index for index in range(len(text) + 1)}
    expected = [(characters[piece.begin], characters[piece.end]) for piece in found.pieces]
    group: list[int] = []
    for index, piece in enumerate(found.pieces):
        if ours.readable(piece.piece) == piece.piece:
            continue
        group.append(index)
        try:
            bytes(int(found.pieces[at].piece[3:5], 16) for at in group).decode("utf-8")
        except UnicodeDecodeError:
            continue
        for at in group:
            expected[at] = expected[index]
        group = []
    assert [(span.start, span.end) for span in spans] == expected, repr(text[:80])


@pytest.mark.parametrize("language", ["pt", "en"])
@pytest.mark.parametrize("name", NAMES)
def test_held_out_books_encode_exactly_with_sentencepiece_offsets(unigram_files, name, language):
    same(*_pair(unigram_files, name), (CORPORA / language / "heldout.txt").read_text(encoding="utf-8")[:_BOOK])


@pytest.mark.parametrize("name", NAMES)
def test_seeds_and_hard_cases_encode_exactly(unigram_files, name):
    ours, oracle = _pair(unigram_files, name)
    for text in [*SEED_TEXTS, *HARD, "  Ａｂｃ  ﬁne ½ 12345\u3000Ꭰ ß ǅ ", "x [REF] ação  y", "\u2603\u2603 a"]:
        same(ours, oracle, text)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_hypothesis_text_encodes_exactly(unigram_files, name, text):
    same(*_pair(unigram_files, name), text)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_normalized_text_and_origins_are_sentencepieces(unigram_files, name, text):
    ours, _ = _pair(unigram_files, name)
    oracle = sentencepiece.SentencePieceNormalizer(model_file=str(unigram_files[name]))
    # The library's normalizer alone knows no pieces: user-defined ones are not kept whole.
    spec = ours.normalizer
    alone = SentencePieceNormalizer(
        spec.charsmap,
        add_dummy_prefix=spec.add_dummy_prefix,
        remove_extra_whitespaces=spec.remove_extra_whitespaces,
        escape_whitespaces=spec.escape_whitespaces,
    )
    assert alone.normalize(text) == tuple(oracle.normalize(text, with_offsets=True))


@pytest.mark.parametrize("name", NAMES)
def test_decode_is_sentencepiece_decode(unigram_files, name):
    ours, oracle = _pair(unigram_files, name)
    for text in [(CORPORA / "pt" / "heldout.txt").read_text(encoding="utf-8")[:3000], "  a  \u2603 ⿰ 👍🏽 b ", ""]:
        ids = oracle.encode(text)
        assert ours.decode(ids) == oracle.decode(ids), repr(text[:80])
    ids = oracle.encode("Era uma vez")
    assert ours.decode([oracle.bos_id(), *ids, oracle.eos_id()]) == oracle.decode(ids) != ""


def test_what_the_model_adds_around_a_text_is_bos(unigram_files):
    ours, oracle = _pair(unigram_files, "nmt_nfkc")
    assert isinstance(ours, AnyTokenizer)
    assert ours.around == ((oracle.bos_id(),), ())
    assert ours.specials == {"<s>": oracle.bos_id(), "</s>": oracle.eos_id()}
