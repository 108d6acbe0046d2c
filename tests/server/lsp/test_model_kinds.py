"""Models that do not merge in the server, end to end: a WordPiece, a WordLevel and a
Unigram tokenizer.json (trained here with HF ``tokenizers``' own trainers) as
``glassllm.tokenizer``. The hover and "Explain BPE merges" show each chunk's search as
the library gives it (``search``: the command's ``"search"`` is that data, the page and
the hover its wording, in English and Portuguese), the method in place of "merges by
rank", and the cut agrees with HF's: Unigram's chosen pieces are HF's, its best other
cut's total the library's own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from glassllm import load_tokenizer
from glassllm.formats.model_tokenizer import ModelTokenizer
from glassllm.shown.search import method_text, search_lines
from glassllm_server.features.hover import HOVER_CANDIDATES
from glassllm_server.render.markdown import code
from tests.library.formats.fixtures import trained_word_model
from tests.server.oracle import position_of
from tests.server.session import LOOP, GlassClient, configure_and_wait, hover, markdown, open_document

pytestmark = LOOP
tokenizers = pytest.importorskip("tokenizers")

TEXT = "Era uma vez inacreditavelmente ☃\nOutra coisa"
KINDS = ("WordPiece", "WordLevel", "Unigram")


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("model-kinds")
    return {kind: trained_word_model(kind, folder / f"{kind}.json") for kind in KINDS}


def _model(path: Path) -> ModelTokenizer:
    found = load_tokenizer(path)
    assert isinstance(found, ModelTokenizer)
    return found


def _worded(tok: ModelTokenizer, chunk: str, locale: Any = "en", most: int | None = None) -> list[str]:
    return search_lines(tok.search(chunk), locale, lambda piece: code(tok.readable(piece)), most=most)


async def _explain(client: GlassClient, uri: str) -> Any:
    last = TEXT.count("\n")
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="glassllm.explainMerges",
            arguments=[uri, {"start": {"line": 0, "character": 0}, "end": {"line": last, "character": 11}}],
        )
    )


@pytest.mark.parametrize("kind", KINDS)
async def test_hover_and_explain_show_each_chunks_search(client: GlassClient, models: dict[str, Path], kind: str):
    path, tok = str(models[kind]), _model(models[kind])
    await configure_and_wait(client, {"tokenizer": path})
    uri = open_document(client, TEXT)
    explained = tok.explain(TEXT)
    answer = await _explain(client, uri)
    assert [item["chunk"] for item in answer["chunks"]] == [item.chunk for item in explained]
    assert [item["ids"] for item in answer["chunks"]] == [item.ids for item in explained]
    assert [item["search"] for item in answer["chunks"]] == [tok.search(item.chunk) for item in explained]
    for item in explained:
        assert "\n".join(f"- {line}" for line in _worded(tok, item.chunk)) in answer["markdown"]
    assert "No merge applies" not in answer["markdown"]
    for item in explained:
        shown = markdown(await hover(client, uri, position_of(TEXT, item.start, client.encoding)))
        lines = "\n".join(f"- {line}" for line in _worded(tok, item.chunk, most=HOVER_CANDIDATES))
        assert f"How the model cut the chunk:\n{lines}\n\n" in shown
        assert f"{tok.kind}; no merges, each chunk is cut by {tok.method}" in shown
        assert "Merges:" not in shown and "merges by" not in shown
        assert shown.endswith("*Every chunk's search in full: the code action “Explain BPE merges” on a selection.*")
    await configure_and_wait(client, {"tokenizer": "pt"})


async def test_the_search_agrees_with_hf_and_names_the_unknown_token(client: GlassClient, models: dict[str, Path]):
    oracles = {kind: tokenizers.Tokenizer.from_file(str(models[kind])) for kind in KINDS}
    unigram = _model(models["Unigram"])
    # The scores the file holds, as HF wrote them: each cut's total is its pieces' sum.
    scores = dict(json.loads(models["Unigram"].read_text(encoding="utf-8"))["model"]["vocab"])
    alternatives = 0
    for item in unigram.explain(TEXT):
        search: Any = unigram.search(item.chunk)
        assert search is not None
        best, other = search["best"], search["alternative"]
        if item.chunk != "☃":  # an unknown character: the library scores it as HF does, below the vocabulary
            assert best["pieces"] == oracles["Unigram"].encode(item.chunk).tokens
            assert best["total"] == pytest.approx(sum(scores[piece] for piece in best["pieces"]), abs=1e-9)
        if other is not None:
            alternatives += 1
            assert "".join(other["pieces"]) == item.chunk and other["pieces"] != best["pieces"]
            assert other["total"] == pytest.approx(sum(scores[piece] for piece in other["pieces"]), abs=1e-9)
            assert other["total"] <= best["total"]
    assert alternatives >= 3
    path = str(models["WordPiece"])
    await configure_and_wait(client, {"tokenizer": path})
    uri = open_document(client, TEXT)
    snowman = markdown(await hover(client, uri, position_of(TEXT, TEXT.index("☃"), client.encoding)))
    assert "at offset 0: tried `☃` → none found, so the whole word is the unknown token" in snowman
    long_word = "inacreditavelmente"
    shown = markdown(await hover(client, uri, position_of(TEXT, TEXT.index(long_word), client.encoding)))
    found = oracles["WordPiece"].encode(long_word, add_special_tokens=False).tokens
    assert [f"→ found {code(piece)}" in shown for piece in found] == [True] * len(found)
    # The first position tries every prefix, longest first: the hover names 8 of them.
    longest = ", ".join(code(long_word[:length]) for length in range(len(long_word), len(long_word) - 8, -1))
    assert f"at offset 0: tried {longest} … " in shown
    await configure_and_wait(client, {"tokenizer": str(models["WordLevel"])})
    shown = markdown(await hover(client, uri, position_of(TEXT, 0, client.encoding)))
    verdict = "found" if "Era" in oracles["WordLevel"].get_vocab() else "not in the vocabulary, so the unknown token"
    assert f"lookup of `Era`: {verdict}" in shown
    await configure_and_wait(client, {"tokenizer": "pt"})


async def test_in_portuguese(client_pt: GlassClient, models: dict[str, Path]):
    client = client_pt
    tok = _model(models["Unigram"])
    await configure_and_wait(client, {"tokenizer": str(models["Unigram"])})
    uri = open_document(client, TEXT)
    shown = markdown(await hover(client, uri, position_of(TEXT, TEXT.index("Outra"), client.encoding)))
    lines = "\n".join(f"- {line}" for line in _worded(tok, "Outra", "pt"))
    assert f"Como o modelo cortou o trecho:\n{lines}" in shown and "corte escolhido:" in lines
    assert f"sem fusões, cada trecho é cortado por {method_text(tok.method, 'pt')}" in shown
    assert method_text(tok.method, "pt") != tok.method
    page = (await _explain(client, uri))["markdown"]
    assert "Este modelo não faz fusões; como ele cortou o trecho:" in page and lines in page
    await configure_and_wait(client, {"tokenizer": "pt"})


async def test_bpe_read_by_hf_stages_hovers_and_explains_its_merges(
    client: GlassClient, tmp_path_factory: pytest.TempPathFactory
):
    """HF's quicktour layout (BPE behind ``Whitespace``), read by HF's stages one by one:
    the server takes it, hovers each token's merges by rank and explains each chunk's
    merge steps as the library gives them, HF's pieces."""
    path = trained_word_model("BPE", tmp_path_factory.mktemp("bpe-kind") / "BPE.json")
    tok, oracle = _model(path), tokenizers.Tokenizer.from_file(str(path))
    await configure_and_wait(client, {"tokenizer": str(path)})
    uri = open_document(client, TEXT)
    explained = tok.explain(TEXT)
    answer = await _explain(client, uri)
    assert [item["pieces"] for item in answer["chunks"]] == [item.pieces for item in explained]
    assert [piece for item in explained for piece in item.pieces] == oracle.encode(TEXT).tokens
    assert all(item.get("search") is None for item in answer["chunks"])
    word = "inacreditavelmente"
    shown = markdown(await hover(client, uri, position_of(TEXT, TEXT.index(word), client.encoding)))
    assert f"{tok.kind}; merges by rank" in shown and "no merges" not in shown
    first = next(item for item in explained if item.chunk == word)
    assert len(first.pieces[0]) > 1 and "Merges:" in shown
    await configure_and_wait(client, {"tokenizer": "pt"})
