"""Loading real models' files: recognition from the content, clear errors, ``hf:`` ids
from the local cache only, readable pieces, long chunks, and the command line."""

# The fixtures are imported from tests/library/formats/fixtures.py (see there why), so a test's
# parameter of the same name is the fixture, not a redefinition.
# ruff: noqa: F811

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from glassllm import load_tokenizer, packaged
from glassllm.formats.byte_level import readable
from glassllm.formats.hf_bpe import HFByteLevelBPE, HFMetaspaceBPE
from glassllm.formats.load import EXPECTED, model_kind
from glassllm.formats.protobuf import fields
from glassllm.formats.sentencepiece_bpe import SentencePieceBPE
from glassllm.formats.tekken import Tekken
from glassllm.pipeline.any_tokenizer import AnyTokenizer
from glassllm.shown.problems import describe
from tests.conftest import CORPORA
from tests.library.formats.fixtures import (  # noqa: F401 (fixtures)
    FILES,
    METASPACE_MODELS,
    converted,
    hf_tokenizer,
    model,
    model_file,
    reference,
)


def glassllm(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "glassllm.cli", *args], input=stdin, capture_output=True, text=True, timeout=240
    )


@pytest.mark.parametrize(
    ("name", "kind"),
    [("llama3", HFByteLevelBPE), ("gpt4o", HFByteLevelBPE), ("mistral-v1", SentencePieceBPE), ("tekken", Tekken)],
)
def test_the_format_is_recognized_from_the_content_not_the_name(model, tmp_path, name, kind):
    disguised = tmp_path / "tokenizer.bin"
    shutil.copyfile(model_file(name), disguised)
    assert model_kind(disguised.read_bytes()) in ("hf", "sentencepiece", "tekken")
    if name != "llama3":  # one large copy is enough to load
        return
    loaded = load_tokenizer(disguised)
    assert isinstance(loaded, kind)
    assert isinstance(loaded, AnyTokenizer)
    assert loaded.encode("Era uma vez") == model(name).encode("Era uma vez")


def test_every_tokenizer_satisfies_the_protocol(model):
    assert isinstance(packaged("pt"), AnyTokenizer)
    for name in FILES:
        assert isinstance(model(name), AnyTokenizer)


def test_anything_else_gets_one_error_naming_the_file_and_what_was_expected(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("# my notes\nnothing here\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"notes\.txt: not a tokenizer file: expected") as raised:
        load_tokenizer(notes)
    assert EXPECTED in str(raised.value)
    assert describe(raised.value, "pt").endswith(
        "não é um arquivo de tokenizador: esperava um JSON de tokenizador do glassllm, um tokenizer.json "
        "da Hugging Face (BPE, WordPiece, WordLevel ou Unigram), um JSON Tekken"
        " ou um .model do SentencePiece (BPE ou Unigram)"
    )
    with pytest.raises(FileNotFoundError, match=r"nowhere\.model"):
        load_tokenizer(tmp_path / "nowhere.model")


def test_other_hf_models_are_refused_by_name(tmp_path):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"version": "1.0", "model": {"type": "Bigram", "vocab": []}}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"other\.json: not a BPE model \(Hugging Face Bigram\)"):
        load_tokenizer(other)


def test_bpe_outside_the_fast_layouts_is_read_by_hf_stages(tmp_path):
    """Byte fallback without Metaspace, and Lowercase before a Replace of spaces, once
    refused: HF's stages one by one read them (tests/library/formats/test_hf_bpe_words.py
    has the differential tests)."""
    tokenizers = pytest.importorskip("tokenizers")
    vocab = {"<0x61>": 0, "a": 1, "<0xC3>": 2, "<0xA9>": 3, "\u2581": 4, "b": 5, "ab": 6}
    model = {"type": "BPE", "vocab": vocab, "merges": [["a", "b"]], "byte_fallback": True}
    replace = {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}
    layouts = [
        {"model": model},
        {"model": model, "normalizer": {"type": "Sequence", "normalizers": [{"type": "Lowercase"}, replace]}},
    ]
    for index, layout in enumerate(layouts):
        path = tmp_path / f"odd{index}.json"
        path.write_text(json.dumps(layout), encoding="utf-8")
        text = "AB é ab"
        expected = tokenizers.Tokenizer.from_file(str(path)).encode(text, add_special_tokens=False)
        spans = load_tokenizer(path).encode_spans(text)
        assert [(span.id, span.start, span.end) for span in spans] == [
            (token_id, *offsets) for token_id, offsets in zip(expected.ids, expected.offsets, strict=True)
        ]


def test_dropout_is_refused_in_one_line(tmp_path):
    path = tmp_path / "dropout.json"
    model = {"type": "BPE", "vocab": {"a": 0}, "merges": [], "dropout": 0.1}
    path.write_text(json.dumps({"model": model}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"^\S*dropout\.json: model\.dropout 0\.1 makes HF's BPE encoding random"):
        load_tokenizer(path)
    model["dropout"] = 0.0
    path.write_text(json.dumps({"model": model}), encoding="utf-8")
    assert load_tokenizer(path).encode("aa") == [0, 0]


def test_a_metaspace_pre_tokenizer_alone_in_a_sequence_is_read_as_itself(converted, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    data = json.loads(converted("hf-metaspace-first").read_text(encoding="utf-8"))
    data["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [data["pre_tokenizer"]]}
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps(data), encoding="utf-8")
    hf = tokenizers.Tokenizer.from_file(str(wrapped))
    hf.encode_special_tokens = True
    text = " Era uma vez ⿰\n  <s>fim"
    assert load_tokenizer(wrapped).encode(text) == hf.encode(text, add_special_tokens=False).ids
    data["pre_tokenizer"]["pretokenizers"].append({"type": "Digits", "individual_digits": True})
    wrapped.write_text(json.dumps(data), encoding="utf-8")
    # Metaspace before another cut: HF's stages one by one read it, split by split.
    hf = tokenizers.Tokenizer.from_file(str(wrapped))
    hf.encode_special_tokens = True
    ours = load_tokenizer(wrapped)
    for cut in (text, "Era 1984 uma vez ⿰", "12 34"):
        found = hf.encode(cut, add_special_tokens=False)
        assert [(span.id, span.start, span.end) for span in ours.encode_spans(cut)] == [
            (token_id, *offsets) for token_id, offsets in zip(found.ids, found.offsets, strict=True)
        ], cut
        assert ours.decode(found.ids) == hf.decode(found.ids)


@pytest.mark.parametrize("name", METASPACE_MODELS)
def test_a_metaspace_tokenizer_json_is_recognized_from_the_content(converted, tmp_path, name):
    disguised = tmp_path / "tokenizer.bin"
    shutil.copyfile(converted(name), disguised)
    assert model_kind(disguised.read_bytes()) == "hf"
    loaded = load_tokenizer(disguised)
    assert isinstance(loaded, HFMetaspaceBPE) and isinstance(loaded, AnyTokenizer)
    assert loaded.encode("Era uma vez ⿰") == load_tokenizer(model_file("mistral-v1")).encode("Era uma vez ⿰")


def test_a_char_sentencepiece_model_is_refused_by_its_type(tmp_path):
    sentencepiece = pytest.importorskip("sentencepiece")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text((CORPORA / "en" / "heldout.txt").read_text(encoding="utf-8")[:20000], encoding="utf-8")
    sentencepiece.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=str(tmp_path / "char"), model_type="char", vocab_size=200, minloglevel=2
    )
    with pytest.raises(ValueError, match=r"char\.model: not a BPE model \(SentencePiece char\)"):
        load_tokenizer(tmp_path / "char.model")


def test_a_truncated_sentencepiece_model_is_no_tokenizer(tmp_path):
    broken = tmp_path / "broken.model"
    broken.write_bytes(model_file("mistral-v1").read_bytes()[:1001])
    with pytest.raises(ValueError, match=r"broken\.model: not a tokenizer file"):
        load_tokenizer(broken)
    with pytest.raises(ValueError, match=r"truncated varint|runs past the end"):
        list(fields(b"\x0a\xff"))


def _cache(root, repo, revision="abc123", file_name="tokenizer.model", source="mistral-v1"):
    folder = root / ("models--" + repo.replace("/", "--"))
    (folder / "refs").mkdir(parents=True)
    (folder / "refs" / "main").write_text(revision, encoding="utf-8")
    snapshot = folder / "snapshots" / revision
    snapshot.mkdir(parents=True)
    shutil.copyfile(model_file(source), snapshot / file_name)
    return snapshot


def test_hf_ids_resolve_in_the_local_cache_only(tmp_path, monkeypatch, model):
    _cache(tmp_path / "hub", "mistralai/Mistral-7B-v0.1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    loaded = load_tokenizer("hf:mistralai/Mistral-7B-v0.1")
    assert loaded.encode("Era uma vez") == model("mistral-v1").encode("Era uma vez")
    assert load_tokenizer("hf:mistralai/Mistral-7B-v0.1@abc123").encode("x") == model("mistral-v1").encode("x")
    with pytest.raises(
        FileNotFoundError, match=r"meta-llama/Llama-3\.2-1B is not in the local Hugging Face cache.*never"
    ):
        load_tokenizer("hf:meta-llama/Llama-3.2-1B")
    try:
        load_tokenizer("hf:meta-llama/Llama-3.2-1B")
    except FileNotFoundError as error:
        assert "não está no cache local da Hugging Face" in describe(error, "pt")
    with pytest.raises(
        FileNotFoundError, match=r"revision 'v2' of mistralai/Mistral-7B-v0\.1 is not in the local cache"
    ):
        load_tokenizer("hf:mistralai/Mistral-7B-v0.1@v2")


def test_hf_home_is_where_the_cache_is_without_hf_hub_cache(tmp_path, monkeypatch, model):
    _cache(tmp_path / "home" / "hub", "org/model")
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    assert load_tokenizer("hf:org/model").encode("menina") == model("mistral-v1").encode("menina")


def test_byte_level_pieces_read_as_text_and_partial_characters_as_bytes():
    assert readable("Ġthe") == "▁the"
    assert readable("âĢ") == "<E2><80>"
    assert readable("Ã©") == "é"
    assert readable("ĠâĢĶ") == "▁—"


def test_a_long_chunk_merges_in_n_log_n_and_exactly(model, hf_tokenizer):
    text = "a" * 30000 + " " + "ab" * 10000
    hf = hf_tokenizer("llama3")
    assert model("llama3").encode(text) == hf.encode(text, add_special_tokens=False).ids


def test_explain_json_gives_hf_tokens_for_llama3(hf_tokenizer):
    path = str(model_file("llama3"))
    result = glassllm("explain", "--json", "-t", path, "tokenization")
    assert result.returncode == 0, result.stderr
    (chunk,) = json.loads(result.stdout)
    expected = hf_tokenizer("llama3").encode("tokenization", add_special_tokens=False)
    assert chunk["pieces"] == expected.tokens and chunk["ids"] == expected.ids
    assert chunk["steps"][-1]["result"] in chunk["pieces"]
    assert all(set(step) == {"rank", "pair", "result"} for step in chunk["steps"])


def test_explain_json_gives_scores_and_their_ranks_for_sentencepiece_and_ranks_for_the_others(model, converted):
    sentencepiece = model("mistral-v1")
    result = glassllm("explain", "--json", "-t", str(model_file("mistral-v1")), "tokenization")
    assert result.returncode == 0, result.stderr
    (chunk,) = json.loads(result.stdout)
    assert chunk["ids"] == sentencepiece.encode("tokenization")
    steps = chunk["steps"]
    assert all(set(step) == {"rank", "pair", "result", "score"} for step in steps)
    assert [step["score"] for step in steps] == [sentencepiece.scores[step["result"]] for step in steps]
    assert [step["rank"] for step in steps] == sorted(step["rank"] for step in steps)
    assert all(isinstance(step["rank"], int) and isinstance(step["score"], float) for step in steps)
    # The rank is no piece ID: the place in the model's order of preference.
    assert any(step["rank"] != sentencepiece.ids[step["result"]] for step in steps)
    for path in (model_file("tekken"), converted("hf-metaspace-first")):
        (chunk,) = json.loads(glassllm("explain", "--json", "-t", str(path), "tokenization").stdout)
        assert chunk["steps"] and all(set(step) == {"rank", "pair", "result"} for step in chunk["steps"])
    text = glassllm("explain", "-t", str(model_file("mistral-v1")), "tokenization").stdout
    first = steps[0]
    assert f"rank {first['rank']:>4} ▁ + t → ▁t  (score {first['score']:g})" in text


def test_explain_json_has_counts_for_glassllms_own():
    result = glassllm("explain", "--json", "-t", "pt", "menina")
    (chunk,) = json.loads(result.stdout)
    assert chunk["chunk"] == "menina"
    assert chunk["steps"] and all(isinstance(step["count"], int) for step in chunk["steps"])
    assert chunk["ids"] == packaged("pt").encode("menina")


def test_the_command_line_takes_every_format(model):
    path = str(model_file("tekken"))
    result = glassllm("encode", "--json", "-t", path, "Era uma vez <s>")
    assert json.loads(result.stdout) == model("tekken").encode("Era uma vez <s>")
    matched = glassllm("encode", "--json", "--match-specials", "-t", path, "Era uma vez <s>")
    assert json.loads(matched.stdout)[-1] == 1
    sentencepiece = str(model_file("mistral-v7"))
    compared = glassllm("compare", "--json", "-t", sentencepiece, "--with", "pt", "Era uma vez, na chuva")
    totals = {row["tokenizer"]: row["tokens"] for row in json.loads(compared.stdout)["totals"]}
    assert totals == {sentencepiece: len(model("mistral-v7").encode("Era uma vez, na chuva")), "pt": 9}
    shown = glassllm("inspect", "-t", sentencepiece, "a ⿰")
    assert "<E2>" in shown.stdout and "(bytes of '⿰')" in shown.stdout
    assert "the model adds <s> around a text" in shown.stdout
    refused = glassllm("export", sentencepiece, "-o", "out.json")
    assert refused.returncode == 1 and "the HTML pages and export take glassllm's own only" in refused.stderr


def test_compare_lines_up_tokenizers_that_chunk_differently(model):
    from glassllm import compare

    text = "Era uma vez, na chuva de 2024!  Olá 👍🏽\r\n\tfim"
    tokenizers = {"pt": packaged("pt"), "llama3": model("llama3"), "v7": model("mistral-v7"), "tekken": model("tekken")}
    result = compare(text, tokenizers)
    assert result.chunks[0].start == 0 and result.chunks[-1].end == len(text)
    for before, after in zip(result.chunks, result.chunks[1:], strict=False):
        assert before.end == after.start
    for column, (name, tok) in enumerate(tokenizers.items()):
        assert [i for chunk in result.chunks for i in chunk.ids[column]] == tok.encode(text), name
        assert result.totals[column].tokens == len(tok.encode(text))
        assert result.totals[column].chunks == len(tok.chunk_spans(text))
