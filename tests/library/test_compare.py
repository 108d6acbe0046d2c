"""Comparing tokenizers: the library's aligned comparison and ``glassllm compare``."""

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glassllm import Tokenizer, compare, packaged
from glassllm.tokenizer import UNK_ID, pre_tokenize

PT, EN = packaged("pt"), packaged("en")
BANANA = Tokenizer.train("banana banana", vocab_size=12)  # the seeds' reproducible example


def test_the_seed_example_aligns_chunk_by_chunk():
    result = compare("banana banana", {"banana": BANANA, "pt": PT})
    assert result.names == ("banana", "pt")
    assert [chunk.chunk for chunk in result.chunks] == ["banana", "▁banana"]
    # "The second chunk's space stays separate because no ('▁', 'banana') merge was learned."
    assert [chunk.pieces[0] for chunk in result.chunks] == [("banana",), ("▁", "banana")]
    assert [chunk.ids[0] for chunk in result.chunks] == [(11,), (7, 11)]
    assert [list(chunk.ids[1]) for chunk in result.chunks] == [PT.encode("banana"), PT.encode(" banana")]
    assert [(chunk.start, chunk.end) for chunk in result.chunks] == [(0, 6), (6, 13)]
    banana, pt = result.totals
    assert (banana.name, banana.tokens, banana.chunks, banana.characters, banana.unknown) == ("banana", 3, 2, 13, 0)
    assert pt.tokens == len(PT.encode("banana banana"))


def test_the_reference_examples_align_with_unknown_characters_counted():
    result = compare("Olá mundo\n🧪", {"pt": PT, "banana": BANANA})
    assert [chunk.chunk for chunk in result.chunks] == ["Olá", "▁mundo", "\n", "🧪"]
    assert result.chunks[-1].ids == ((UNK_ID,), (UNK_ID,))
    banana = result.totals[1]
    # The banana tokenizer knows a, b, n and ▁ only: every other character is <unk>.
    assert banana.unknown == sum(c not in "abn▁" for c in "Olá▁mundo\n🧪")
    assert banana.tokens == len(BANANA.encode("Olá mundo\n🧪"))


def test_the_most_different_chunks_come_first():
    result = compare("A menina bonita.", {"pt": PT, "en": EN})
    ordered = result.most_different()
    assert all(not chunk.same for chunk in ordered)
    assert [chunk.spread for chunk in ordered] == sorted((chunk.spread for chunk in ordered), reverse=True)
    assert {chunk.chunk for chunk in result.chunks if not chunk.same} == {chunk.chunk for chunk in ordered}
    assert result.most_different(1) == ordered[:1]
    pt, en = result.totals
    assert pt.chars_per_token == len("A menina bonita.") / pt.tokens
    assert en.tokens > pt.tokens  # docs/tokenizer.md's lesson, on a small scale


def test_nfc_offsets_point_into_the_text_as_given():
    text = "cafe\u0301 caf\u00e9"
    result = compare(text, {"pt": PT, "en": EN})
    assert [text[chunk.start : chunk.end] for chunk in result.chunks] == ["cafe\u0301", " caf\u00e9"]
    assert [chunk.chunk for chunk in result.chunks] == ["caf\u00e9", "▁caf\u00e9"]


def test_empty_text_and_no_tokenizer():
    result = compare("", {"pt": PT})
    assert result.chunks == [] and result.totals[0].tokens == 0 and result.totals[0].chars_per_token == 0
    with pytest.raises(ValueError, match="at least one tokenizer"):
        compare("x", {})


prose = st.text(st.sampled_from(list("abcdeéãçõ ,.;—-!?'\"\n\r\t0123456789ABCÉ🙂\u0301_猫")), max_size=200)
any_text = st.text(st.characters(codec="utf-8"), max_size=120)


@settings(max_examples=300, deadline=None)
@given(st.one_of(prose, any_text))
def test_every_chunk_joins_back_under_every_tokenizer(text):
    result = compare(text, {"pt": PT, "en": EN, "banana": BANANA})
    assert [chunk.chunk for chunk in result.chunks] == pre_tokenize(text)
    for chunk in result.chunks:
        for pieces in chunk.pieces:
            assert "".join(pieces) == chunk.chunk
    for position, (_name, tok) in enumerate([("pt", PT), ("en", EN), ("banana", BANANA)]):
        ids = [token_id for chunk in result.chunks for token_id in chunk.ids[position]]
        assert ids == tok.encode(text)
        assert result.totals[position].tokens == len(ids)
        assert result.totals[position].unknown == ids.count(UNK_ID)
    spans = PT.encode_spans(text)
    bounds = [(chunk.start, chunk.end) for chunk in result.chunks]
    assert bounds == [
        (min(s.start for s in spans if s.chunk == i), max(s.end for s in spans if s.chunk == i))
        for i in range(len(bounds))
    ]


# The command line


def glassllm(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "glassllm.cli", *args], input=stdin, capture_output=True, text=True, timeout=60
    )


def test_compare_shows_columns_and_totals():
    result = glassllm("compare", "A menina", "--with", "en")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].split() == ["chunk", "pt", "en"]
    rows = {line.split()[0]: line.split()[1:] for line in result.stdout.splitlines() if line.strip()}
    pt, en = compare("A menina", {"pt": PT, "en": EN}).chunks[1].pieces
    assert rows["▁menina"] == ["·".join(pt), str(len(pt)), "·".join(en), str(len(en))]
    assert rows["tokenizer"] == ["tokens", "chunks", "unknown", "chars/token"]
    assert rows["pt"] == [str(len(PT.encode("A menina"))), "2", "0", f"{8 / len(PT.encode('A menina')):.2f}"]
    assert rows["en"][0] == str(len(EN.encode("A menina")))


def test_compare_defaults_to_the_other_packaged_tokenizer_and_reads_stdin():
    result = glassllm("compare", "-t", "en", stdin="The girl\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].split() == ["chunk", "en", "pt"]
    assert "\\n " in result.stdout  # the line break's chunk, as every glassllm output shows it


def test_compare_with_several_tokenizers_as_json(tmp_path):
    path = tmp_path / "banana.json"
    BANANA.save(path)
    text = "banana menina 🧪"
    result = glassllm("compare", "--json", "--with", "en", "--with", str(path), text)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    names = ["pt", "en", str(path)]
    assert data["tokenizers"] == names
    expected = compare(text, {"pt": PT, "en": EN, "banana": BANANA})
    assert [t["tokens"] for t in data["totals"]] == [t.tokens for t in expected.totals]
    assert [t["unknown"] for t in data["totals"]] == [t.unknown for t in expected.totals]
    assert [c["chunk"] for c in data["chunks"]] == ["banana", "▁menina", "▁🧪"]
    assert data["chunks"][0]["pieces"][str(path)] == ["banana"]
    assert data["chunks"][1]["ids"]["en"] == EN.encode(" menina")
    assert data["mostDifferent"] == [c.index for c in expected.most_different()]


def test_compare_reads_a_file_and_shows_the_most_different_chunks_of_a_long_text(tmp_path):
    text = "A menina bonita comeu. " * 40
    path = tmp_path / "texto.txt"
    path.write_text(text, encoding="utf-8")
    result = glassllm("compare", "--file", str(path), "--limit", "3")
    assert result.returncode == 0, result.stderr
    chunks = len(pre_tokenize(text))
    assert f"{chunks:,} chunks; the 3 that the tokenizers split most differently" in result.stdout
    table = result.stdout.split("\n\n")[1].splitlines()
    most = compare(text, {"pt": PT, "en": EN}).most_different(3)
    assert [line.split()[0] for line in table[1:]] == [chunk.chunk for chunk in most]
    assert glassllm("compare", "--file", str(path), "--limit", "0").stdout.count("▁menina") == 40


def test_compare_errors_are_one_clear_line():
    for args, message in [
        (["compare", "x", "--with", "pt"], "pt is given twice"),
        (["compare", "x", "--with", "missing.json"], "missing.json"),
    ]:
        result = glassllm(*args)
        assert result.returncode == 1
        assert message in result.stderr
        assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
