"""SentencePiece's normalizer: a text in which no key of the map starts goes a run at a
time (``_normalize_plain``), and gives exactly what the character-by-character walk
(``_normalize_each``, checked against ``sentencepiece`` by the models' tests) gives, under
each rule and each combination of the ``normalizer_spec`` flags."""

from __future__ import annotations

from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glassllm.formats.charsmap import Charsmap
from glassllm.formats.protobuf import fields
from glassllm.formats.sentencepiece_normalizer import SentencePieceNormalizer

sentencepiece = pytest.importorskip("sentencepiece")


def _charsmap(rule: str) -> Charsmap:
    spec = dict(fields(sentencepiece.SentencePieceNormalizer(rule_name=rule).serialized_normalizer_spec()))
    return Charsmap(spec[2], rule)  # type: ignore[arg-type]


MAPS = {rule: _charsmap(rule) for rule in ("nmt_nfkc", "nfkc_cf")}
NORMALIZERS = [
    SentencePieceNormalizer(
        charsmap, add_dummy_prefix=prefix, remove_extra_whitespaces=remove, escape_whitespaces=escape, user=user
    )
    for charsmap in (*MAPS.values(), None)
    for prefix, remove, escape in product((True, False), repeat=3)
    for user in ((), ("ab", "[REF]"))
]
# Letters that open NFKC's keys only before a combining mark, the marks, characters the
# maps replace (a tab, a line break, a ligature, a full-width A), spaces and "▁".
ALPHABET = "abcAé \t\n\u0301\u0308\ufb01\uff21\u2581 [REF]xyz\u3000"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=24))
def test_a_run_at_a_time_gives_what_a_character_at_a_time_gives(text):
    for normalizer in NORMALIZERS:
        assert normalizer.normalize(text) == normalizer._normalize_each(text)


def test_most_text_goes_a_run_at_a_time():
    nfkc = SentencePieceNormalizer(
        MAPS["nmt_nfkc"], add_dummy_prefix=True, remove_extra_whitespaces=True, escape_whitespaces=True
    )
    assert nfkc._plain_text("Era uma vez, numa terra distante")  # letters open keys, but none go on
    assert not nfkc._plain_text("Era uma vez\n")  # a line break is a key
    assert not nfkc._plain_text("cafe\u0301")  # e + combining acute is one
    assert nfkc.normalize("  Era  uma ") == ("▁Era▁uma", [2, 2, 3, 4, 5, 7, 8, 9, 10])
