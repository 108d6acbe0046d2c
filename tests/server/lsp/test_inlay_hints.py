"""Inlay hints end to end, under all three client presets: at the right characters, resolved,
only for the requested range, around the last hover in a large document, stale ones kept."""

from __future__ import annotations

from lsprotocol import types

from glassllm import packaged
from glassllm_server.features.inlay_hints import HINT_LINES
from tests.server.oracle import TRICKY, every_offset, line_spans, lsp_lines, position_of
from tests.server.session import LOOP, change_document, hover, identifier, open_document

pytestmark = LOOP

PT = packaged("pt")


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
