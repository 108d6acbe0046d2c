"""The corpora people have: folders, globs, compressed text, JSON Lines and Parquet count
exactly what their texts count; bad input names the file and the line or row."""

from __future__ import annotations

import fcntl
import gzip
import json
import os
import pty
import struct
import subprocess
import sys
import termios
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from glassllm import Tokenizer
from glassllm.training import chunk_counting, corpus
from glassllm.training.chunk_counting import count_chunks, count_files
from glassllm.training.corpus import corpus_files, corpus_parts


def glassllm(*args: str, **options) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "glassllm.cli", *args], capture_output=True, text=True, timeout=180, **options
    )


def test_every_format_counts_what_its_texts_count(mixed_corpus):
    expected = count_chunks(mixed_corpus.texts, jobs=1)
    assert count_files(mixed_corpus.files, field="text") == expected
    assert count_files([mixed_corpus.folder], field="text", jobs=2) == expected
    assert count_files([f"{mixed_corpus.folder}/*"], field="text") == expected


def test_small_parts_cut_at_line_breaks_and_row_groups_count_the_same(mixed_corpus, monkeypatch):
    expected = count_chunks(mixed_corpus.texts, jobs=1)
    monkeypatch.setattr(chunk_counting, "_PART_BYTES", 8_000)
    monkeypatch.setattr(chunk_counting, "_BLOCK", 5_000)
    monkeypatch.setattr(corpus, "BLOCK", 5_000)
    parts = corpus_parts(mixed_corpus.files, 8_000, "text")
    assert len([part for part in parts if part.path.endswith("a-en.txt")]) > 10
    assert len([part for part in parts if part.kind == "parquet"]) > 2
    assert sum(part.size for part in parts) == sum(os.path.getsize(path) for path in mixed_corpus.files)
    assert count_files(mixed_corpus.files, field="text", jobs=1) == expected
    assert count_files(mixed_corpus.files, field="text", jobs=2) == expected


def test_folders_globs_and_urls_name_files(tmp_path):
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    for name in ("b.txt", "sub/a.txt", "sub/deeper/c.txt.gz", ".hidden.txt", ".git/config"):
        (tmp_path / name).write_text("x\n", encoding="utf-8")
    assert corpus_files([tmp_path]) == [str(tmp_path / name) for name in ("b.txt", "sub/a.txt", "sub/deeper/c.txt.gz")]
    assert corpus_files([f"{tmp_path}/**/*.txt"]) == [str(tmp_path / "b.txt"), str(tmp_path / "sub/a.txt")]
    assert corpus_files([f"file://{tmp_path}/sub/*.txt"]) == [f"file://{tmp_path}/sub/a.txt"]
    with pytest.raises(FileNotFoundError, match="no corpus file matches this pattern"):
        corpus_files([f"{tmp_path}/*.parquet"])
    with pytest.raises(FileNotFoundError, match=r"nothing\.txt"):
        corpus_files([tmp_path / "nothing.txt"])


def test_a_file_url_reads_like_the_path(mixed_corpus):
    urls = [f"file://{path}" for path in mixed_corpus.files]
    assert count_files(urls, field="text") == count_chunks(mixed_corpus.texts, jobs=1)


def test_invalid_utf8_and_missing_fields_name_the_file_and_line_or_row(tmp_path):
    text = tmp_path / "bad.txt.gz"
    text.write_bytes(gzip.compress(b"ok\n" * 5 + b"caf\xe9\n"))
    with pytest.raises(ValueError, match=r"bad.txt.gz:6: not UTF-8 text \(invalid continuation byte\)"):
        count_files([text])

    records = tmp_path / "records.jsonl"
    records.write_bytes(b'{"text": "a"}\n\n{"body": "b"}\n')
    with pytest.raises(ValueError, match=r"records.jsonl:3: the record has no field 'text'"):
        count_files([records], field="text")
    records.write_bytes(b'{"text": "a"}\n{"text": 3}\n')
    with pytest.raises(ValueError, match=r"records.jsonl:2: field 'text' holds int, not text"):
        count_files([records], field="text")
    records.write_bytes(b'{"text": "a"}\n{"text": "\xff"}\n')
    with pytest.raises(ValueError, match=r"records.jsonl:2: not UTF-8 text"):
        count_files([records], field="text")
    records.write_bytes(b'{"text": "a"}\n{"text": \n')
    with pytest.raises(ValueError, match=r"records.jsonl:2: not a JSON record"):
        count_files([records], field="text")
    with pytest.raises(ValueError, match=r"records.jsonl: a JSON Lines file needs the field .*\(--field text\)"):
        count_files([records])

    table = tmp_path / "table.parquet"
    pq.write_table(pa.table({"text": ["a", "b", None, "d"]}), table, row_group_size=2)
    with pytest.raises(ValueError, match=r"table.parquet: row 2: field 'text' is missing \(null\)"):
        count_files([table], field="text")
    with pytest.raises(ValueError, match=r"table.parquet: no field 'body' \(its fields: text\)"):
        count_files([table], field="body")
    invalid = pa.array([b"ok", b"caf\xe9"], pa.binary()).view(pa.string())
    pq.write_table(pa.table({"text": invalid}), table)
    with pytest.raises(ValueError, match=r"table.parquet: row 1: not UTF-8 text"):
        count_files([table], field="text")
    pq.write_table(pa.table({"text": [1, 2]}), table)
    with pytest.raises(ValueError, match=r"table.parquet: field 'text' holds int64, not text"):
        count_files([table], field="text")


def test_a_zst_text_counts_like_the_text(tmp_path):
    path = tmp_path / "a.txt.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(b"banana banana\n" * 3))
    assert count_files([path]) == Counter(["banana"] * 3 + ["▁banana"] * 3 + ["\n"] * 3)


def test_glassllm_train_on_every_format_is_byte_identical_to_training_on_the_texts(mixed_corpus, tmp_path):
    out = tmp_path / "tok.json"
    result = glassllm("train", str(mixed_corpus.folder), "--field", "text", "--vocab-size", "500", "-o", str(out))
    assert result.returncode == 0, result.stderr
    Tokenizer.train_from_counts(count_chunks(mixed_corpus.texts, jobs=1), 500).save(tmp_path / "library.json")
    assert out.read_bytes() == (tmp_path / "library.json").read_bytes()
    # Not on a terminal: one line per stage, and none with --quiet.
    lines = result.stderr.splitlines()
    assert len(lines) == 2, result.stderr
    assert lines[0].startswith("counted ") and "distinct chunks in " in lines[0]
    assert lines[1].startswith("learned ") and " merges in " in lines[1]
    quiet = glassllm("train", str(mixed_corpus.folder), "--field", "text", "--vocab-size", "500", "-o", str(out), "-q")
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_on_a_terminal_counting_and_learning_show_progress_bars(tmp_path, corpus_text):
    corpus_path = tmp_path / "corpus.txt"
    corpus_path.write_text(corpus_text("en", 500_000), encoding="utf-8")
    leader, follower = pty.openpty()
    # A terminal of 24 rows and 100 columns (a new pseudo-terminal has none).
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    try:
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "glassllm.cli",
                "train",
                str(corpus_path),
                "--vocab-size",
                "400",
                "-o",
                str(tmp_path / "t.json"),
            ],
            stdout=subprocess.PIPE,
            stderr=follower,
        )
        os.close(follower)
        follower = -1
        shown = b""
        while True:
            try:
                data = os.read(leader, 4096)
            except OSError:  # the terminal closed with the child
                break
            if not data:
                break
            shown += data
        assert child.wait(timeout=120) == 0
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    screen = shown.decode("utf-8", "replace")
    assert "counting: 100%" in screen and "B/s" in screen
    assert "learning: 100%" in screen and "merges/s" in screen
    assert "counted " not in screen  # the bars replace the plain lines


def test_count_files_reports_bytes_read(mixed_corpus):
    seen: list[tuple[int, int]] = []
    count_files(mixed_corpus.files, field="text", progress=lambda done, total: seen.append((done, total)))
    total = sum(os.path.getsize(path) for path in mixed_corpus.files)
    assert seen[-1] == (total, total)
    assert all(done <= total for done, _ in seen) and [done for done, _ in seen] == sorted(done for done, _ in seen)


def test_json_lines_records_are_texts_of_their_own(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"text": "banana"}) + "\n" + json.dumps({"text": "\u0301s"}) + "\n", encoding="utf-8")
    assert count_files([path], field="text") == Counter(["banana", "\u0301", "s"])
