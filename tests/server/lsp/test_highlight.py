"""Document highlight end to end: every occurrence of the token's ID near the cursor,
with ranges exact in every encoding."""

from __future__ import annotations

import pytest
from lsprotocol import types

from glassllm import packaged
from tests.server.oracle import TRICKY, covered, lsp_lines, position_of
from tests.server.session import LOOP, GlassClient, open_document

pytestmark = LOOP
TOK = packaged("pt")


def occurrences(text: str, token_id: int) -> list[tuple[int, str]]:
    """(line, text) of every token with ``token_id``, line endings left out."""
    found = []
    for number, line in enumerate(lsp_lines(text)):
        content = len(line.rstrip("\r\n"))
        for span in TOK.encode_spans(line):
            if span.id == token_id and span.start < span.end <= content:
                found.append((number, line[span.start : span.end]))
    return found


def token_at(text: str, offset: int):
    return next(span for span in TOK.encode_spans(text) if span.start <= offset < span.end)


async def highlights(client: GlassClient, uri: str, position: types.Position) -> list[types.DocumentHighlight]:
    answer = await client.text_document_document_highlight_async(
        types.DocumentHighlightParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
    )
    assert answer is not None
    return list(answer)


@pytest.mark.parametrize("offset", [0, 5, TRICKY.index("🙂"), TRICKY.index("cafe\u0301") + 4, TRICKY.index("猫")])
async def test_every_occurrence_of_the_id_is_lit(client: GlassClient, offset: int):
    text = TRICKY + "\n" + TRICKY
    uri = open_document(client, text)
    found = await highlights(client, uri, position_of(text, offset, client.encoding))
    token = token_at(text, offset)
    assert [(h.range.start.line, covered(text, h.range, client.encoding)) for h in found] == occurrences(text, token.id)
    assert len(found) >= 2
    assert all(h.kind == types.DocumentHighlightKind.Text for h in found)


async def test_the_same_piece_composed_two_ways_is_lit_whole(client: GlassClient):
    text = "é\ne\u0301\ndé"
    uri = open_document(client, text)
    found = await highlights(client, uri, position_of(text, 0, client.encoding))
    assert [covered(text, h.range, client.encoding) for h in found] == ["é", "e\u0301", "é"]


async def test_at_the_end_of_a_line_the_token_before_the_cursor_is_meant(client: GlassClient):
    text = "ana\nbanana ana\r\n"
    uri = open_document(client, text)
    end_of_line = position_of(text, len("ana\nbanana ana"), client.encoding)
    found = await highlights(client, uri, end_of_line)
    last = TOK.encode_spans("banana ana")[-1]
    assert [covered(text, h.range, client.encoding) for h in found] == [p for _, p in occurrences(text, last.id)]


async def test_an_empty_line_lights_nothing(client: GlassClient):
    uri = open_document(client, "a\n\nb")
    assert list(await highlights(client, uri, types.Position(line=1, character=0))) == []


async def test_only_the_lines_near_the_cursor_are_searched(client: GlassClient):
    text = "ana\n" * 1000
    uri = open_document(client, text)
    found = await highlights(client, uri, types.Position(line=500, character=1))
    lines = [h.range.start.line for h in found]
    assert lines == list(range(300, 701))
