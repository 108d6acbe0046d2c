"""Counts files: written by one job, summed, learned from; a tokenizer trained from them is
byte-identical to one trained on the text, and counts made another way are refused."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

from glassllm import Tokenizer
from glassllm.training.chunk_counting import count_chunks
from glassllm.training.counts_files import counts_stamp, read_counts, rule_digest, sum_counts, write_counts


def glassllm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "glassllm.cli", *args], capture_output=True, text=True, timeout=180)


@pytest.mark.parametrize("name", ["c.counts", "c.counts.gz", "c.counts.bz2", "c.counts.xz", "c.counts.zst"])
def test_counts_survive_a_file_exactly(tmp_path, name):
    counts = count_chunks('banana banana\r\n\tolá 🙂 \u2028 "quoted"\n' * 3 + "a   b")
    write_counts(counts, tmp_path / name)
    assert read_counts(tmp_path / name) == counts
    assert [path.name for path in tmp_path.iterdir()] == [name]  # no temporary file left behind


def test_the_format_is_one_stamp_then_one_json_pair_a_line(tmp_path):
    write_counts(Counter({"▁b": 2, "a\n": 2, "\n": 5}), tmp_path / "c.counts")
    lines = (tmp_path / "c.counts").read_text(encoding="utf-8").split("\n")
    assert json.loads(lines[0]) == counts_stamp()
    assert counts_stamp()["glassllm_counts"] == 1 and rule_digest().startswith("sha256:")
    assert lines[1:] == ['["\\n", 5]', '["a\\n", 2]', '["▁b", 2]', ""]


def test_counts_written_elsewhere_are_summed_line_by_line(tmp_path):
    """What a Spark or Ray job would write: the stamp, then pairs, a chunk on several lines."""
    stamp = json.dumps(counts_stamp())
    (tmp_path / "part-0.counts").write_text(f'{stamp}\n["▁banana", 2]\n["banana", 1]\n["▁banana", 1]\n', "utf-8")
    (tmp_path / "part-1.counts").write_text(f'{stamp}\n["▁banana", 4]\n', "utf-8")
    total = sum_counts([tmp_path / "part-0.counts", tmp_path / "part-1.counts"])
    assert total == Counter({"▁banana": 7, "banana": 1})


def test_counts_made_by_another_version_or_rule_are_refused(tmp_path):
    path = tmp_path / "c.counts"

    def write(stamp: dict, *lines: str) -> None:
        path.write_text("\n".join([json.dumps(stamp), *lines]) + "\n", encoding="utf-8")

    write({**counts_stamp(), "rule": "sha256:0000"}, '["a", 1]')
    with pytest.raises(ValueError, match=r"c.counts: counted with another normalization or chunk rule .*count the"):
        read_counts(path)
    write({**counts_stamp(), "glassllm": "0.0.1"}, '["a", 1]')
    with pytest.raises(ValueError, match=r"c.counts: counted by glassllm '0.0.1', this is glassllm '.*'; count the"):
        read_counts(path)
    write({**counts_stamp(), "glassllm_counts": 2}, '["a", 1]')
    with pytest.raises(ValueError, match=r"c.counts: counts format 2; this glassllm reads format 1"):
        read_counts(path)
    path.write_text("banana\t3\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"c.counts: not a glassllm counts file"):
        read_counts(path)
    for line, problem in [
        ('["a", 0]', r"c.counts:3: 'a' has count 0, expected a positive integer"),
        ('["a", true]', r"c.counts:3: 'a' has count True"),
        ('["", 2]', r"c.counts:3: a chunk must be a non-empty string"),
        ('{"a": 2}', r"c.counts:3: expected \[chunk, count\]"),
        ("a 2", r"c.counts:3: expected \[chunk, count\], found 'a 2'"),
    ]:
        write(counts_stamp(), '["b", 1]', line)
        with pytest.raises(ValueError, match=problem):
            read_counts(path)


def test_count_then_train_from_counts_is_byte_identical_to_training_on_the_text(tmp_path, corpus_text):
    en, pt = tmp_path / "en.txt", tmp_path / "pt.txt"
    en.write_text(corpus_text("en", 200_000), encoding="utf-8")
    pt.write_text(corpus_text("pt", 200_000), encoding="utf-8")
    for corpus, counts in ((en, "en.counts"), (pt, "pt.counts.zst")):
        result = glassllm("count", str(corpus), "-o", str(tmp_path / counts), "--jobs", "2")
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith(f"{tmp_path / counts}: ") and " distinct chunks, " in result.stdout
    trained = ["train", "--vocab-size", "600"]
    counts_files = [str(tmp_path / "en.counts"), str(tmp_path / "pt.counts.zst")]
    assert glassllm(*trained, "--counts", *counts_files, "-o", str(tmp_path / "from-counts.json")).returncode == 0
    assert glassllm(*trained, str(en), str(pt), "-o", str(tmp_path / "from-text.json")).returncode == 0
    # Counts and text together: the English counts and the Portuguese text.
    mixed = glassllm(*trained, str(pt), "--counts", counts_files[0], "-o", str(tmp_path / "mixed.json"))
    assert mixed.returncode == 0, mixed.stderr
    Tokenizer.train(en.read_text("utf-8") + pt.read_text("utf-8"), 600).save(tmp_path / "library.json")
    expected = (tmp_path / "library.json").read_bytes()
    for name in ("from-counts.json", "from-text.json", "mixed.json"):
        assert (tmp_path / name).read_bytes() == expected, name


def test_count_refuses_to_replace_a_file_that_is_not_counts(tmp_path):
    corpus, notes = tmp_path / "corpus.txt", tmp_path / "notes.txt"
    corpus.write_text("banana banana\n", encoding="utf-8")
    notes.write_text("my notes\n", encoding="utf-8")
    result = glassllm("count", str(corpus), "-o", str(notes))
    assert result.returncode == 1
    assert "notes.txt exists and is not a counts file this glassllm reads; not replacing it" in result.stderr
    assert notes.read_text(encoding="utf-8") == "my notes\n"
    assert glassllm("count", str(corpus), "-o", str(notes), "--force").returncode == 0
    assert read_counts(notes) == Counter({"banana": 1, "▁banana": 1, "\n": 1})
    assert glassllm("count", str(corpus), "-o", str(notes)).returncode == 0  # counts replace counts


def test_train_needs_a_corpus_or_counts_and_names_a_refused_counts_file(tmp_path):
    result = glassllm("train", "-o", str(tmp_path / "tok.json"))
    assert result.returncode == 1 and "name corpus files, counts files (--counts), or both" in result.stderr
    stale = tmp_path / "old.counts"
    stale.write_text(json.dumps({**counts_stamp(), "glassllm": "0.0.1"}) + '\n["a", 1]\n', encoding="utf-8")
    result = glassllm("train", "--counts", str(stale), "-o", str(tmp_path / "tok.json"))
    assert result.returncode == 1
    assert result.stderr.startswith(f"glassllm train: {stale}: counted by glassllm '0.0.1'")
    assert not (tmp_path / "tok.json").exists()
