"""Added tokens' ``lstrip``, ``rstrip``, ``single_word`` and ``normalized`` flags against
HF ``tokenizers``.

Each tokenizer is assembled with HF's own Python API, trained on the start of the
repository's training corpora, given added tokens with each flag (``add_tokens``,
``add_special_tokens``) and saved into a temporary folder; HF reading that file is the
oracle: IDs and offsets in both special-token modes, on handpicked cases (a token at the
start and the end, tokens side by side, whitespace runs, CRLF) and hypothesis text built
around the tokens.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glassllm.formats.added_tokens import is_word
from glassllm.formats.load import load_model
from glassllm.formats.model_tokenizer import ModelTokenizer
from tests.library.formats.fixtures import training_lines
from tests.library.formats.test_differential import ANY_CHARACTER, HARD

tokenizers = pytest.importorskip("tokenizers")
normalizers, pre_tokenizers, AddedToken = tokenizers.normalizers, tokenizers.pre_tokenizers, tokenizers.AddedToken
SPECIALS = ["[UNK]", "[CLS]", "[SEP]"]
_TRAINED_ON = 200_000


def _added(normalized: bool) -> tuple[list[Any], list[Any]]:
    """Special and non-special added tokens with each flag; ``normalized``: some of the
    non-special ones are matched on the normalized text."""
    special = [
        AddedToken("<mask>", lstrip=True, normalized=False),
        AddedToken("<SW>", single_word=True, lstrip=True, rstrip=True, normalized=False),
        AddedToken("<R>>", rstrip=True, normalized=False),
    ]
    plain = [
        AddedToken("Yesterday", single_word=True, normalized=normalized),
        AddedToken("<r>", rstrip=True, normalized=False),
        AddedToken("[w]", lstrip=True, rstrip=True, normalized=normalized),
        AddedToken("ﬁx", normalized=normalized),
        AddedToken("<mask", normalized=False),
    ]
    return special, plain


def _wordpiece_lower() -> Any:
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=False)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return tokenizer, tokenizers.trainers.WordPieceTrainer(vocab_size=3000, special_tokens=SPECIALS), True


def _wordpiece_nfkc() -> Any:
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Strip()])
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    return tokenizer, tokenizers.trainers.WordPieceTrainer(vocab_size=3000, special_tokens=SPECIALS), True


def _wordlevel_raw() -> Any:
    """No normalizer: a normalized token is matched on the text as given, but after the
    others."""
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return tokenizer, tokenizers.trainers.WordLevelTrainer(vocab_size=3000, special_tokens=SPECIALS), True


def _unigram_metaspace() -> Any:
    """HF matches the normalized tokens before Metaspace's ▁: each stretch between them
    gets its own prefix."""
    tokenizer = tokenizers.Tokenizer(tokenizers.models.Unigram())
    tokenizer.normalizer = normalizers.NFKC()
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="always", split=True)
    trainer = tokenizers.trainers.UnigramTrainer(vocab_size=2000, special_tokens=SPECIALS, unk_token="[UNK]")
    return tokenizer, trainer, True


def _wordpiece_byte_level() -> Any:
    """The normalized tokens matched before ByteLevel's prefix space and bytes: each
    stretch between them gets its own space and becomes bytes."""
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.NFKC()
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    return tokenizer, tokenizers.trainers.WordPieceTrainer(vocab_size=2000, special_tokens=SPECIALS), True


def _byte_level_bpe() -> Any:
    """Byte-level BPE: lstrip, rstrip and single_word; no token matched on the normalized
    text (glassllm's BPE formats still match those on the text as given)."""
    tokenizer = tokenizers.Tokenizer(tokenizers.models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    trainer = tokenizers.trainers.BpeTrainer(vocab_size=1000, special_tokens=SPECIALS, initial_alphabet=alphabet)
    return tokenizer, trainer, False


BUILDERS = {
    "wordpiece-lower": _wordpiece_lower,
    "wordpiece-nfkc": _wordpiece_nfkc,
    "wordlevel-raw": _wordlevel_raw,
    "unigram-metaspace": _unigram_metaspace,
    "wordpiece-byte-level": _wordpiece_byte_level,
    "bpe-byte-level": _byte_level_bpe,
}
NAMES = tuple(BUILDERS)
CONTENTS = ["<mask>", "<SW>", "<R>>", "Yesterday", "yesterday", "YESTERDAY", "<r>", "[w]", "[W]", "ﬁx", "fix", "<mask"]
AROUND = [" ", "  ", "\t", "\r\n", "\n", "\u3000", "\x1c", "_", "x", "٣", "e\u0301", "\u0301", "\u200d", "Ⓐ", ",", "-"]


@pytest.fixture(scope="session")
def added_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("added-tokens")
    texts = training_lines(_TRAINED_ON)
    files = {}
    for name, build in BUILDERS.items():
        tokenizer, trainer, normalized = build()
        tokenizer.train_from_iterator(texts, trainer=trainer)
        special, plain = _added(normalized)
        tokenizer.add_special_tokens(special)
        tokenizer.add_tokens(plain)
        files[name] = folder / f"{name}.json"
        tokenizer.save(str(files[name]))
    return files


def _same(files: dict[str, Path], name: str, texts: list[str]) -> None:
    for match_specials in (False, True):
        ours = load_model(files[name], match_specials=match_specials)
        assert isinstance(ours, ModelTokenizer)
        oracle = tokenizers.Tokenizer.from_file(str(files[name]))
        oracle.encode_special_tokens = not match_specials
        for text in texts:
            found = oracle.encode(text, add_special_tokens=False)
            spans = ours.encode_spans(text)
            assert ours.encode(text) == found.ids == [span.id for span in spans], (match_specials, text)
            assert [(span.start, span.end) for span in spans] == found.offsets, (match_specials, text)
            columns = ours.encode_columns(text)
            assert (columns.ids, list(zip(columns.starts, columns.ends, strict=True))) == (found.ids, found.offsets)


def test_the_files_hold_each_flag(added_files):
    tokens = json.loads(added_files["wordpiece-lower"].read_text(encoding="utf-8"))["added_tokens"]
    flags = {(token["lstrip"], token["rstrip"], token["single_word"], token["normalized"]) for token in tokens}
    assert {(True, False, False, False), (False, True, False, False), (True, True, True, False)} <= flags
    assert {(False, False, True, True), (True, True, False, True)} <= flags


HANDPICKED = [
    "<mask>",
    "I saw a  <mask> there",
    "  <mask>  ",
    "<mask><mask> <mask>",
    "x<mask",
    "<r>",
    "<r>   x<r>\r\n\r\nend <r>",
    "<R>>\t\t<R>> y",
    "yesterday, YESTERDAY xyesterday Yesterday_ _Yesterday Yesterday",
    "Yesterday\u0301 ٣Yesterday Yesterday-",
    "a [W]  b[w]c [w][W]  [w]",
    " <SW> x<SW> <SW>x <SW>\r\n<SW>",
    "\r\n<mask>\r\n<r>\r\n[w]\r\n",
    "<SW><SW> <SW>  <SW>",
    "ﬁx fix FIX ﬁxﬁx",
    "<mask> Yesterday [w] <r> <SW> ﬁx",
    "",
    "   ",
]


@pytest.mark.parametrize("name", NAMES)
def test_handpicked_cases_match_hf(added_files, name):
    _same(added_files, name, HANDPICKED)


AROUND_TOKENS = st.lists(
    st.one_of(ANY_CHARACTER, st.sampled_from(HARD), st.sampled_from(CONTENTS), st.sampled_from(AROUND)), max_size=30
).map("".join)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=AROUND_TOKENS)
def test_hypothesis_text_around_the_tokens_matches_hf(added_files, name, text):
    _same(added_files, name, [text])


_METASPACE = {"type": "Metaspace", "replacement": "\u2581", "split": False}
LAYOUTS = {
    "metaspace-first": ("unigram-metaspace", {**_METASPACE, "prepend_scheme": "first"}),
    "metaspace-never": ("unigram-metaspace", {**_METASPACE, "prepend_scheme": "never"}),
    # T5's layout: each word gets its ▁, in each stretch between the tokens.
    "words-metaspace": (
        "unigram-metaspace",
        {
            "type": "Sequence",
            "pretokenizers": [{"type": "WhitespaceSplit"}, {**_METASPACE, "prepend_scheme": "always"}],
        },
    ),
    "byte-level-no-prefix": (
        "wordpiece-byte-level",
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
    ),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_normalized_tokens_before_each_pre_tokenizer_layout_match_hf(added_files, tmp_path, layout):
    """The trained files with another Metaspace scheme or layout, or ByteLevel without its
    prefix: where a stretch after a normalized token gets its ▁ or space, and where not."""
    name, pre_tokenizer = LAYOUTS[layout]
    data = json.loads(added_files[name].read_text(encoding="utf-8"))
    data["pre_tokenizer"] = pre_tokenizer
    path = tmp_path / f"{layout}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    _same({layout: path}, layout, HANDPICKED)


def test_word_characters_are_rusts():
    assert all(map(is_word, "a_9٣Ⅻ\u0301\u200dⒶ"))
    assert not any(map(is_word, " -,²\u3000🙂"))
