"""Hover end to end, under all three client presets: exactly the token under the cursor,
the derivation and the unknown marker, the end of the document, an unknown document."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from glassllm import packaged
from glassllm.tokenizer import UNK_ID
from glassllm_server.render.markdown import code
from tests.server.oracle import TEXTS, covered, every_offset, line_spans, position_of
from tests.server.session import LOOP, hover, hover_range, markdown, open_document, stats

pytestmark = LOOP

PT = packaged("pt")


@pytest.mark.parametrize("name", ["tricky", "combining", "separators", "emoji", "cjk_tabs", "lone_cr"])
async def test_hover_on_every_character_covers_exactly_its_token(client, name):
    text = TEXTS[name]
    uri = open_document(client, text, name)
    spans = line_spans(PT, text)
    for offset in every_offset(text):
        index, (token_id, piece, start, end) = next(
            (number, span) for number, span in enumerate(spans) if span[2] <= offset < span[3]
        )
        answer = await hover(client, uri, position_of(text, offset, client.encoding))
        assert answer is not None, offset
        value = markdown(answer)
        assert f"**{code(piece)}** · ID {token_id}" in value
        assert f"index {index:,} in the document" in value
        if text[start:end] == "\r" and text[end : end + 1] == "\n":
            assert answer.range is None  # LSP cannot point between \r and \n
        else:
            assert covered(text, hover_range(answer), client.encoding) == text[start:end], (offset, piece)


async def test_hover_at_the_end_of_the_document_and_past_it(client):
    uri = open_document(client, "Era uma vez")
    assert await hover(client, uri, types.Position(line=0, character=11)) is None
    assert await hover(client, uri, types.Position(line=9, character=0)) is None
    # A character past the line's end is clamped to the line's end: the line break.
    uri = open_document(client, "Era\numa")
    answer = await hover(client, uri, types.Position(line=0, character=99))
    assert covered("Era\numa", hover_range(answer), client.encoding) == "\n"
    empty = open_document(client, "")
    assert await hover(client, empty, types.Position(line=0, character=0)) is None


async def test_hover_shows_the_derivation_and_the_unknown_marker(client):
    uri = open_document(client, "Era uma vez 🧪")
    answer = await hover(client, uri, types.Position(line=0, character=9))
    assert "Merges: `▁vez ← " in markdown(answer)
    assert "Explain BPE merges" in markdown(answer)
    assert "Tokenizer: Portuguese (pt)" in markdown(answer)
    unknown = await hover(client, uri, position_of("Era uma vez 🧪", 12, client.encoding))
    assert f"ID {UNK_ID}" in markdown(unknown) and "<unk>" in markdown(unknown)


async def test_unknown_document_is_a_clear_error(client):
    with pytest.raises(JsonRpcException) as raised:
        await hover(client, "file:///nowhere.txt", types.Position(line=0, character=0))
    assert raised.value.code == -32803
    assert "file:///nowhere.txt" in raised.value.message
    with pytest.raises(JsonRpcException, match="nowhere"):
        await stats(client, "file:///nowhere.txt")
