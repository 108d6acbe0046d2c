"""Settings end to end: tokenizer choice (by name or by path), broken tokenizer files and
invalid settings reported once, the inlay-hint switches, initialization options and the
pulled configuration."""

from __future__ import annotations

import asyncio
import json
import shutil
import uuid
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types

from glassllm import packaged, packaged_path
from tests.server.session import (
    LOOP,
    PRESETS,
    GlassClient,
    hover,
    markdown,
    open_document,
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
    [
        ("{not json", "Expecting property name"),
        (json.dumps({"version": 1}), "alphabet"),
        (None, "No such file"),
    ],
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
