"""The protocol layer end to end: malformed requests and notifications get clear answers and
the server goes on; a long tokenizing never blocks other requests and can be cancelled."""

from __future__ import annotations

import asyncio
import random

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from glassllm import packaged
from tests.server.oracle import covered
from tests.server.session import (
    LOOP,
    change_document,
    hover,
    hover_range,
    markdown,
    open_document,
    send_raw,
    send_raw_notification,
    stats,
)

pytestmark = LOOP

PT = packaged("pt")


async def test_malformed_params_answer_invalid_params_and_the_server_goes_on(client):
    uri = open_document(client, "Era uma vez")
    bad = [
        {"textDocument": {"uri": uri}, "position": "start"},
        {"textDocument": {"uri": uri}, "position": {"line": -1, "character": 0}},
        {"textDocument": 7},
    ]
    for params in bad:
        with pytest.raises(JsonRpcException) as raised:
            await send_raw(client, types.TEXT_DOCUMENT_HOVER, params)
        assert raised.value.code == -32602
        assert "textDocument/hover" in raised.value.message
    assert await hover(client, uri, types.Position(line=0, character=0)) is not None
    assert client.messages == []


async def test_requests_without_params_are_answered(client):
    for method in (types.TEXT_DOCUMENT_HOVER, "glassllm/stats", types.TEXT_DOCUMENT_INLAY_HINT):
        with pytest.raises(JsonRpcException) as raised:
            await send_raw(client, method)  # no "params" member at all
        assert raised.value.code == -32602, method
        with pytest.raises(JsonRpcException) as raised:
            await send_raw(client, method, None)
        assert raised.value.code == -32602, method


async def test_malformed_notifications_do_not_pop_up_or_break_anything(client):
    send_raw_notification(client, types.TEXT_DOCUMENT_DID_OPEN, {"textDocument": {"uri": 3}})
    send_raw_notification(
        client, types.TEXT_DOCUMENT_DID_CHANGE, {"textDocument": {"uri": "file:///x"}, "contentChanges": [{}]}
    )
    # Changes to a document that was never opened are ignored.
    change_document(client, "file:///never-opened", 2, "x")
    uri = open_document(client, "ok")
    assert (await stats(client, uri))["tokens"] == len(PT.encode("ok"))
    assert client.messages == []


async def test_long_tokenizing_never_blocks_and_can_be_cancelled(client):
    rng = random.Random(3)
    letters = "abcdefghijklmnopqrstuvwxyzáéíóúãõç"
    words = ["".join(rng.choice(letters) for _ in range(9)) for _ in range(60_000)]
    text = "\n".join(" ".join(words[start : start + 10]) for start in range(0, len(words), 10))
    uri = open_document(client, text, "large")
    # The code lens needs the whole document tokenized: its wait is cancellable.
    lens = asyncio.ensure_future(
        send_raw(client, types.TEXT_DOCUMENT_CODE_LENS, {"textDocument": {"uri": uri}}, "lens")
    )
    await asyncio.sleep(0)  # the request is on its way
    send_raw_notification(client, types.CANCEL_REQUEST, {"id": "lens"})
    with pytest.raises(JsonRpcException) as raised:
        await lens
    assert raised.value.code == -32800
    # Meanwhile a hover on the last line is answered, before the lines above it are counted.
    last = len(words) // 10 - 1
    answer = await hover(client, uri, types.Position(line=last, character=0))
    assert "index in the document: still counting" in markdown(answer)
    last_line = text[text.rindex("\n") + 1 :]
    first = PT.encode_spans(last_line)[0]
    assert covered(text, hover_range(answer), client.encoding) == last_line[first.start : first.end]
    # And in the end the counts are exact.
    assert (await stats(client, uri))["tokens"] == len(PT.encode(text))
    answer = await hover(client, uri, types.Position(line=last, character=0))
    assert f"index {len(PT.encode(text[: text.rindex(chr(10)) + 1])):,} in the document" in markdown(answer)
