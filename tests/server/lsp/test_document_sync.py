"""Document sync end to end: incremental edits in every client encoding, several changes in
one notification applied in order."""

from __future__ import annotations

from lsprotocol import types

from glassllm import packaged
from tests.server.oracle import TRICKY, covered, line_spans, position_of, range_of
from tests.server.session import (
    LOOP,
    change_document,
    hover,
    hover_range,
    markdown,
    open_document,
    stats,
)

pytestmark = LOOP

PT = packaged("pt")


async def test_incremental_edits_in_the_client_encoding(client):
    text = TRICKY
    uri = open_document(client, text)
    edits = [(13, 14, "🎉🎉"), (0, 0, "Ó "), (40, 44, ""), (20, 20, "\r\n"), (len(text) - 3, len(text) - 3, "\rX\n")]
    version = 1
    for start, end, inserted in edits:
        start, end = min(start, len(text)), min(end, len(text))
        if "\r\n" in text[start - 1 : start + 1] or "\r\n" in text[end - 1 : end + 1]:
            continue
        version += 1
        change_document(client, uri, version, (range_of(text, start, end, client.encoding), inserted))
        text = text[:start] + inserted + text[end:]
        spans = PT.encode_spans(text)
        answer = await stats(client, uri)
        assert (answer["tokens"], answer["characters"]) == (len(spans), len(text))
    for token_id, _piece, start, end in line_spans(PT, text):
        if start == end or "\r\n" in (text[start : start + 2], text[start - 1 : start + 1]):
            continue  # no LSP position lies inside "\r\n"
        answer = await hover(client, uri, position_of(text, start, client.encoding))
        assert covered(text, hover_range(answer), client.encoding) == text[start:end]
        assert f"ID {token_id}" in markdown(answer)


async def test_several_changes_in_one_notification_apply_in_order(client):
    uri = open_document(client, "abc")
    change_document(
        client,
        uri,
        2,
        (types.Range(start=types.Position(line=0, character=3), end=types.Position(line=0, character=3)), "\nlinha"),
        (types.Range(start=types.Position(line=1, character=0), end=types.Position(line=1, character=1)), "L"),
    )
    answer = await stats(client, uri)
    assert answer["characters"] == len("abc\nLinha")
    assert answer["tokens"] == len(PT.encode("abc\nLinha"))
