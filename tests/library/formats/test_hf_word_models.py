"""WordPiece and WordLevel ``tokenizer.json`` files against HF ``tokenizers``.

No third-party file is committed: each tokenizer is assembled with HF's own Python API
from the components it tests, trained (``WordPieceTrainer``, ``WordLevelTrainer``) on
the start of the repository's training corpora, and saved once per session into a
temporary folder. HF reading that file is the oracle: IDs and offsets on both held-out
books, the seeds, and hypothesis text; special-token text both ways; what the
post-processor adds around a text; ``decode``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from glassllm.formats.hf_word_models import HFUnigram, HFWordPiece, WordModel
from glassllm.formats.load import load_model
from glassllm.formats.model_tokenizer import ModelTokenizer
from tests.conftest import CORPORA
from tests.library.formats.fixtures import ids_by_chunk, training_lines
from tests.library.formats.test_differential import HARD, MARKS_AGREED_TEXT, SEED_TEXTS

tokenizers = pytest.importorskip("tokenizers")
normalizers, pre_tokenizers = tokenizers.normalizers, tokenizers.pre_tokenizers
SPECIALS = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
# Scripts in a row, and spaces before the first (UnicodeScripts drops them).
MIXED_SCRIPTS = ["  どこで生れ。Yes Ελλάδα1"]
# Characters of each training corpus read: enough for a real vocabulary, trained in a second.
_TRAINED_ON = 600_000


def _bert() -> Any:
    """BERT's layout: its normalizer, pre-tokenizer, post-processor and decoder."""
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer()
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = tokenizers.decoders.WordPiece()
    return tokenizer, tokenizers.trainers.WordPieceTrainer(vocab_size=6000, special_tokens=SPECIALS)


def _wordpiece_nfkc() -> Any:
    """WordPiece behind NFKC, lowercasing and stripping, cut at spaces, punctuation and
    each digit, with its own prefix and a short word limit."""
    tokenizer = tokenizers.Tokenizer(
        tokenizers.models.WordPiece(unk_token="[UNK]", continuing_subword_prefix="++", max_input_chars_per_word=12)
    )
    tokenizer.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase(), normalizers.Strip()])
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Whitespace(), pre_tokenizers.Digits(individual_digits=True)]
    )
    tokenizer.decoder = tokenizers.decoders.WordPiece(prefix="++", cleanup=False)
    trainer = tokenizers.trainers.WordPieceTrainer(
        vocab_size=3000, special_tokens=SPECIALS, continuing_subword_prefix="++"
    )
    return tokenizer, trainer


def _wordlevel() -> Any:
    """WordLevel behind NFD without accents, cut at whitespace and punctuation, with a
    template around a text and no decoder."""
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents()])
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation("contiguous")]
    )
    return tokenizer, tokenizers.trainers.WordLevelTrainer(vocab_size=5000, special_tokens=SPECIALS)


def _wordpiece_replace() -> Any:
    """WordPiece over spaces replaced by ``▁`` and a Split on ``▁`` merged with the next."""
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Sequence([normalizers.Replace(" ", "\u2581"), normalizers.Sequence([])])
    tokenizer.pre_tokenizer = pre_tokenizers.Split("\u2581", "merged_with_next")
    return tokenizer, tokenizers.trainers.WordPieceTrainer(vocab_size=4000, special_tokens=SPECIALS)


def _unigram_metaspace() -> Any:
    """Unigram behind NFKC and a Metaspace pre-tokenizer (a prefix before every segment,
    cut before each ``▁``), with the Metaspace decoder."""
    tokenizer = tokenizers.Tokenizer(tokenizers.models.Unigram())
    tokenizer.normalizer = normalizers.NFKC()
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="always", split=True)
    tokenizer.decoder = tokenizers.decoders.Metaspace(prepend_scheme="always")
    return tokenizer, tokenizers.trainers.UnigramTrainer(vocab_size=4000, special_tokens=SPECIALS, unk_token="[UNK]")


def _unigram_first() -> Any:
    """Unigram behind lowercasing and runs of whitespace made one space, a Metaspace prefix
    before the text only, never cut at ``▁``."""
    tokenizer = tokenizers.Tokenizer(tokenizers.models.Unigram())
    tokenizer.normalizer = normalizers.Sequence(
        [normalizers.Lowercase(), normalizers.Replace(tokenizers.Regex(r"\s+"), " ")]
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first", split=False)
    tokenizer.decoder = tokenizers.decoders.Metaspace(prepend_scheme="first")
    return tokenizer, tokenizers.trainers.UnigramTrainer(vocab_size=3000, special_tokens=SPECIALS, unk_token="[UNK]")


def _unigram_words() -> Any:
    """Unigram over words cut at whitespace and where the Unicode script changes, no
    normalizer and no decoder."""
    tokenizer = tokenizers.Tokenizer(tokenizers.models.Unigram())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.UnicodeScripts()]
    )
    return tokenizer, tokenizers.trainers.UnigramTrainer(vocab_size=3000, special_tokens=SPECIALS, unk_token="[UNK]")


BUILDERS = {
    "bert": _bert,
    "wordpiece-nfkc": _wordpiece_nfkc,
    "wordlevel": _wordlevel,
    "wordpiece-replace": _wordpiece_replace,
    "unigram-metaspace": _unigram_metaspace,
    "unigram-first": _unigram_first,
    "unigram-words": _unigram_words,
}
NAMES = tuple(BUILDERS)


# A model whose pre-tokenizer never cuts a line learns from whole lines as words: the
# Unigram trainer's seeds then cost ten times more (60 s for the 600,000 characters, 5.6 s
# for these, the same 3,000 entries).
_TRAINED_ON_LINES = {"unigram-first": 100_000}


@pytest.fixture(scope="session")
def word_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("word-models")
    texts = training_lines(_TRAINED_ON)
    files = {}
    for name, build in BUILDERS.items():
        tokenizer, trainer = build()
        shorter = _TRAINED_ON_LINES.get(name)
        tokenizer.train_from_iterator(texts if shorter is None else training_lines(shorter), trainer=trainer)
        cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
        if name == "bert":
            tokenizer.post_processor = tokenizers.processors.BertProcessing(("[SEP]", sep), ("[CLS]", cls))
        elif name == "wordlevel":
            tokenizer.post_processor = tokenizers.processors.TemplateProcessing(
                single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
            )
        files[name] = folder / f"{name}.json"
        tokenizer.save(str(files[name]))
    return files


def _pair(word_files: dict[str, Path], name: str, match_specials: bool = False) -> tuple[WordModel, Any]:
    ours = load_model(word_files[name], match_specials=match_specials)
    assert isinstance(ours, WordModel)
    oracle = tokenizers.Tokenizer.from_file(str(word_files[name]))
    oracle.encode_special_tokens = not match_specials
    return ours, oracle


def _same(ours: WordModel, oracle: Any, text: str) -> None:
    found = oracle.encode(text, add_special_tokens=False)
    assert ours.encode(text) == found.ids, repr(text[:80])
    spans = ours.encode_spans(text)
    assert [span.id for span in spans] == found.ids
    assert [(span.start, span.end) for span in spans] == found.offsets, repr(text[:80])
    assert ours.encode_chunks(text) == ids_by_chunk(spans)


@pytest.mark.parametrize("language", ["pt", "en"])
@pytest.mark.parametrize("name", NAMES)
def test_held_out_books_encode_exactly_with_hf_offsets(word_files, name, language):
    _same(*_pair(word_files, name), (CORPORA / language / "heldout.txt").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", NAMES)
def test_seeds_and_hard_cases_encode_exactly_with_hf_offsets(word_files, name):
    ours, oracle = _pair(word_files, name)
    for text in [*SEED_TEXTS, *HARD, "Ａｂｃ ﬁne ½ 12345", "  Olá,  MUNDO!! ", "x" * 30 + " y", *MIXED_SCRIPTS]:
        _same(ours, oracle, text)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=MARKS_AGREED_TEXT)
def test_hypothesis_text_encodes_exactly_with_hf_offsets(word_files, name, text):
    _same(*_pair(word_files, name), text)


@pytest.mark.parametrize("match_specials", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_special_token_text_both_ways(word_files, name, match_specials):
    ours, oracle = _pair(word_files, name, match_specials)
    for text in ["[CLS] Era uma vez [SEP]", "a[MASK]b", "[UNK][PAD]", "[cls]"]:
        _same(ours, oracle, text)


@pytest.mark.parametrize("name", NAMES)
def test_what_the_post_processor_adds_is_around(word_files, name):
    ours, oracle = _pair(word_files, name)
    whole = oracle.encode("Era uma vez", add_special_tokens=True).ids
    before, after = ours.around
    assert [*before, *ours.encode("Era uma vez"), *after] == whole
    assert bool(before) == (name in ("bert", "wordlevel"))


@pytest.mark.parametrize("language", ["pt", "en"])
@pytest.mark.parametrize("name", NAMES)
def test_decode_is_hf_decode(word_files, name, language):
    ours, oracle = _pair(word_files, name)
    text = (CORPORA / language / "heldout.txt").read_text(encoding="utf-8")[:20_000] + " [CLS] don 't ."
    ids = oracle.encode(text, add_special_tokens=True).ids
    assert ours.decode(ids) == oracle.decode(ids)


def test_wordpiece_lookups_show_the_greedy_cut_and_where_unk_came_from(word_files):
    ours, _ = _pair(word_files, "bert")
    assert isinstance(ours, HFWordPiece)
    chunk = "inacreditavelmente"
    steps = ours.lookups(chunk)
    assert "".join(step.found.removeprefix("##") for step in steps if step.found) == chunk
    for step in steps:
        # Every longer candidate was tried first and is not in the vocabulary.
        assert step.tried[-1] == step.found
        assert not any(candidate in ours.ids for candidate in step.tried[:-1])
        assert len({len(candidate) for candidate in step.tried}) == len(step.tried)
    assert [piece for piece in (step.found for step in steps)] == ours.explain(chunk)[0].pieces
    unknown = ours.lookups("\u2603x")
    assert unknown[-1].found is None and ours.encode("\u2603x") == [ours.unk_id]
    assert ours.lookups("a" * 101) == []


def test_glassllm_encode_reads_a_wordpiece_file(word_files):
    _, oracle = _pair(word_files, "bert")
    done = subprocess.run(
        [sys.executable, "-m", "glassllm.cli", "encode", "-t", str(word_files["bert"]), "Era uma vez"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split() == [str(i) for i in oracle.encode("Era uma vez", add_special_tokens=False).ids]


@pytest.mark.parametrize(
    ("change", "refused"),
    [
        ({"normalizer": {"type": "Precompiled", "precompiled_charsmap": 7}}, "the normalizer 'Precompiled'"),
        ({"decoder": {"type": "Lowercase"}}, "the decoder 'Lowercase'"),
        # A step HF has no such pre-tokenizer for, and a Metaspace replacement HF's own
        # reader refuses (not one character), in a Sequence read split by split.
        (
            {"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "ByteLevel"}, {"type": "Odd"}]}},
            "the pre-tokenizer 'Odd'",
        ),
        (
            {
                "pre_tokenizer": {
                    "type": "Sequence",
                    "pretokenizers": [{"type": "Digits"}, {"type": "Metaspace", "replacement": "__"}],
                }
            },
            "the Metaspace pre-tokenizer .*",
        ),
    ],
)
def test_what_is_not_read_is_refused_in_one_line(word_files, tmp_path, change, refused):
    data = json.loads(word_files["bert"].read_text(encoding="utf-8"))
    data.update(change)
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{odd}: {refused} is not supported") as raised:
        load_model(odd)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("name", ["unigram-metaspace", "unigram-words"])
def test_unigram_segmentations_show_the_path_taken_and_the_next_best(word_files, name):
    ours, _ = _pair(word_files, name)
    assert isinstance(ours, HFUnigram)
    for explained in ours.explain("Era uma vez uma menina inacreditavelmente bonita"):
        best, *others = ours.segmentations(explained.chunk)
        assert best.pieces == explained.pieces
        assert best.total == pytest.approx(sum(best.scores))
        assert best.scores == [ours.scores[ours.ids[piece]] for piece in best.pieces]
        for other in others:
            assert other.pieces != best.pieces and "".join(other.pieces) == explained.chunk
            assert other.total <= best.total and other.total == pytest.approx(sum(other.scores))
    assert len(ours.segmentations("menina")) == 2
    unknown = ours.segmentations("\u2603\u2603")[0]
    assert unknown.scores == [ours.unknown_score] * 2 and ours.encode("\u2603\u2603")[-1] == ours.unk_id


BYTE_LEVEL_KINDS = [(kind, prefix) for prefix in (False, True) for kind in ("WordPiece", "WordLevel", "Unigram")]


@pytest.fixture(scope="module")
def byte_level_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A WordPiece, WordLevel and Unigram tokenizer.json with HF's ``ByteLevel``
    pre-tokenizer (with ``add_prefix_space`` too: ``WordPiece-prefix``…) and decoder,
    trained by HF's own trainers on the corpora's start."""
    folder = tmp_path_factory.mktemp("byte-level-word-models")
    lines = (CORPORA / "pt" / "train.txt").read_text(encoding="utf-8")[:60_000].splitlines()
    files = {}
    for kind, prefix in BYTE_LEVEL_KINDS:
        model = getattr(tokenizers.models, kind)
        tokenizer = tokenizers.Tokenizer(model() if kind == "Unigram" else model(unk_token="[UNK]"))
        tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=prefix)
        tokenizer.decoder = tokenizers.decoders.ByteLevel()
        options = {"unk_token": "[UNK]"} if kind == "Unigram" else {}
        trainer = getattr(tokenizers.trainers, f"{kind}Trainer")(vocab_size=600, special_tokens=["[UNK]"], **options)
        tokenizer.train_from_iterator(lines, trainer=trainer)
        name = f"{kind}-prefix" if prefix else kind
        files[name] = folder / f"{name}.json"
        tokenizer.save(str(files[name]))
    return files


@pytest.mark.parametrize(("kind", "prefix"), BYTE_LEVEL_KINDS)
@pytest.mark.parametrize("match_specials", [False, True])
def test_a_byte_level_pre_tokenizer_before_each_model_is_read_as_hf_reads_it(
    byte_level_files, kind, prefix, match_specials
):
    """HF cuts with GPT-2's pattern, then the model reads each chunk's UTF-8 bytes as
    byte characters (``Ġ`` a space): a character of several bytes may be split between
    tokens (both cover it) or be the unknown token with its space. ``add_prefix_space``:
    a space before each segment between special tokens that opens without one, where
    its first character is (HF's span for a token of that space alone)."""
    name = f"{kind}-prefix" if prefix else kind
    oracle = tokenizers.Tokenizer.from_file(str(byte_level_files[name]))
    oracle.encode_special_tokens = not match_specials
    ours = load_model(byte_level_files[name], match_specials=match_specials)
    assert isinstance(ours, ModelTokenizer)
    book = (CORPORA / "pt" / "heldout.txt").read_text(encoding="utf-8")[: 20_000 if match_specials else 4_000]
    specials = ("[UNK]a[UNK] b", "1[UNK]2", "[UNK]")
    for text in (*book.splitlines(), *HARD, *SEED_TEXTS, "Era uma vez, ação ✓ 😀", *specials):
        expected = oracle.encode(text, add_special_tokens=False)
        spans = ours.encode_spans(text)
        assert [span.id for span in spans] == expected.ids, text
        assert [(span.start, span.end) for span in spans] == expected.offsets, text
        assert ours.encode_chunks(text, at_start=False) == ids_by_chunk(ours.encode_spans(text, at_start=False))
        assert ours.decode(expected.ids) == oracle.decode(expected.ids), text


def _split(pattern: str, behavior: str = "Isolated") -> dict[str, Any]:
    return {"type": "Split", "pattern": {"Regex": pattern}, "behavior": behavior, "invert": False}


def _byte_level(prefix: bool, regex: bool = True) -> dict[str, Any]:
    return {"type": "ByteLevel", "add_prefix_space": prefix, "trim_offsets": True, "use_regex": regex}


def _metaspace(scheme: str, split: bool) -> dict[str, Any]:
    return {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": scheme, "split": split}


DIGITS = {"type": "Digits", "individual_digits": False}
# A trained file, the steps its pre-tokenizer becomes (HF's model reads whatever chunks it
# is given; a Metaspace alone with another replacement than ▁ is read the same way), and
# whether a normalized added token ("vez") is matched before them.
STAGED: dict[str, tuple[str, Any, bool]] = {
    "digits-prefix-wordpiece": ("WordPiece-prefix", [_split(r"\d"), _byte_level(True)], False),
    "whitespace-bytes-wordlevel": ("WordLevel", [{"type": "Whitespace"}, _byte_level(False, regex=False)], True),
    "punctuation-first-unigram": ("unigram-metaspace", [{"type": "Punctuation"}, _metaspace("first", True)], True),
    # A text opening with spaces: Whitespace drops them, so no split starts where it does.
    "whitespace-first-unigram": ("unigram-metaspace", [{"type": "Whitespace"}, _metaspace("first", False)], False),
    "always-then-digits-unigram": ("unigram-metaspace", [_metaspace("always", False), DIGITS], False),
    "bytes-then-prefix-unigram": ("Unigram-prefix", [_byte_level(False), _byte_level(True, regex=False)], False),
    "metaspace-in-bytes-wordlevel": ("WordLevel", [_metaspace("never", True), _byte_level(True)], True),
    "replacement-unigram": ("unigram-metaspace", {**_metaspace("always", True), "replacement": "_"}, True),
}


@pytest.mark.parametrize("name", STAGED)
def test_byte_level_and_metaspace_anywhere_in_a_sequence_are_read_split_by_split(
    word_files, byte_level_files, tmp_path, name
):
    """HF runs a Sequence step by step, each step on each split the steps before made:
    ByteLevel's prefix space before each split that opens without one, Metaspace's
    ``first`` prefix before the split where the text starts only (none after a special
    token), each where the character it comes before is."""
    source, steps, added = STAGED[name]
    data = json.loads({**word_files, **byte_level_files}[source].read_text(encoding="utf-8"))
    data["pre_tokenizer"] = steps if isinstance(steps, dict) else {"type": "Sequence", "pretokenizers": steps}
    if added:
        vocab = data["model"]["vocab"]
        fresh = max(len(vocab), *(token["id"] + 1 for token in data["added_tokens"]))
        vez = {"id": fresh, "content": "vez", "single_word": False, "lstrip": False, "rstrip": False}
        data["added_tokens"].append({**vez, "normalized": True, "special": False})
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    ours = load_model(path, match_specials=True)
    assert isinstance(ours, ModelTokenizer)
    oracle = tokenizers.Tokenizer.from_file(str(path))
    book = (CORPORA / "pt" / "heldout.txt").read_text(encoding="utf-8")[:3_000]
    texts = ("Era 12 uma vez, ação ✓ 😀!", "[UNK]a1[UNK] b, c", "x  9", "  Era,uma")
    for text in (*book.splitlines(), *HARD, *SEED_TEXTS, *texts):
        expected = oracle.encode(text, add_special_tokens=False)
        assert ours.encode(text) == expected.ids, text
        spans = ours.encode_spans(text)
        assert [(span.start, span.end) for span in spans] == expected.offsets, text
        assert ours.encode_chunks(text, at_start=False) == ids_by_chunk(ours.encode_spans(text, at_start=False))
        assert ours.decode(expected.ids) == oracle.decode(expected.ids), text
