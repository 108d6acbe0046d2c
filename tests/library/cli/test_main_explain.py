"""``glassllm explain`` for each model kind, run as a user runs it: the merge steps of BPE
(``--json`` keeps its shape: no ``"search"``), and the search of a model that does not
merge — WordPiece's greedy lookups, WordLevel's lookup, Unigram's best cut and the next
best — from the tokenizer's own ``search``. The tokenizers are trained in a temporary
folder with HF ``tokenizers`` and ``sentencepiece``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from glassllm.formats.load import load_model
from tests.conftest import CORPORA
from tests.library.cli.test_main import glassllm

tokenizers = pytest.importorskip("tokenizers")
sentencepiece = pytest.importorskip("sentencepiece")
TEXT = "Era uma vez inacreditavelmente ☃ [UNK]"


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("explain-kinds")
    lines = (CORPORA / "pt" / "train.txt").read_text(encoding="utf-8")[:60_000].splitlines()
    files = {}
    for kind in ("WordPiece", "WordLevel"):
        tokenizer = tokenizers.Tokenizer(getattr(tokenizers.models, kind)(unk_token="[UNK]"))
        tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
        trainer = getattr(tokenizers.trainers, f"{kind}Trainer")(vocab_size=800, special_tokens=["[UNK]"])
        tokenizer.train_from_iterator(lines, trainer=trainer)
        files[kind] = folder / f"{kind}.json"
        tokenizer.save(str(files[kind]))
    (folder / "corpus.txt").write_text("\n".join(lines), encoding="utf-8")
    sentencepiece.SentencePieceTrainer.train(
        input=str(folder / "corpus.txt"), model_prefix=str(folder / "uni"), vocab_size=500, minloglevel=2
    )
    files["Unigram"] = folder / "uni.model"
    return files


def _explained(model: Path) -> list[dict[str, Any]]:
    result = glassllm("explain", "--json", "-t", str(model), TEXT)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_bpe_json_keeps_its_shape():
    result = glassllm("explain", "--json", "-t", "pt", "Era uma vez")
    assert result.returncode == 0, result.stderr
    for item in json.loads(result.stdout):
        assert set(item) == {"chunk", "steps", "pieces", "ids"}


def test_wordpiece_shows_every_prefix_tried_and_where_unk_came_from(models):
    found = _explained(models["WordPiece"])
    ours = load_model(models["WordPiece"])
    vocab = ours.ids  # type: ignore[attr-defined]
    unknown = []
    for item in found:
        search = item["search"]
        assert search["kind"] == "WordPiece"
        if search["unknown"]:
            unknown.append(item["chunk"])
            assert search["lookups"][-1]["found"] is None and item["pieces"] == ["[UNK]"]
            assert not any(candidate in vocab for candidate in search["lookups"][-1]["tried"])
            continue
        assert [lookup["found"] for lookup in search["lookups"]] == item["pieces"]
        for lookup in search["lookups"]:
            # Longest first, every candidate before the one found missing from the vocabulary.
            assert lookup["tried"][-1] == lookup["found"]
            assert not any(candidate in vocab for candidate in lookup["tried"][:-1])
    assert "☃" in unknown and "inacreditavelmente" not in unknown
    text = glassllm("explain", "-t", str(models["WordPiece"]), "inacreditavelmente ☃").stdout
    assert "the longest vocabulary entry at each position, greedily" in text
    assert "none found: the word is the unknown token" in text and "→ found ##" in text


def test_wordlevel_shows_the_lookup(models):
    for item in _explained(models["WordLevel"]):
        assert item["search"] == {"kind": "WordLevel", "lookup": item["chunk"], "found": item["pieces"] != ["[UNK]"]}
    text = glassllm("explain", "-t", str(models["WordLevel"]), "Era ☃").stdout
    assert "'Era' found" in text and "'☃' not in the vocabulary: the unknown token" in text


def test_unigram_shows_the_cut_taken_its_scores_and_the_next_best(models):
    ours = load_model(models["Unigram"])
    scores = ours.scores  # type: ignore[attr-defined]
    for item in _explained(models["Unigram"]):
        best, other = item["search"]["best"], item["search"]["alternative"]
        assert best["pieces"] == item["pieces"] or item["ids"].count(ours.unk_id)
        assert best["total"] == pytest.approx(sum(best["scores"]))
        for piece, score in zip(best["pieces"], best["scores"], strict=True):
            assert piece not in ours.ids or score == scores[ours.ids[piece]]  # type: ignore[attr-defined]
        if other is not None:
            assert "".join(other["pieces"]) == item["chunk"] and other["pieces"] != best["pieces"]
            assert other["total"] <= best["total"]
    text = glassllm("explain", "-t", str(models["Unigram"]), "Era uma vez").stdout
    assert "the cut whose pieces' scores sum highest" in text
    assert "  best " in text and "  next " in text and "total " in text


# Components read since the first kinds: a pre-tokenizer, ByteLevel's prefix space, and an
# added token matched on the normalized text before Metaspace changes its space.
_SCRIPTS = {"type": "Sequence", "pretokenizers": [{"type": "Whitespace"}, {"type": "UnicodeScripts"}]}
_PREFIXED = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
_METASPACE = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}


@pytest.mark.parametrize("pre_tokenizer", [_SCRIPTS, _PREFIXED, _METASPACE], ids=["scripts", "prefix", "normalized"])
def test_explain_reads_each_newer_component_as_hf_does(models, tmp_path, pre_tokenizer):
    data = json.loads(models["WordLevel"].read_text(encoding="utf-8"))
    data["pre_tokenizer"] = pre_tokenizer
    if pre_tokenizer is _METASPACE:
        token = {"id": len(data["model"]["vocab"]), "content": "uma vez", "special": False, "normalized": True}
        data["added_tokens"].append({**token, "single_word": False, "lstrip": False, "rstrip": False})
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    text = "Era uma vez Ελλάδα1 どこで"
    found = glassllm("explain", "--json", "-t", str(path), text)
    assert found.returncode == 0, found.stderr
    expected = tokenizers.Tokenizer.from_file(str(path)).encode(text, add_special_tokens=False).ids
    assert [token_id for item in json.loads(found.stdout) for token_id in item["ids"]] == expected
