"""Real models' tokenizers in the server, end to end: a model file as ``glassllm.tokenizer``
(Llama 3's tokenizer.json, Mistral's SentencePiece .model), hover with readable pieces and
ranked merges, the hover on a character split over several tokens (each one named), stats
with what the model adds around the text, the special-token setting, a model beside
``pt`` in ``glassllm.compareWith``, and the merge explanation."""

# The converted fixture is imported from tests/library/formats/fixtures.py (see there why), so a
# test's parameter of that name is the fixture, not a redefinition.
# ruff: noqa: F811

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsprotocol import types

from glassllm import load_tokenizer, packaged
from glassllm.formats.model_tokenizer import ModelTokenizer
from glassllm_server.render.markdown import code
from tests.library.formats.fixtures import CONVERTED, converted, model_file  # noqa: F401 (the converted fixture)
from tests.server.oracle import covered, every_offset, position_of
from tests.server.session import (
    LOOP,
    GlassClient,
    change_document,
    configure_and_wait,
    hover,
    hover_range,
    markdown,
    open_document,
    stats,
)

pytestmark = LOOP

PT = packaged("pt")
TEXT = "Era uma vez.\n\nOutra   \n  coisa, 🙂 café <|end_of_text|>\r\n\r\nfim"


def model(name: str, match_specials: bool = False) -> ModelTokenizer:
    found = load_tokenizer(model_file(name), match_specials=match_specials)
    assert isinstance(found, ModelTokenizer)
    return found


async def full_stats(client: GlassClient, uri: str) -> Any:
    return await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})


async def test_a_model_file_is_the_documents_tokenizer_with_readable_hovers(client):
    path = str(model_file("llama3"))
    tok = model("llama3")
    await configure_and_wait(client, {"tokenizer": path})
    uri = open_document(client, TEXT)
    answer = await stats(client, uri)
    assert answer == {
        "tokens": len(tok.encode(TEXT)),
        "chunks": len(tok.chunk_spans(TEXT)),
        "characters": len(TEXT),
        "unknown": 0,
        "tokenizer": path,
    }
    raw = await full_stats(client, uri)
    assert raw.model.kind == tok.kind and raw.model.matchSpecialTokens is False
    assert raw.model.around.before == list(tok.around[0]) and raw.model.around.tokens == len(tok.around[0])
    spans = tok.encode_spans(TEXT)
    for offset in every_offset(TEXT):
        shown = markdown(await hover(client, uri, position_of(TEXT, offset, client.encoding)))
        holder = next(number for number, span in enumerate(spans) if span.start <= offset < span.end)
        assert f"ID {spans[holder].id}" in shown and f"index {holder:,} in the document" in shown
        assert shown.startswith(f"**{code(tok.readable(spans[holder].piece))}**")
    # The token ".\n\n" crosses a blank line: its range covers all of it.
    dot = TEXT.index(".")
    answer = await hover(client, uri, position_of(TEXT, dot, client.encoding))
    assert answer is not None and answer.range is not None
    assert covered(TEXT, answer.range, client.encoding) == ".\n\n"
    shown = markdown(answer)
    assert "merges by rank: a real model ships no training counts" in shown
    assert "special-token text in the document is ordinary text (glassllm.matchSpecialTokens: false)" in shown
    word = markdown(await hover(client, uri, position_of(TEXT, TEXT.index("Outra"), client.encoding)))
    assert "Merges: `Out ← O + ut [rank" in word
    await configure_and_wait(client, {"tokenizer": "pt"})


async def test_the_special_token_setting_reads_special_text_as_the_special_token(client):
    path = str(model_file("llama3"))
    await configure_and_wait(client, {"tokenizer": path, "matchSpecialTokens": True})
    uri = open_document(client, TEXT)
    matched = model("llama3", match_specials=True)
    assert (await stats(client, uri))["tokens"] == len(matched.encode(TEXT))
    assert len(matched.encode(TEXT)) < len(model("llama3").encode(TEXT))
    offset = TEXT.index("<|end_of_text|>") + 3
    shown = markdown(await hover(client, uri, position_of(TEXT, offset, client.encoding)))
    assert f"ID {matched.specials['<|end_of_text|>']}" in shown
    assert "read as the special token (glassllm.matchSpecialTokens: true)" in shown
    await configure_and_wait(client, {"tokenizer": "pt", "matchSpecialTokens": False})


async def test_a_sentencepiece_model_file_is_taken_and_edits_stay_exact(client):
    path = str(model_file("mistral-v1"))
    tok = model("mistral-v1")
    await configure_and_wait(client, {"tokenizer": path})
    uri = open_document(client, "um\ndois\n")
    assert (await stats(client, uri))["tokens"] == len(tok.encode("um\ndois\n"))
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
                    ),
                    text="Era ",
                )
            ],
        )
    )
    assert (await stats(client, uri))["tokens"] == len(tok.encode("Era um\ndois\n"))
    shown = markdown(await hover(client, uri, types.Position(line=1, character=1)))
    assert "SentencePiece BPE; merges by score" in shown and "`<s> (1)`" in shown
    await configure_and_wait(client, {"tokenizer": "pt"})


async def test_a_model_beside_pt_counts_and_splits_as_the_library(client):
    path = str(model_file("llama3"))
    tok = model("llama3")
    await configure_and_wait(client, {"tokenizer": "pt", "compareWith": [path]})
    uri = open_document(client, TEXT)
    raw = await full_stats(client, uri)
    (compared,) = raw.compare
    assert (compared.tokenizer, compared.tokens, compared.chunks) == (
        path,
        len(tok.encode(TEXT)),
        len(tok.chunk_spans(TEXT)),
    )
    shown = markdown(await hover(client, uri, types.Position(line=3, character=3)))
    assert "tokenizer.json: `▁coisa` — 1 token" in shown
    page = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="glassllm.compareTokenizers",
            arguments=[uri, {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 12}}],
        )
    )
    totals = {row["tokenizer"]: row["tokens"] for row in page["totals"]}
    assert totals == {"pt": len(PT.encode("Era uma vez.")), path: len(tok.encode("Era uma vez.\n\n"))}
    await configure_and_wait(client, {"compareWith": None})
    await asyncio.sleep(0)


async def test_the_explanation_of_a_model_gives_its_tokens_and_ranks(client):
    path = str(model_file("llama3"))
    tok = model("llama3")
    await configure_and_wait(client, {"tokenizer": path})
    uri = open_document(client, TEXT)
    answer = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="glassllm.explainMerges",
            arguments=[uri, {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}}],
        )
    )
    assert [token_id for chunk in answer["chunks"] for token_id in chunk["ids"]] == tok.encode("Era uma vez.\n\n")
    last = answer["chunks"][-1]
    assert last["text"] == ".\n\n" and last["range"]["end"] == {"line": 2, "character": 0}
    assert "a real model ships no training counts" in answer["markdown"]
    assert all(step["count"] is None for chunk in answer["chunks"] for step in chunk["steps"])
    await configure_and_wait(client, {"tokenizer": "pt"})


# Characters that Llama 3 splits into byte-level pieces and Mistral v1 into byte-fallback
# tokens (a fraktur letter, an ideographic description character, a skin tone, Gothic),
# beside ones each holds whole, across a CRLF and a line without its end.
SPLIT = "a 𝔘 ⿰b 👍🏽 café\r\n\t猫 ⿰\n𐍈x"


async def _check_split_hovers(client: GlassClient, uri: str, text: str, tok: ModelTokenizer) -> int:
    """Hover on every character of ``text``: each names every token holding it, as the
    library's spans say, and its range covers them all; the number of split characters."""
    spans = tok.encode_spans(text)
    split = 0
    for offset in every_offset(text):
        holders = [span for span in spans if span.start <= offset < span.end]
        answer = await hover(client, uri, position_of(text, offset, client.encoding))
        shown = markdown(answer)
        assert shown.startswith(f"**{code(tok.readable(holders[0].piece))}**"), (offset, shown)
        if len(holders) == 1:
            assert "is split over" not in shown
            continue
        split += 1
        character = text[offset]
        listed = ", ".join(f"{code(tok.readable(span.piece))} (ID {span.id})" for span in holders)
        assert (
            f"The character {code(character)} (U+{ord(character):04X}) is split over {len(holders)} tokens, "
            f"each covering it: {listed}"
        ) in shown
        start, end = min(span.start for span in holders), max(span.end for span in holders)
        assert covered(text, hover_range(answer), client.encoding) == text[start:end]
    return split


# Llama 3's byte-level pieces, Mistral's byte fallback in its .model and in the
# tokenizer.json HF converts it to (the Prepend normalizer of Llama 2's own file).
@pytest.mark.parametrize("name", ["llama3", "mistral-v1", "hf-metaspace-legacy"])
async def test_the_hover_on_a_character_split_over_several_tokens_names_them_all(client, converted, name):
    path = str(converted(name) if name in CONVERTED else model_file(name))
    tok = load_tokenizer(path)
    assert isinstance(tok, ModelTokenizer)
    await configure_and_wait(client, {"tokenizer": path})
    uri = open_document(client, SPLIT)
    assert await _check_split_hovers(client, uri, SPLIT, tok) >= 4
    # While typing: a word before the split characters, and one inside the second line.
    edited = "Olá " + SPLIT.replace("\t猫", "\tum 猫")
    start, inside = types.Position(line=0, character=0), types.Position(line=1, character=1)
    change_document(client, uri, 2, (types.Range(start=start, end=start), "Olá "))
    change_document(client, uri, 3, (types.Range(start=inside, end=inside), "um "))
    assert await _check_split_hovers(client, uri, edited, tok) >= 4
    await configure_and_wait(client, {"tokenizer": "pt"})
