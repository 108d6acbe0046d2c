"""Properties that hold for every string: lossless chunks, lossless round trips."""

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from glassllm import Tokenizer, packaged
from glassllm.pipeline.chunks import CHUNK_PATTERN
from glassllm.tokenizer import SPACE, pre_tokenize

any_text = st.text(st.characters(codec="utf-8"), max_size=200)
prose = st.text(st.sampled_from(list("abcdeéãçõ ,.;—-!?'\"\n\r\t0123456789ABCÉ🙂\u0301_")), max_size=200)


@settings(max_examples=1000, deadline=None)
@given(any_text)
def test_pre_tokenize_is_lossless(text):
    chunks = pre_tokenize(text)
    assert "".join(chunks) == unicodedata.normalize("NFC", text).replace(" ", SPACE)
    assert all(chunks)


@settings(max_examples=500, deadline=None)
@given(prose)
def test_line_breaks_are_chunks_of_their_own(text):
    for chunk in pre_tokenize(text):
        assert chunk in ("\n", "\r") or not ({"\n", "\r"} & set(chunk))


@settings(max_examples=500, deadline=None)
@given(prose)
def test_a_marker_starts_a_chunk_or_fills_it(text):
    for chunk in pre_tokenize(text):
        stripped = chunk.lstrip(SPACE)
        assert len(chunk) - len(stripped) <= 1 or not stripped


@settings(max_examples=300, deadline=None)
@given(prose, prose)
def test_decode_inverts_encode_on_normalized_text_over_the_alphabet(training, text):
    # The line break keeps NFC from composing across the seam (``A`` + U+0301 → ``Á``).
    tok = Tokenizer.train(training + "\n" + text, 300)
    normalized = unicodedata.normalize("NFC", text)
    assert tok.decode(tok.encode(normalized)) == normalized


@settings(max_examples=300, deadline=None)
@given(any_text)
def test_packaged_round_trip_where_every_character_is_known(text):
    tok = packaged("pt")
    normalized = unicodedata.normalize("NFC", text).replace(SPACE, " ")
    known = "".join(c for c in normalized if c in tok.alphabet or c == " ")
    assert tok.decode(tok.encode(known)) == known


@settings(max_examples=300, deadline=None)
@given(any_text)
def test_encode_verbose_ends_where_encode_ends(text):
    tok = packaged("en")
    verbose = tok.encode_verbose(text)
    assert [entry["chunk"] for entry in verbose] == pre_tokenize(text)
    final = []
    for entry in verbose:
        steps = entry["steps"]
        assert isinstance(steps, list)
        final += steps[-1]
    assert [span.piece for span in tok.encode_spans(text)] == final


def test_the_chunk_pattern_never_matches_the_empty_string():
    assert CHUNK_PATTERN.match("") is None
