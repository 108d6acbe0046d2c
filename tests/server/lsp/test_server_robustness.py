"""Malformed requests, incremental edits in every encoding, settings and tokenizer choice."""

from __future__ import annotations

import asyncio
import json
import random
import shutil
import uuid
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from glassllm import packaged, packaged_path
from tests.server.oracle import TRICKY, covered, line_spans, position_of, range_of
from tests.server.session import (
    LOOP,
    PRESETS,
    GlassClient,
    change_document,
    hover,
    hover_range,
    markdown,
    open_document,
    send_raw,
    send_raw_notification,
    server_config,
    start_session,
    stats,
)

pytestmark = LOOP

PT, EN = packaged("pt"), packaged("en")
WORKSPACE = Path("/tmp/glassllm-tests")


async def eventually(check, timeout: float = 10.0):
    """Poll ``check`` (an async callable) until it returns a true value."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        result = await check()
        if result or asyncio.get_running_loop().time() > deadline:
            return result
        await asyncio.sleep(0.02)


# Malformed and missing params


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


# Incremental edits, in the client's encoding


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


# Settings and the tokenizer


def did_change_configuration(client: GlassClient, section: dict) -> None:
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"glassllm": section}))


async def test_switching_the_tokenizer_retokenizes_and_refreshes(client):
    text = "Once upon a time"
    uri = open_document(client, text)
    assert (await stats(client, uri))["tokens"] == len(PT.encode(text))
    did_change_configuration(client, {"tokenizer": "en"})
    assert await stats(client, uri) == {
        "tokens": len(EN.encode(text)),
        "chunks": 4,
        "characters": len(text),
        "unknown": 0,
        "tokenizer": "en",
    }
    answer = await hover(client, uri, types.Position(line=0, character=0))
    assert "Tokenizer: English (en)" in markdown(answer)
    expected = {
        "neovim@0.11": {types.WORKSPACE_INLAY_HINT_REFRESH, types.WORKSPACE_SEMANTIC_TOKENS_REFRESH},
        "visual-studio-code": {types.WORKSPACE_CODE_LENS_REFRESH, types.WORKSPACE_SEMANTIC_TOKENS_REFRESH},
        "emacs": set(),
    }[client.preset]

    async def refreshed():
        return set(client.refreshes) == expected

    assert await eventually(refreshed)
    did_change_configuration(client, {"tokenizer": "pt"})
    assert (await stats(client, uri))["tokenizer"] == "pt"


async def test_a_tokenizer_path_relative_to_the_workspace(client):
    WORKSPACE.mkdir(parents=True, exist_ok=True)
    name = f"custom-{uuid.uuid4().hex}.json"
    shutil.copy(packaged_path("en"), WORKSPACE / name)
    uri = open_document(client, "Once upon a time")
    did_change_configuration(client, {"tokenizer": name})
    answer = await stats(client, uri)
    assert answer["tokenizer"] == str(WORKSPACE / name)
    assert answer["tokens"] == len(EN.encode("Once upon a time"))
    did_change_configuration(client, {"tokenizer": "pt"})
    (WORKSPACE / name).unlink()


@pytest.mark.parametrize(
    ("contents", "problem"),
    [("{not json", "Expecting property name"), (json.dumps({"version": 1}), "alphabet"), (None, "No such file")],
)
async def test_a_broken_tokenizer_file_is_reported_once_and_the_old_one_kept(client, contents, problem):
    WORKSPACE.mkdir(parents=True, exist_ok=True)
    path = WORKSPACE / f"broken-{uuid.uuid4().hex}.json"
    if contents is not None:
        path.write_text(contents, encoding="utf-8")
    uri = open_document(client, "Era uma vez")
    before = len(client.messages)
    for _ in range(3):
        did_change_configuration(client, {"tokenizer": str(path)})
        answer = await stats(client, uri)
        assert answer["tokenizer"] == "pt"
        assert answer["tokens"] == len(PT.encode("Era uma vez"))
    shown = client.messages[before:]
    assert len(shown) == 1
    assert str(path) in shown[0].message and problem in shown[0].message
    assert "Portuguese (pt)" in shown[0].message
    assert shown[0].type == types.MessageType.Error
    did_change_configuration(client, {"tokenizer": "pt"})
    path.unlink(missing_ok=True)


async def test_an_invalid_setting_is_reported_once(client):
    before = len(client.messages)
    for _ in range(2):
        did_change_configuration(client, {"inlayHints": {"chunkBoundaries": "sim"}})
    uri = open_document(client, "Era uma vez")
    await stats(client, uri)
    shown = client.messages[before:]
    assert len(shown) == 1
    assert "glassllm.inlayHints.chunkBoundaries" in shown[0].message and "'sim'" in shown[0].message
    did_change_configuration(client, {})


async def test_inlay_hint_switches_take_effect(client):
    uri = open_document(client, "Era uma")
    whole = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=7))
    params = types.InlayHintParams(text_document=types.TextDocumentIdentifier(uri=uri), range=whole)
    did_change_configuration(
        client, {"inlayHints": {"chunkBoundaries": False, "spaceMarkers": False, "tokenBoundaries": True}}
    )
    hints = await client.text_document_inlay_hint_async(params)
    assert [(hint.position.character, hint.label) for hint in hints] == [(1, "·")]
    did_change_configuration(client, {})
    assert [hint.label for hint in await client.text_document_inlay_hint_async(params)] == ["¦", "▁"]


# Settings at startup: initializationOptions and workspace/configuration


@pytest_lsp.fixture(config=server_config(), params=PRESETS, scope="module")
async def configured(request: pytest.FixtureRequest, lsp_client: GlassClient):
    await start_session(
        lsp_client,
        request.param,
        locale="en",
        options={"glassllm": {"tokenizer": "en", "locale": "pt"}},
        configuration={"glassllm": {"inlayHints": {"tokenBoundaries": True}}},
    )
    yield
    await lsp_client.shutdown_session()


async def test_initialization_options_and_pulled_configuration(configured):
    uri = open_document(configured, "Era uma")

    async def english():
        return (await stats(configured, uri))["tokenizer"] == "en"

    assert await english()
    # The locale setting overrides the client's English.
    answer = await hover(configured, uri, types.Position(line=0, character=0))
    assert "Tokenizador: inglês (en)" in markdown(answer)
    whole = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=7))

    async def token_boundaries():
        hints = await configured.text_document_inlay_hint_async(
            types.InlayHintParams(text_document=types.TextDocumentIdentifier(uri=uri), range=whole)
        )
        return "·" in [hint.label for hint in hints]

    # Emacs' preset cannot answer workspace/configuration pulls... all three advertise it.
    assert await eventually(token_boundaries)
