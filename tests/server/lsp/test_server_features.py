"""Hover, inlay hints, stats and the code lens end to end, under all three client presets."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from glassllm import packaged
from glassllm.tokenizer import UNK_ID
from glassllm_server.features.inlay_hints import HINT_LINES
from glassllm_server.render.markdown import code
from tests.server.oracle import TEXTS, TRICKY, covered, every_offset, line_spans, lsp_lines, position_of, range_of
from tests.server.session import LOOP, change_document, hover, hover_range, markdown, open_document, stats

pytestmark = LOOP

PT = packaged("pt")


def identifier(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


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


async def test_inlay_hints_sit_at_the_right_characters_and_resolve(client):
    text = TRICKY
    uri = open_document(client, text)
    lines = lsp_lines(text)
    whole = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=len(lines), character=0))
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(text_document=identifier(uri), range=whole)
    )
    spans = line_spans(PT, text)
    starts = {start for _, _, start, end in spans if start != end}
    for hint in hints:
        offset = next(
            o for o in [*every_offset(text), len(text)] if position_of(text, o, client.encoding) == hint.position
        )
        if hint.label == "▁":
            assert text[offset - 1] == " "
        else:
            assert hint.label == "¦" and offset in starts
    assert sum(hint.label == "▁" for hint in hints) == text.count(" ")
    resolved = await client.inlay_hint_resolve_async(hints[0])
    assert resolved.tooltip.value == "`▁uma` · ID 217"


async def test_inlay_hints_only_for_the_requested_range(client):
    text = "Era uma vez\n" * 200
    uri = open_document(client, text)
    asked = types.Range(start=types.Position(line=100, character=2), end=types.Position(line=102, character=5))
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(text_document=identifier(uri), range=asked)
    )
    assert hints
    assert all((100, 2) <= (hint.position.line, hint.position.character) <= (102, 5) for hint in hints)


async def test_hints_for_a_whole_large_document_follow_the_last_hover(client):
    text = "Era uma vez\n" * 2000
    uri = open_document(client, text)
    whole = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=2000, character=0))
    params = types.InlayHintParams(text_document=identifier(uri), range=whole)
    hints = await client.text_document_inlay_hint_async(params)
    assert {hint.position.line for hint in hints} == set(range(HINT_LINES))
    assert len(hints) == 4 * HINT_LINES  # Era¦ ▁uma¦ ▁vez on each line, none twice
    await hover(client, uri, types.Position(line=1500, character=1))
    lines = {hint.position.line for hint in await client.text_document_inlay_hint_async(params)}
    assert lines == set(range(1500 - HINT_LINES // 2, 1500 + HINT_LINES // 2))


async def test_a_stale_hint_resolves_unchanged(client):
    uri = open_document(client, "Era uma vez")
    whole = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=11))
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(text_document=identifier(uri), range=whole)
    )
    change_document(client, uri, 2, "Outra coisa")
    resolved = await client.inlay_hint_resolve_async(hints[0])
    assert resolved.tooltip is None
    assert resolved.label == hints[0].label and resolved.position == hints[0].position


@pytest.mark.parametrize("name", sorted(TEXTS))
async def test_stats_for_the_document(client, name):
    text = TEXTS[name]
    uri = open_document(client, text, name)
    spans = PT.encode_spans(text)
    assert await stats(client, uri) == {
        "tokens": len(spans),
        "chunks": len({span.chunk for span in spans}),
        "characters": len(text),
        "unknown": sum(span.id == UNK_ID for span in spans),
        "tokenizer": "pt",
    }


async def test_stats_for_ranges_count_partial_tokens(client):
    text = TRICKY
    uri = open_document(client, text)
    spans = line_spans(PT, text)
    for start, end in [(0, 5), (2, 3), (12, 16), (16, 40), (30, len(text)), (0, len(text)), (5, 5)]:
        if start != end and (text[start - 1 : start + 1] == "\r\n" or text[end - 1 : end + 1] == "\r\n"):
            continue
        touched = [span for span in spans if start < end and span[2] < end and span[3] > start]
        answer = await stats(client, uri, range_of(text, start, end, client.encoding))
        assert answer["tokens"] == len(touched), (start, end)
        assert answer["characters"] == end - start
        assert answer["unknown"] == sum(span[0] == UNK_ID for span in touched)


async def test_stats_with_bad_params_answer_invalid_params(client):
    for params in ({}, {"textDocument": {}}, {"textDocument": {"uri": "x"}, "range": {"start": 1}}):
        with pytest.raises(JsonRpcException) as raised:
            await client.protocol.send_request_async("glassllm/stats", params)
        assert raised.value.code == -32602


async def test_code_lens_shows_the_count_on_the_first_line(client):
    text = "Era uma vez\nna terra\n"
    uri = open_document(client, text)
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(text_document=identifier(uri)))
    assert len(lenses) == 1
    count = len(PT.encode(text))
    assert lenses[0].range.start.line == 0
    assert lenses[0].command.title == f"{count} tokens · {len(text) / count:.1f} chars/token"
    shown = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=lenses[0].command.command, arguments=lenses[0].command.arguments)
    )
    assert shown["tokens"] == count
    assert client.messages[-1].message.startswith(f"{count} tokens, ")


async def test_code_lens_and_hover_in_portuguese(client_pt):
    text = "Era uma vez. " * 100
    uri = open_document(client_pt, text)
    lenses = await client_pt.text_document_code_lens_async(types.CodeLensParams(text_document=identifier(uri)))
    count = len(PT.encode(text))
    ratio = f"{len(text) / count:.1f}".replace(".", ",")
    assert lenses[0].command.title == f"{count:,}".replace(",", ".") + f" tokens · {ratio} caracteres/token"
    answer = await hover(client_pt, uri, types.Position(line=0, character=9))
    assert "Fusões: `▁vez ← " in markdown(answer)
    assert "Tokenizador: português (pt)" in markdown(answer)
    assert "Explicar fusões BPE" in markdown(answer)
