"""SentencePiece BPE ``.model`` files under every normalization rule, against the
``sentencepiece`` library (Mistral's own files, whose rule is ``identity`` with spaces
kept, are in ``test_differential.py``).

``spm_train``'s defaults for a BPE model are ``nmt_nfkc`` with extra spaces removed: the
models here are trained so (small vocabularies, into a temporary folder, as
``test_sentencepiece_unigram.py`` trains its own), and under ``nfkc_cf``, ``identity``
and a custom TSV rule, with user-defined pieces, and without byte fallback (unknown
characters in a row are one unknown piece, decoded as `` ⁇ ``). ``sentencepiece``
reading the same file is the oracle: IDs, offsets and ``decode``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from glassllm.formats.load import load_model
from glassllm.formats.sentencepiece_bpe import SentencePieceBPE
from tests.conftest import CORPORA
from tests.library.formats.test_differential import HARD, SEED_TEXTS, TEXT
from tests.library.formats.test_sentencepiece_unigram import same, train

sentencepiece = pytest.importorskip("sentencepiece")

NAMES = ("nmt_nfkc", "nfkc_cf", "identity", "custom", "user-defined", "byte-fallback")


@pytest.fixture(scope="session")
def bpe_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return train(tmp_path_factory.mktemp("sentencepiece-bpe"), "bpe", NAMES)


def _pair(files: dict[str, Path], name: str) -> tuple[SentencePieceBPE, Any]:
    ours = load_model(files[name])
    assert isinstance(ours, SentencePieceBPE)
    return ours, sentencepiece.SentencePieceProcessor(model_file=str(files[name]))


@pytest.mark.parametrize("language", ["pt", "en"])
@pytest.mark.parametrize("name", NAMES)
def test_held_out_books_encode_exactly_with_sentencepiece_offsets(bpe_files, name, language):
    same(*_pair(bpe_files, name), (CORPORA / language / "heldout.txt").read_text(encoding="utf-8")[:20_000])


@pytest.mark.parametrize("name", NAMES)
def test_seeds_and_hard_cases_encode_exactly(bpe_files, name):
    ours, oracle = _pair(bpe_files, name)
    for text in [*SEED_TEXTS, *HARD, "  Ａｂｃ  ﬁne ½ 12345\u3000Ꭰ ß ǅ ", "x [REF] ação  y\n\n z", "\u2603\u2603 a"]:
        same(ours, oracle, text)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_hypothesis_text_encodes_exactly(bpe_files, name, text):
    same(*_pair(bpe_files, name), text)


@pytest.mark.parametrize("name", NAMES)
def test_decode_is_sentencepiece_decode(bpe_files, name):
    ours, oracle = _pair(bpe_files, name)
    for text in [
        (CORPORA / "en" / "heldout.txt").read_text(encoding="utf-8")[:3000],
        "  a  \u2603\u2603 ⿰ 👍🏽 b ",
        "",
    ]:
        ids = oracle.encode(text)
        assert ours.decode(ids) == oracle.decode(ids), repr(text[:80])


def test_a_document_under_a_rule_is_never_cut_at_a_line_break(bpe_files):
    # nmt_nfkc makes a line break a space, and extra spaces go: lines are not apart.
    ours, oracle = _pair(bpe_files, "nmt_nfkc")
    assert not ours.can_cut("Era uma vez \n", " a menina")
    assert oracle.encode("Era uma vez \n a menina") == ours.encode("Era uma vez \n a menina")
