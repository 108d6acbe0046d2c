"""The packaged tokenizers: 1,024 entries each, loadable from the installed package alone."""

import subprocess
import sys

import pytest

from glassllm import PACKAGED, Tokenizer, packaged, packaged_path


@pytest.mark.parametrize("name", ["pt", "en"])
def test_packaged_tokenizers_have_1024_entries_and_merge_evidence(name):
    tok = packaged(name)
    assert tok.vocab_size == 1024
    assert tok.merge_counts is not None and len(tok.merge_counts) == len(tok.merges)
    # A merge can only create pairs rarer than itself, so the chosen counts never grow.
    assert tok.merge_counts == sorted(tok.merge_counts, reverse=True)


def test_packaged_names_are_listed():
    assert PACKAGED == {"pt": "Portuguese", "en": "English"}


def test_unknown_name_is_a_clear_error():
    with pytest.raises(ValueError, match="no packaged tokenizer 'de'; the packaged ones are pt, en"):
        packaged("de")


def test_era_uma_vez_with_the_portuguese_tokenizer():
    tok = packaged("pt")
    ids = tok.encode("Era uma vez")
    # The seeds' pieces hold; their IDs came from a tokenizer trained on another corpus.
    assert tok.tokens(ids) == ["E", "ra", "▁uma", "▁vez"]
    assert ids == [37, 138, 217, 405]
    assert tok.decode(ids) == "Era uma vez"
    assert tok.encode("🙂") == [1]


def test_packaged_files_are_what_glassllm_train_makes_from_the_corpora(tmp_path, corpus_text):
    """The shipped pt tokenizer is reproducible from corpora/ with docs/tokenizer.md's command."""
    text = corpus_text("pt", 10**9)
    assert Tokenizer.train(text, 1024).merges == packaged("pt").merges


def test_the_installed_package_works_without_the_checkout(tmp_path):
    code = "import glassllm; print(glassllm.packaged('en').encode('Once upon a time'))"
    result = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(packaged("en").encode("Once upon a time"))
    assert packaged_path("en").name == "en.json"


def test_load_tokenizer_takes_a_packaged_name_or_a_path(tmp_path):
    from glassllm import load_tokenizer

    loaded = load_tokenizer("en")
    assert isinstance(loaded, Tokenizer) and loaded.merges == packaged("en").merges
    path = tmp_path / "banana.json"
    Tokenizer.train("banana banana", 12).save(path)
    assert load_tokenizer(path).encode("banana banana") == [11, 7, 11]
    with pytest.raises(FileNotFoundError, match="de"):
        load_tokenizer("de")
