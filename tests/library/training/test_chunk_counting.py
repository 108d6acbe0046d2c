"""Count anywhere, learn once: chunk counts of parts, summed, train what the whole trains.

Also the commands that write tokenizers: ``glassllm train`` on several files with
``--jobs``, ``glassllm export``, and their refusal to replace a file that is not theirs.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

import pytest
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st

from glassllm import Tokenizer, packaged
from glassllm.pipeline.chunks import pre_tokenize
from glassllm.training import chunk_counting, corpus
from glassllm.training.chunk_counting import count_chunks, count_files


def glassllm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "glassllm.cli", *args], capture_output=True, text=True, timeout=120)


def cut_at_line_breaks(text: str, parts: int) -> list[str]:
    lines = text.splitlines(keepends=True)
    step = -(-len(lines) // parts)
    return ["".join(lines[index : index + step]) for index in range(0, len(lines), step)]


def same_tokenizer(a: Tokenizer, b: Tokenizer) -> bool:
    return a.alphabet == b.alphabet and a.merges == b.merges and a.merge_counts == b.merge_counts


def test_counting_parts_in_separate_processes_and_summing_trains_what_train_trains(corpus_text):
    text = corpus_text("pt", 400_000) + corpus_text("en", 200_000)
    parts = cut_at_line_breaks(text, 5)
    assert len(parts) == 5 and "".join(parts) == text
    with ProcessPoolExecutor(2) as pool:
        counted = list(pool.map(count_chunks, parts))
    total = sum(counted, Counter())
    assert total == count_chunks(text)
    assert same_tokenizer(Tokenizer.train_from_counts(total, 600), Tokenizer.train(text, 600))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.sampled_from(list("ab é\u0301\n\r\t🙂.,1")), max_size=30), max_size=6))
def test_texts_counted_one_by_one_sum_to_the_joined_text_when_each_ends_a_line(texts):
    lines = [text + "\n" for text in texts]
    assert count_chunks(lines) == Counter(pre_tokenize("".join(lines)))
    assert count_chunks(lines, jobs=1) == sum((count_chunks(line) for line in lines), Counter())


def test_the_seam_between_texts_is_a_boundary(tmp_path):
    """Without a line break at the seam, the texts still count apart: no chunk (and no
    NFC composition) spans two texts or two files."""
    texts = ["banana", "\u0301s banana"]
    assert count_chunks(texts) == Counter(["banana", "\u0301", "s", "▁banana"])
    assert count_chunks("".join(texts)) == Counter(["bananás", "▁banana"])
    for index, text in enumerate(texts):
        (tmp_path / f"{index}.txt").write_text(text, encoding="utf-8")
    assert count_files([tmp_path / "0.txt", tmp_path / "1.txt"]) == count_chunks(texts)


def test_forked_counting_of_a_large_text_equals_counting_in_place(corpus_text):
    text = corpus_text("en", 3_000_000)
    assert count_chunks(text, jobs=2) == count_chunks(text, jobs=1) == Counter(pre_tokenize(text))


def test_count_files_in_parts_and_processes_equals_counting_the_text(tmp_path, monkeypatch, corpus_text):
    texts = [corpus_text("pt", 150_000), corpus_text("en", 100_000), "sem quebra no fim"]
    paths = []
    for index, text in enumerate(texts):
        paths.append(tmp_path / f"{index}.txt")
        paths[-1].write_text(text, encoding="utf-8", newline="")
    expected = count_chunks(texts)
    # Small parts and blocks: each file is cut many times, at line breaks only.
    monkeypatch.setattr(chunk_counting, "_PART_BYTES", 10_000)
    monkeypatch.setattr(chunk_counting, "_BLOCK", 3_000)
    monkeypatch.setattr(corpus, "BLOCK", 3_000)
    assert len(corpus.corpus_parts([str(paths[0])], 10_000)) > 10
    assert count_files(paths, jobs=1) == expected
    assert count_files(paths, jobs=2) == expected


def test_count_files_reports_bad_files(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n" * 10 + b"\xff\n")
    with pytest.raises(ValueError, match=r"bad.txt:11: not UTF-8 text \(invalid start byte\)"):
        count_files([bad])
    with pytest.raises(FileNotFoundError, match=re.escape("missing.txt")):
        count_files([tmp_path / "missing.txt"])
    with pytest.raises(ValueError, match="jobs must be at least 1"):
        count_files([bad], jobs=0)


def test_train_from_counts_checks_its_input():
    assert same_tokenizer(
        Tokenizer.train_from_counts({"banana": 1, "▁banana": 2}, 20), Tokenizer.train("banana banana banana", 20)
    )
    with pytest.raises(ValueError, match="positive integer"):
        Tokenizer.train_from_counts({"banana": 0}, 20)
    with pytest.raises(ValueError, match="non-empty str"):
        Tokenizer.train_from_counts({"": 3}, 20)
    with pytest.raises(ValueError, match="at least 10 is needed"):
        Tokenizer.train_from_counts({"banana": 1, "xyz": 1}, 9)


def test_glassllm_train_counts_several_files_in_several_processes(tmp_path, corpus_text):
    files = []
    for language in ("pt", "en"):
        files.append(tmp_path / f"{language}.txt")
        files[-1].write_text(corpus_text(language, 100_000), encoding="utf-8")
    out = tmp_path / "tok.json"
    result = glassllm("train", *map(str, files), "--vocab-size", "500", "--jobs", "2", "-o", str(out))
    assert result.returncode == 0, result.stderr
    expected = Tokenizer.train("".join(path.read_text(encoding="utf-8") for path in files), 500)
    assert same_tokenizer(Tokenizer.load(out), expected)


def test_train_and_export_never_replace_a_file_that_is_not_theirs(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("banana banana\n", encoding="utf-8")
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n", encoding="utf-8")

    result = glassllm("train", str(corpus), "--vocab-size", "12", "-o", str(notes))
    assert result.returncode == 1
    assert result.stderr == (
        f"glassllm train: {notes} exists and is not a glassllm tokenizer file; not replacing it (--force replaces it)\n"
    )
    result = glassllm("export", "en", "-o", str(notes))
    assert result.returncode == 1
    assert "is not a Hugging Face tokenizer file; not replacing it (--force replaces it)" in result.stderr
    assert notes.read_text(encoding="utf-8") == "my notes\n"

    # A glassllm tokenizer file is replaced (atomically, as before); an export may only
    # replace a Hugging Face file, so it leaves the glassllm one alone.
    tok_path = tmp_path / "tok.json"
    Tokenizer.train("abc abc\n", 12).save(tok_path)
    assert glassllm("train", str(corpus), "--vocab-size", "12", "-o", str(tok_path)).returncode == 0
    assert Tokenizer.load(tok_path).merges == Tokenizer.train("banana banana\n", 12).merges
    assert glassllm("export", str(tok_path), "-o", str(tok_path)).returncode == 1
    assert sorted(path.name for path in tmp_path.iterdir()) == ["corpus.txt", "notes.txt", "tok.json"]

    hf_path = tmp_path / "tokenizer.json"
    assert glassllm("export", "pt", "-o", str(hf_path)).returncode == 0
    result = glassllm("export", str(tok_path), "-o", str(hf_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{hf_path}: Hugging Face tokenizer, 12 entries (3 merges)\n"
    assert tokenizers.Tokenizer.from_file(str(hf_path)).encode("banana banana").ids == Tokenizer.load(tok_path).encode(
        "banana banana"
    )
    assert glassllm("train", str(corpus), "--vocab-size", "12", "-o", str(hf_path)).returncode == 1

    assert glassllm("train", str(corpus), "--vocab-size", "12", "-o", str(notes), "--force").returncode == 0
    assert Tokenizer.load(notes).vocab_size == 12
    notes.write_text("my notes again\n", encoding="utf-8")
    assert glassllm("export", "pt", "-o", str(notes), "--force").returncode == 0
    assert json.loads(notes.read_text(encoding="utf-8"))["model"]["type"] == "BPE"


def test_export_of_a_packaged_tokenizer_matches_the_library(tmp_path):
    out = tmp_path / "tokenizer.json"
    result = glassllm("export", "pt", "-o", str(out))
    assert result.returncode == 0, result.stderr
    packaged("pt").save_hf(tmp_path / "library.json")
    assert out.read_bytes() == (tmp_path / "library.json").read_bytes()


def test_a_generator_of_texts_is_counted_as_it_comes():
    lines = ["banana banana\n", "cabana\n"] * 1000
    assert count_chunks(line for line in lines) == count_chunks(lines) == count_chunks("".join(lines))
    assert count_chunks((line for line in lines), jobs=2) == count_chunks(lines)


@settings(max_examples=1000, deadline=None)
@given(st.text(st.sampled_from(list("ab1  ▁▁\t\n\r\u2028\u00a0.,_é\u0301🙂")), max_size=60))
def test_counting_equals_the_chunk_regex_around_markers_and_whitespace(text):
    assert count_chunks(text) == Counter(pre_tokenize(text))
    assert count_chunks([text, text]) == Counter(pre_tokenize(text) * 2)


def test_a_corpus_file_that_cannot_be_read_is_named(tmp_path):
    missing = tmp_path / "nowhere.txt"
    with pytest.raises(OSError, match="cannot read corpus file") as raised:
        count_files([missing])
    assert raised.value.filename == str(missing)
