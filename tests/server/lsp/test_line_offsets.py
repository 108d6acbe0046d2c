"""A line's offsets never depend on other lines: the server reproductions of issue 8's
item 2 (combining marks right after a line break, which NFC leaves as they are)."""

from __future__ import annotations

from lsprotocol import types

from tests.server.oracle import bands, covered, expected_bands
from tests.server.session import LOOP, hover, hover_range, open_document, semantic_tokens_full, stats

pytestmark = LOOP


async def test_a_mark_after_a_line_break_makes_no_extra_band(client):
    text = "a\u0300\r\u0301"
    uri = open_document(client, text)
    decoded = bands(text, (await semantic_tokens_full(client, uri)).data, client.encoding)
    assert [(line, piece) for line, piece, _ in decoded] == expected_bands(text) == [(0, "a\u0300"), (1, "\u0301")]


async def test_a_hover_on_a_mark_after_a_line_break_covers_only_it(client):
    text = "e\u0301\n\u0301"
    uri = open_document(client, text)
    answer = await hover(client, uri, types.Position(line=1, character=0))
    assert covered(text, hover_range(answer), client.encoding) == "\u0301"
    first = await hover(client, uri, types.Position(line=0, character=0))
    assert covered(text, hover_range(first), client.encoding) == "e\u0301"


async def test_stats_of_a_mark_after_a_line_break(client):
    text = "a\u0308\n\u0301"
    uri = open_document(client, text)
    end = types.Position(line=1, character=len("\u0301".encode("utf-8")) if client.encoding == "utf-8" else 1)
    answer = await stats(client, uri, types.Range(start=types.Position(line=1, character=0), end=end))
    assert (answer["tokens"], answer["chunks"], answer["characters"]) == (1, 1, 1)
