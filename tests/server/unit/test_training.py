"""Training from the editor without a server: gathering text, cancellation, atomic output."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from glassllm import Tokenizer
from glassllm.shown.problems import describe
from glassllm.training.chunk_counting import count_chunks
from glassllm_server.training import (
    NotATokenizerFile,
    Percent,
    TrainingCancelled,
    check_unicode,
    gather_files,
    train_tokenizer,
)


def test_a_folder_gives_its_text_files_in_order(tmp_path):
    (tmp_path / "b.txt").write_text("dois", encoding="utf-8")
    (tmp_path / "a.md").write_text("um\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.txt").write_text("três", encoding="utf-8")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref", encoding="utf-8")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    (tmp_path / "latin1.txt").write_bytes("não".encode("latin-1"))
    source = gather_files(tmp_path)
    assert [path.name for path in source.files] == ["a.md", "b.txt", "c.txt"]
    assert [path.name for path in source.skipped] == ["latin1.txt"]
    # Each file counts as a text of its own: "dois" and "três" never join.
    assert source.count() == count_chunks(["um\n", "dois", "três"])


def test_a_folder_without_text_and_a_binary_file_are_errors(tmp_path):
    with pytest.raises(ValueError, match="no text files"):
        gather_files(tmp_path)
    (tmp_path / "x.txt").write_bytes(b"a\0b")
    with pytest.raises(ValueError, match="not UTF-8"):
        gather_files(tmp_path / "x.txt")
    with pytest.raises(OSError):
        gather_files(tmp_path / "missing.txt")


def test_over_tcp_a_folder_leaves_out_files_that_lead_outside(tmp_path):
    workspace, outside = tmp_path / "workspace", tmp_path / "outside"
    (outside / "folder").mkdir(parents=True)
    (outside / "secret.txt").write_text("segredo", encoding="utf-8")
    (outside / "folder" / "deep.txt").write_text("segredo", encoding="utf-8")
    workspace.mkdir()
    (workspace / "own.txt").write_text("banana", encoding="utf-8")
    (workspace / "leak.txt").symlink_to(outside / "secret.txt")
    (workspace / "linked").symlink_to(outside / "folder")
    (workspace / "near.txt").symlink_to(workspace / "own.txt")  # a link that stays inside
    source = gather_files(workspace, [workspace])
    assert [path.name for path in source.files] == ["near.txt", "own.txt"]
    assert [path.name for path in source.skipped] == ["leak.txt"]
    # Over stdio the user's links are the user's wish.
    assert [path.name for path in gather_files(workspace).files] == ["leak.txt", "near.txt", "own.txt"]


def test_a_source_that_is_not_a_regular_file_is_refused_unread(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        with pytest.raises(ValueError, match=re.escape(f"{path}: not a regular file or a folder")):
            gather_files(path)


def test_training_writes_the_tokenizer_and_reports_each_merge(tmp_path):
    reports = []
    output = tmp_path / "new" / "tok.json"
    tok = train_tokenizer(count_chunks("banana banana"), 12, output, lambda d, t: reports.append((d, t)), lambda: False)
    assert Tokenizer.load(output).merges == tok.merges == [("a", "n"), ("an", "a"), ("an", "ana"), ("b", "anana")]
    assert reports == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_cancelling_leaves_an_existing_file_untouched_and_writes_nothing_new(tmp_path):
    output = tmp_path / "tok.json"
    output.write_text('{"old": true}', encoding="utf-8")
    calls = []
    with pytest.raises(NotATokenizerFile, match=re.escape("tok.json exists and is not a glassllm tokenizer file")):
        train_tokenizer(count_chunks("banana"), 12, output, lambda d, t: None, lambda: False)

    def cancelled():
        calls.append(1)
        return len(calls) > 3

    with pytest.raises(TrainingCancelled):
        train_tokenizer(
            count_chunks("banana bandana cabana " * 50), 40, output, lambda d, t: None, cancelled, replace=True
        )
    assert json.loads(output.read_text(encoding="utf-8")) == {"old": True}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tok.json"]
    with pytest.raises(TrainingCancelled):
        train_tokenizer(count_chunks("banana"), 12, tmp_path / "other.json", lambda d, t: None, lambda: True)
    assert not (tmp_path / "other.json").exists()


def test_too_small_a_vocabulary_is_a_value_error(tmp_path):
    with pytest.raises(ValueError, match="at least"):
        train_tokenizer(count_chunks("banana"), 5, tmp_path / "t.json", lambda d, t: None, lambda: False)
    assert not (tmp_path / "t.json").exists()


def test_percent_reports_each_whole_percent_once():
    percent = Percent()
    seen = [p for done in range(1, 1001) if (p := percent(done, 1000)) is not None]
    assert seen == list(range(0, 101))  # 1 of 1,000 is 0 %
    assert Percent()(0, 0) == 100


def run_child(*arguments: str, text: str | None = None) -> list[dict]:
    finished = subprocess.run(
        [sys.executable, "-m", "glassllm_server.training", *arguments],
        input=None if text is None else text.encode("utf-8"),
        capture_output=True,
        check=True,
        timeout=60,
    )
    return [json.loads(line) for line in finished.stdout.decode("utf-8").splitlines()]


def test_the_training_process_reports_json_lines(tmp_path):
    lines = run_child("12", str(tmp_path / "t.json"), text="banana banana")
    assert lines == [{"progress": [n, 4]} for n in range(1, 5)] + [
        {"done": {"vocabSize": 12, "alphabet": 4, "merges": 4, "files": [], "skipped": []}}
    ]
    assert Tokenizer.load(tmp_path / "t.json").merges == [("a", "n"), ("an", "a"), ("an", "ana"), ("b", "anana")]
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "a.txt").write_text("banana banana", encoding="utf-8")
    assert run_child("12", str(tmp_path / "u.json"), str(tmp_path / "corpus"))[-1]["done"]["files"] == [
        str(tmp_path / "corpus" / "a.txt")
    ]
    (error,) = run_child("5", str(tmp_path / "v.json"), text="banana")
    assert "at least" in error["error"] and not (tmp_path / "v.json").exists()
    (tmp_path / "notes.txt").write_text("notes\n", encoding="utf-8")
    (error,) = run_child("12", str(tmp_path / "notes.txt"), text="banana")
    assert error == {"error": f"{tmp_path / 'notes.txt'} exists and is not a glassllm tokenizer file"}
    assert run_child("12", str(tmp_path / "notes.txt"), "--replace", text="banana")[-1]["done"]["merges"] == 4
    assert Tokenizer.load(tmp_path / "notes.txt").vocab_size == 11


def test_the_training_process_words_its_errors_in_the_users_language(tmp_path):
    (tmp_path / "notes.txt").write_text("notes\n", encoding="utf-8")
    (error,) = run_child("12", str(tmp_path / "notes.txt"), "--locale", "pt", text="banana")
    assert error == {"error": f"{tmp_path / 'notes.txt'} existe e não é um arquivo de tokenizador do glassllm"}
    (tmp_path / "empty").mkdir()
    (error,) = run_child("12", str(tmp_path / "t.json"), str(tmp_path / "empty"), "--locale", "pt")
    assert error == {"error": f"{tmp_path / 'empty'}: nenhum arquivo de texto para treinar"}
    (error,) = run_child("12", str(tmp_path / "t.json"), str(tmp_path / "empty"))
    assert error == {"error": f"{tmp_path / 'empty'}: no text files to train on"}
    (error,) = run_child("5", str(tmp_path / "v.json"), "--locale", "pt", text="banana")
    assert "não comporta" in error["error"]


def test_sigterm_cancels_the_training_process_before_it_writes(tmp_path):
    # Enough distinct words that merges go on for a second after the first report: with few,
    # they could run out before the signal arrives.
    generator = random.Random(7)
    syllables = [a + b for a in "bcdfglmnprstv" for b in "aeiou"]
    words = ["".join(generator.choices(syllables, k=generator.randint(3, 10))) for _ in range(20000)]
    child = subprocess.Popen(
        [sys.executable, "-m", "glassllm_server.training", "100000", str(tmp_path / "t.json")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(" ".join(words * 3).encode("utf-8"))
    child.stdin.close()
    assert "progress" in json.loads(child.stdout.readline())
    child.send_signal(signal.SIGTERM)
    last = [json.loads(line) for line in child.stdout.read().decode("utf-8").splitlines()][-1]
    assert child.wait(timeout=60) == 0
    assert last == {"cancelled": True}
    assert list(tmp_path.iterdir()) == []


def test_the_training_process_counts_a_large_corpus_in_workers_and_finishes(tmp_path):
    """Past a megabyte, counting forks workers; they must not inherit the process's
    SIGTERM flag, or the pool could never stop them (and training would hang)."""
    text = "banana bandana cabana\n" * 60_000
    (tmp_path / "corpus.txt").write_text(text, encoding="utf-8")
    expected = Tokenizer.train(text, 20).merges
    assert run_child("20", str(tmp_path / "a.json"), str(tmp_path / "corpus.txt"))[-1]["done"]["merges"] == len(
        expected
    )
    assert run_child("20", str(tmp_path / "b.json"), text=text)[-1]["done"]["merges"] == len(expected)
    assert Tokenizer.load(tmp_path / "a.json").merges == Tokenizer.load(tmp_path / "b.json").merges == expected


def test_check_unicode_names_the_first_lone_surrogate_as_the_library_does():
    check_unicode("banana 🧪 banana")  # a pair of surrogates in UTF-16 is one character here
    with pytest.raises(ValueError) as raised:
        check_unicode("ab\udc80c\ud800")
    assert str(raised.value) == str(_library_error("ab\udc80c\ud800"))
    assert describe(raised.value, "pt").startswith("o texto tem um surrogate isolado (U+DC80) na posição 2")


def _library_error(text: str) -> ValueError:
    with pytest.raises(ValueError) as raised:
        Tokenizer.train(text, 300)
    return raised.value
