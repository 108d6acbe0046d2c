"""Requests and edits pipelined, as editors send them: a request followed at once by a
``didChange``, without waiting for the answer. The answer must describe the text the
client had when it asked (or be ``ContentModified``), for every kind of request.

Each case asks its request once on the document at rest (the reference), then again
with an edit written right behind it, and compares the two answers.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import tempfile
from collections.abc import Callable
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import client_capabilities

from glassllm import packaged
from tests.server.oracle import covered, position_of
from tests.server.session import (
    LOOP,
    GlassClient,
    change_document,
    open_document,
    session_fixture,
)

pytestmark = LOOP
TOK = packaged("pt")

# The server writes pages to $XDG_CACHE_HOME/glassllm: a folder of this module's own.
CACHE = tempfile.mkdtemp(prefix="glassllm-test-cache-")
CONTENT_MODIFIED = -32801

# 🧪 is unknown to the Portuguese tokenizer: the diagnostics have something to place.
TEXT = "Era uma vez 🧪 e mais\nsegunda linha, cafe\u0301\n"
EDIT = "Olá, "


client = session_fixture(cache=CACHE)


def plain(value: Any) -> Any:
    """An answer as plain data, whatever the client made of it, without what may
    differ between two equal answers (result ids, the page file written)."""
    if hasattr(value, "__attrs_attrs__"):
        value = {field.name: getattr(value, field.name) for field in value.__attrs_attrs__}
    elif hasattr(value, "_asdict"):
        value = value._asdict()
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items() if key not in ("result_id", "resultId", "page")}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def document(uri: str) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}}


def whole(encoding: str) -> dict[str, Any]:
    end = position_of(TEXT, len(TEXT), encoding)
    return {"start": {"line": 0, "character": 0}, "end": {"line": end.line, "character": end.character}}


def at(line: int, character: int) -> dict[str, int]:
    return {"line": line, "character": character}


_ids = itertools.count()


def send(client: GlassClient, method: str, params: Any) -> asyncio.Future[Any]:
    """Write a request now (the client's own ``*_async`` methods write when awaited)
    and return its answer to await."""
    msg_id = f"pipelined-{next(_ids)}"
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()
    client.protocol._request_futures[msg_id] = future
    client.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    return asyncio.wrap_future(future)


Request = Callable[[str, str], tuple[str, Any]]

# Each kind of request: (method, params) for a document URI and the position encoding.
REQUESTS: dict[str, Request] = {
    "hover": lambda uri, _: ("textDocument/hover", {**document(uri), "position": at(0, 4)}),
    "inlay hints": lambda uri, enc: ("textDocument/inlayHint", {**document(uri), "range": whole(enc)}),
    "semantic tokens full": lambda uri, _: ("textDocument/semanticTokens/full", document(uri)),
    "semantic tokens range": lambda uri, enc: (
        "textDocument/semanticTokens/range",
        {**document(uri), "range": whole(enc)},
    ),
    "document highlight": lambda uri, _: ("textDocument/documentHighlight", {**document(uri), "position": at(0, 5)}),
    "code lens": lambda uri, _: ("textDocument/codeLens", document(uri)),
    "code action": lambda uri, enc: (
        "textDocument/codeAction",
        {**document(uri), "range": whole(enc), "context": {"diagnostics": []}},
    ),
    "stats": lambda uri, _: ("glassllm/stats", document(uri)),
    "stats of a range": lambda uri, _: (
        "glassllm/stats",
        {**document(uri), "range": {"start": at(0, 4), "end": at(1, 2)}},
    ),
    "explainMerges": lambda uri, enc: (
        "workspace/executeCommand",
        {"command": "glassllm.explainMerges", "arguments": [uri, whole(enc)]},
    ),
    "showStats": lambda uri, _: ("workspace/executeCommand", {"command": "glassllm.showStats", "arguments": [uri]}),
}


async def pipelined(client: GlassClient, uri: str, method: str, params: Any) -> Any:
    """Send the request and, right behind it, an edit at the start of the text; the
    answer, or ``CONTENT_MODIFIED`` when the server refused the stale request."""
    answer = send(client, method, params)
    change_document(
        client,
        uri,
        2,
        (types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)), EDIT),
    )
    try:
        return await answer
    except JsonRpcException as error:
        assert error.code == CONTENT_MODIFIED, error
        return CONTENT_MODIFIED


@pytest.mark.parametrize("kind", list(REQUESTS))
async def test_an_answer_describes_the_text_the_client_had_when_it_asked(client, kind):
    uri = open_document(client, TEXT)
    method, params = REQUESTS[kind](uri, client.encoding)
    reference = plain(await send(client, method, params))
    assert reference not in (None, [], {})
    answer = await pipelined(client, uri, method, params)
    if answer != CONTENT_MODIFIED:
        assert plain(answer) == reference
    # The edit was applied after all: the same request now sees the new text.
    assert plain(await send(client, method, params)) != reference or kind == "code action"


async def test_the_issue_reproduction_hover_and_stats(client):
    uri = open_document(client, "Era uma vez")
    hover = send(client, "textDocument/hover", {**document(uri), "position": at(0, 4)})
    counts = send(client, "glassllm/stats", document(uri))
    change_document(
        client,
        uri,
        2,
        (types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)), EDIT),
    )
    hover, counts = await hover, await counts
    assert "`▁uma`" in hover.contents.value and "ID 217" in hover.contents.value and "index 2" in hover.contents.value
    assert (hover.range.start.line, hover.range.start.character, hover.range.end.character) == (0, 3, 7)
    assert (counts.tokens, counts.characters) == (4, 11)


async def test_inlay_hint_resolve_and_delta_and_pulled_diagnostics(client):
    uri = open_document(client, TEXT)
    hints = await send(client, "textDocument/inlayHint", {**document(uri), "range": whole(client.encoding)})
    hint = plain(hints[1])
    reference = plain(await send(client, "inlayHint/resolve", hint))
    assert reference["tooltip"] is not None
    assert plain(await pipelined(client, uri, "inlayHint/resolve", hint)) in (reference, CONTENT_MODIFIED)

    uri = open_document(client, TEXT)
    first = await send(client, "textDocument/semanticTokens/full", document(uri))
    delta = await pipelined(
        client, uri, "textDocument/semanticTokens/full/delta", {**document(uri), "previousResultId": first.resultId}
    )
    assert delta == CONTENT_MODIFIED or plain(delta) in ({"edits": []}, {"data": plain(first.data)})

    uri = open_document(client, TEXT)
    reference = plain(await send(client, "textDocument/diagnostic", document(uri)))
    assert reference["items"]
    assert plain(await pipelined(client, uri, "textDocument/diagnostic", document(uri))) in (
        reference,
        CONTENT_MODIFIED,
    )


async def test_pushed_diagnostics_carry_the_version_they_describe(client):
    capabilities = client_capabilities(client.preset).text_document
    assert capabilities is not None
    if capabilities.diagnostic is not None:
        return  # this client pulls diagnostics: nothing is pushed
    uri = open_document(client, TEXT)
    edited = EDIT + TEXT
    change_document(
        client,
        uri,
        2,
        (types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)), EDIT),
    )
    texts = {1: TEXT, 2: edited}
    while True:
        params = await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 10)
        if params.uri != uri:
            continue
        assert params.version in texts and params.diagnostics
        for diagnostic in params.diagnostics:
            assert covered(texts[params.version], diagnostic.range, client.encoding) == "🧪"
        if params.version == 2:
            break


async def test_a_request_followed_by_a_close_is_answered_for_the_text_it_asked_about(client):
    # Large enough that the whole-document count is not done when the close arrives.
    text = "Era uma vez cafe\u0301 e mais\n" * 20_000
    uri = open_document(client, text)
    counts = send(client, "glassllm/stats", document(uri))
    lens = send(client, "textDocument/codeLens", document(uri))
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    counts = await counts
    assert (counts.tokens, counts.characters) == (len(TOK.encode(text)), len(text))
    assert (await lens)[0]["command"]["arguments"] == [uri]
    with pytest.raises(JsonRpcException):
        await send(client, "glassllm/stats", document(uri))
