"""The glassllm command, run as a user runs it: the installed console script."""

import json
import subprocess
import sys

import pytest

from glassllm import Tokenizer, packaged


def glassllm(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "glassllm.cli", *args], input=stdin, capture_output=True, text=True, timeout=60
    )


def test_encode_uses_the_portuguese_tokenizer_by_default():
    result = glassllm("encode", "Era uma vez")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(i) for i in packaged("pt").encode("Era uma vez")]


def test_encode_reads_standard_input_and_prints_json():
    result = glassllm("encode", "--json", "-t", "en", stdin="Once upon a time\n")
    assert json.loads(result.stdout) == packaged("en").encode("Once upon a time\n")


def test_decode_inverts_encode():
    ids = [str(i) for i in packaged("pt").encode("Olá, mundo!")]
    assert glassllm("decode", *ids).stdout == "Olá, mundo!\n"
    assert glassllm("decode", stdin=json.dumps([int(i) for i in ids])).stdout == "Olá, mundo!\n"


def test_decode_explains_ids_out_of_range():
    result = glassllm("decode", "5", "99999")
    assert result.returncode != 0
    assert "99999" in result.stderr and "1024 entries" in result.stderr


def test_explain_shows_each_merge_with_rank_and_training_count():
    tok = packaged("pt")
    result = glassllm("explain", "vez")
    assert result.returncode == 0, result.stderr
    (item,) = tok.explain("vez")
    for step in item.steps:
        assert f"rank {step.rank:>4} {step.pair[0]} + {step.pair[1]} → {step.result}" in result.stdout
        assert f"seen {step.count:,} times" in result.stdout
    assert f"ids [{', '.join(map(str, item.ids))}]" in result.stdout


def test_inspect_shows_pieces_ids_boundaries_and_the_count():
    text = "Era uma vez 🧪"
    result = glassllm("inspect", text)
    assert result.returncode == 0, result.stderr
    spans = packaged("pt").encode_spans(text)
    assert result.stdout.startswith("[E][ra][▁uma][▁vez][▁][🧪]\n")
    assert f"{len(spans)} tokens · 4 chunks · {len(text)} characters" in result.stdout
    assert "1 unknown · tokenizer pt" in result.stdout
    assert "'🧪'  (<unk>)" in result.stdout


def test_inspect_says_where_each_token_is_first_and_last_character_counted_from_1():
    text = "Era uma vez\r\nna chuva 🧪"
    result = glassllm("inspect", text)
    rows = {line.split()[4]: line.split()[3] for line in result.stdout.splitlines() if line[:5].strip().isdigit()}
    assert rows["'▁vez'"] == "1:8–1:11"
    assert rows["'\\r'"] == "1:12" and rows["'\\n'"] == "1:13"  # the line ending ends line 1
    assert rows["'na'"] == "2:1–2:2" and rows["'u'"] == "2:6"
    assert "'at' is where a token's characters are" in glassllm("inspect", "--help").stdout


def test_inspect_reads_a_file(tmp_path):
    path = tmp_path / "texto.txt"
    path.write_text("Era uma vez\n", encoding="utf-8")
    result = glassllm("inspect", "--file", str(path), "--tokenizer", "en")
    assert "tokenizer en" in result.stdout
    assert "[⏎\n]" in result.stdout


def test_train_writes_a_tokenizer_that_loads(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("banana banana\n" * 3, encoding="utf-8")
    out = tmp_path / "tok.json"
    result = glassllm("train", str(corpus), "--vocab-size", "12", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert f"{out}: 12 entries (5 characters, 3 merges)" in result.stdout
    assert Tokenizer.load(out).merges == Tokenizer.train("banana banana\n" * 3, 12).merges


def test_a_tokenizer_path_works_everywhere(tmp_path):
    path = tmp_path / "banana.json"
    Tokenizer.train("banana banana", 12).save(path)
    assert glassllm("encode", "-t", str(path), "banana banana").stdout.split() == ["11", "7", "11"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["encode", "-t", "missing.json", "x"], "missing.json"),
        (["train", "nowhere.txt", "-o", "x.json"], "nowhere.txt"),
        # --quiet: otherwise the counting stage, which succeeded, says so on a line first.
        (["train", "--vocab-size", "3", "-o", "x.json", "--quiet", "__CORPUS__"], "at least"),
    ],
)
def test_errors_are_one_clear_line(tmp_path, args, message):
    corpus = tmp_path / "c.txt"
    corpus.write_text("abc", encoding="utf-8")
    args = [str(corpus) if arg == "__CORPUS__" else arg for arg in args]
    result = glassllm(*args)
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_inspect_shows_the_first_tokens_of_a_long_text_and_counts_them_all():
    text = "Era uma vez. " * 100
    total = len(packaged("pt").encode(text))
    result = glassllm("inspect", "--limit", "10", text)
    assert result.returncode == 0, result.stderr
    table = [line for line in result.stdout.splitlines() if line[:5].strip().isdigit()]
    assert len(table) == 10
    assert f"… the first 10 of {total:,} tokens (--limit 0 shows them all)" in result.stdout
    assert f"{total:,} tokens · 401 chunks" in result.stdout  # 4 a sentence, and the last space
    everything = glassllm("inspect", "--limit", "0", text)
    assert len([line for line in everything.stdout.splitlines() if line[:5].strip().isdigit()]) == total
