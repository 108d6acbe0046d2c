"""Every ``tokenizer.json`` decoder against HF ``tokenizers``' own.

Each decoder is built with HF's Python API, written as HF writes it (its JSON state), read
by :func:`~glassllm.formats.hf_decoders.decoder_from`, and both decode the same
hypothesis lists of tokens: any Unicode, ``▁``, ``##``, ``</w>``, GPT-2's byte characters,
``<0xXX>`` byte tokens (runs that are not UTF-8 too), pad and delimiter tokens, empty
tokens. Where HF's Rust code panics (a ``Strip`` with more to strip than a token has),
ours raises a ValueError. Then whole files: a WordPiece, a Unigram and a WordLevel model
trained by HF, each with a ``Sequence`` decoder, decode as ``Tokenizer.decode`` does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glassllm.formats.byte_level import BYTE_SYMBOLS
from glassllm.formats.hf_decoders import decoder_from
from glassllm.formats.load import load_model
from tests.conftest import CORPORA
from tests.library.formats.fixtures import trained_word_model

tokenizers = pytest.importorskip("tokenizers")
decoders, pre_tokenizers, Regex = tokenizers.decoders, tokenizers.pre_tokenizers, tokenizers.Regex

# Characters the decoders look at, often, among any others.
_NOTABLE = "▁ #</w>|.,'?!ntmsvrdoe" + "".join(BYTE_SYMBOLS[128:160])
_byte_tokens = st.builds(
    "<0x{}>".format,
    st.integers(0, 255).map("{:02X}".format) | st.sampled_from(["e2", "+A", "+", "-1", "zz", "é"]),
)
_TOKEN = st.one_of(
    st.text(st.sampled_from(_NOTABLE), max_size=6),
    st.text(max_size=4),
    _byte_tokens,
    st.sampled_from(["", "<pad>", "|", "##", "##a", "▁", " .", " n't", " do not", "</w>", "Ġ"]),
    st.text(st.sampled_from(BYTE_SYMBOLS), min_size=1, max_size=3),
)
TOKENS = st.lists(_TOKEN, max_size=12)

LLAMA2 = [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
DECODERS = {
    "BPEDecoder": decoders.BPEDecoder(),
    "BPEDecoder-suffix": decoders.BPEDecoder(suffix="."),
    "ByteLevel": decoders.ByteLevel(),
    "ByteFallback": decoders.ByteFallback(),
    "CTC": decoders.CTC(),
    "CTC-options": decoders.CTC(pad_token="▁", word_delimiter_token="##", cleanup=True),
    "CTC-no-cleanup": decoders.CTC(pad_token="|", word_delimiter_token="▁", cleanup=False),
    "Fuse": decoders.Fuse(),
    "Metaspace": decoders.Metaspace(),
    "Metaspace-first": decoders.Metaspace(prepend_scheme="first", split=False),
    "Metaspace-never": decoders.Metaspace(replacement="#", prepend_scheme="never"),
    "WordPiece": decoders.WordPiece(),
    "WordPiece-options": decoders.WordPiece(prefix="▁", cleanup=False),
    "Replace-string": decoders.Replace("▁", " "),
    "Replace-empty-string": decoders.Replace("", "-"),
    "Replace-regex": decoders.Replace(Regex(r"[#▁]+|\s"), "<>"),
    "Replace-empty-matches": decoders.Replace(Regex("x*"), "-"),
    "Strip": decoders.Strip(" ", 1, 0),
    "Strip-both": decoders.Strip("▁", 2, 1),
    "Strip-end": decoders.Strip("#", 0, 3),
    "Sequence-empty": decoders.Sequence([]),
    "Sequence-llama2": decoders.Sequence(LLAMA2),
    "Sequence-nested": decoders.Sequence([decoders.Sequence([decoders.WordPiece()]), decoders.CTC(), decoders.Fuse()]),
    "Sequence-bytes": decoders.Sequence([decoders.ByteFallback(), decoders.Metaspace(), decoders.BPEDecoder()]),
}


def _spec(decoder: Any) -> Any:
    """The decoder as HF writes it in a ``tokenizer.json``."""
    return json.loads(decoder.__getstate__())


def _hf(decoder: Any, tokens: list[str]) -> str | None:
    """HF's decode, or ``None`` where its Rust code panics (a PanicException, a BaseException)."""
    try:
        return decoder.decode(tokens)
    except BaseException as panic:  # pyo3's PanicException derives from BaseException only
        if type(panic).__name__ != "PanicException":
            raise
        return None


@pytest.mark.parametrize("name", DECODERS)
@settings(max_examples=30, deadline=None)
@given(tokens=TOKENS)
def test_each_decoder_decodes_as_hf(name, tokens):
    decoder = DECODERS[name]
    ours = decoder_from("tokenizer.json", _spec(decoder))
    expected = _hf(decoder, tokens)
    if expected is None:
        with pytest.raises(ValueError, match=r"^tokenizer\.json: the Strip decoder fails on the token "):
            ours(tokens)
    else:
        assert ours(tokens) == expected


@pytest.mark.parametrize(
    ("tokens", "decoded"),
    [
        (["<0xE2>", "<0x82>", "<0xAC>", "▁a", "<0xE2>", "<0x82>", "b"], "€ a��b"),
        (["<0x+A>", "<0xzz>", "▁x"], "\n<0xzz> x"),
        (["▁", "▁Hello", "▁"], " Hello "),
        ([], ""),
    ],
)
def test_llama2_decoder_cases(tokens, decoded):
    """Llama 2's decoder on what it meets: a run of byte tokens that is a character, one that
    is not (a U+FFFD for each), a ``+`` sign Rust reads as hexadecimal, the prefix's space."""
    assert decoder_from("x.json", _spec(decoders.Sequence(LLAMA2)))(tokens) == decoded
    assert decoders.Sequence(LLAMA2).decode(tokens) == decoded


@pytest.mark.parametrize(("strip", "token"), [(decoders.Strip(" ", 0, 2), " "), (decoders.Strip(" ", 1, 2), "  ")])
def test_where_hf_panics_on_a_strip_a_value_error_says_so(strip, token):
    assert _hf(strip, ["a", token]) is None
    with pytest.raises(ValueError, match=r"^x\.json: the Strip decoder fails on the token ' +' \(Hugging Face"):
        decoder_from("x.json", _spec(strip))(["a", token])


def test_no_decoder_joins_with_spaces():
    assert decoder_from("x.json", None)(["a", "", "##b"]) == "a  ##b"


@pytest.mark.parametrize(
    ("spec", "wrong"),
    [
        ({"type": "Lowercase"}, "the decoder 'Lowercase' is not supported: Hugging Face tokenizers has no such"),
        ("WordPiece", "the decoder 'WordPiece' is not an object with a type"),
        ({"type": "Sequence"}, "the Sequence decoder has no list of decoders"),
        ({"type": "Sequence", "decoders": [{"type": "Fuse"}, {"type": "Nope"}]}, "the decoder 'Nope' is not supported"),
        ({"type": "Strip", "content": "ab", "start": 1, "stop": 0}, "the Strip decoder's content 'ab' is not one"),
        ({"type": "Strip", "content": " ", "start": -1, "stop": 0}, "the Strip decoder's start -1 is not a valid int"),
        ({"type": "Replace", "pattern": {"Glob": "*"}, "content": ""}, "the Replace decoder's pattern"),
        ({"type": "Replace", "pattern": {"String": "a"}}, "the Replace decoder's content None is not a string"),
        ({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "sometimes"}, "prepend_scheme 'sometimes'"),
        ({"type": "WordPiece", "prefix": 3, "cleanup": True}, "the WordPiece decoder's prefix 3 is not a valid str"),
        (
            {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": "yes"},
            "the CTC decoder's cleanup 'yes' is not a valid bool",
        ),
        ({"type": "WordPiece", "prefix": "##"}, "the WordPiece decoder has no cleanup"),
        ({"type": "BPEDecoder"}, "the BPEDecoder decoder has no suffix"),
        ({"type": "Strip", "content": " ", "start": 1}, "the Strip decoder has no stop"),
        ({"type": "Metaspace", "prepend_scheme": "always"}, "the Metaspace decoder has no replacement"),
        (
            {"type": "Metaspace", "replacement": "▁", "add_prefix_space": False},
            "the Metaspace decoder's add_prefix_space false does not match its prepend_scheme",
        ),
    ],
)
def test_what_hf_does_not_read_is_refused_in_one_line(spec, wrong):
    data = json.loads(tokenizers.Tokenizer(tokenizers.models.WordLevel({"a": 0}, unk_token="a")).to_str())
    data["decoder"] = spec
    with pytest.raises(Exception, match="did not match any variant"):  # HF refuses the file too
        tokenizers.Tokenizer.from_str(json.dumps(data))
    with pytest.raises(ValueError, match=r"^odd\.json: ") as raised:
        decoder_from("odd.json", spec)
    assert wrong in str(raised.value)
    assert "\n" not in str(raised.value)


# A Sequence decoder on each model kind that takes none of the usual ones.
FILE_DECODERS = {
    "WordPiece": decoders.Sequence(
        [decoders.WordPiece(), decoders.Replace(Regex(r"\s+"), "_"), decoders.Strip("_", 1, 1)]
    ),
    "Unigram": decoders.Sequence(
        [*LLAMA2[:2], decoders.CTC(cleanup=False), decoders.Fuse(), decoders.Strip("a", 0, 2)]
    ),
    "WordLevel": decoders.Sequence([decoders.BPEDecoder(suffix="s"), decoders.Metaspace(prepend_scheme="never")]),
}


@pytest.fixture(scope="module")
def decoded_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("decoders")
    files = {}
    for kind, decoder in FILE_DECODERS.items():
        path = trained_word_model(kind, folder / f"{kind}.json")
        tokenizer = tokenizers.Tokenizer.from_file(str(path))
        tokenizer.decoder = decoder
        tokenizer.save(str(path))
        files[kind] = path
    return files


@pytest.mark.parametrize("kind", FILE_DECODERS)
def test_a_file_with_a_sequence_decoder_decodes_as_hf(decoded_files, kind):
    oracle = tokenizers.Tokenizer.from_file(str(decoded_files[kind]))
    ours = load_model(decoded_files[kind])
    text = (CORPORA / "en" / "heldout.txt").read_text(encoding="utf-8")[:5_000] + " [UNK] x\u2603 , don 't ."
    ids = oracle.encode(text).ids
    assert oracle.token_to_id("[UNK]") in ids  # skipped by both, as a special token
    assert ours.decode(ids) == oracle.decode(ids)
    for start in range(0, len(ids), 97):
        assert ours.decode(ids[start : start + 13]) == oracle.decode(ids[start : start + 13])


def _bpe_file(folder: Path, name: str, pre_tokenizer: Any, decoder: Any, added: list[str]) -> Path:
    """A small BPE file (``Metaspace``: byte fallback with the 256 ``<0xXX>`` pieces) with
    ``decoder`` (``None``: none) and the non-special added tokens ``added``."""
    metaspace = isinstance(pre_tokenizer, pre_tokenizers.Metaspace)
    tokenizer = tokenizers.Tokenizer(tokenizers.models.BPE(byte_fallback=metaspace, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizer
    lines = (CORPORA / "pt" / "train.txt").read_text(encoding="utf-8")[:20_000].splitlines()
    tokenizer.train_from_iterator(lines, tokenizers.trainers.BpeTrainer(vocab_size=300, special_tokens=["[UNK]"]))
    data = json.loads(tokenizer.to_str())
    vocab = data["model"]["vocab"]
    for byte in range(256 if metaspace else 0):
        vocab.setdefault(f"<0x{byte:02X}>", len(vocab))
    data["decoder"] = None if decoder is None else _spec(decoder)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    oracle = tokenizers.Tokenizer.from_file(str(path))
    oracle.add_tokens(added)
    oracle.save(str(path))
    return path


BPE_LAYOUTS = {
    "metaspace-llama2": pre_tokenizers.Metaspace(prepend_scheme="first"),
    "metaspace-gemma": pre_tokenizers.Metaspace(prepend_scheme="first"),
    "metaspace-none": pre_tokenizers.Metaspace(),
    "metaspace-metaspace": pre_tokenizers.Metaspace(),
    "byte-level": pre_tokenizers.ByteLevel(),
    "byte-level-none": pre_tokenizers.ByteLevel(),
    "byte-level-mixed-added": pre_tokenizers.ByteLevel(),
}
BPE_DECODERS = {
    "metaspace-llama2": decoders.Sequence(LLAMA2),
    "metaspace-gemma": decoders.Sequence(LLAMA2[:3]),
    "metaspace-none": None,
    "metaspace-metaspace": decoders.Metaspace(),
    "byte-level": decoders.ByteLevel(),
    "byte-level-none": None,
    "byte-level-mixed-added": decoders.ByteLevel(),
}


@pytest.mark.parametrize("name", BPE_LAYOUTS)
def test_bpe_files_decode_with_their_decoder_as_hf(tmp_path, name):
    """The BPE layouts' own decode where it is HF's, the file's decoder where not: byte
    tokens that are not UTF-8 (one U+FFFD each), no decoder (tokens joined by spaces), an
    added token mixing byte characters with others (HF's ByteLevel takes it whole)."""
    added = ["Ġ▁é", "▁x"]
    path = _bpe_file(tmp_path, name, BPE_LAYOUTS[name], BPE_DECODERS[name], added)
    oracle = tokenizers.Tokenizer.from_file(str(path))
    ours = load_model(path)
    text = (CORPORA / "en" / "heldout.txt").read_text(encoding="utf-8")[:3_000] + " Ġ▁é €🙂 [UNK] ▁x"
    ids = oracle.encode(text).ids
    if name.startswith("metaspace"):
        invalid = ["<0xE2>", "<0x82>", "▁", "<0xE2>", "<0x82>", "<0xAC>", "<0xF0>"]
        ids += [oracle.token_to_id(piece) for piece in invalid]
    assert ours.decode(ids) == oracle.decode(ids)
    for start in range(0, len(ids), 89):
        assert ours.decode(ids[start : start + 11]) == oracle.decode(ids[start : start + 11])
