"""Tokenizer files that never end or never finish parsing, named by the settings
(``glassllm.tokenizer`` and ``compareWith``, from ``initializationOptions`` or pushed):
``initialize`` never fails, the load runs off the event loop while requests are answered
with the tokenizer in use, the user is told once (the file and the problem), and the
server carries on with the tokenizer it had (issue 15 §1, the server's side).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types

from glassllm import packaged
from tests.server.session import (
    LOOP,
    GlassClient,
    change_document,
    hover,
    markdown,
    open_document,
    server_config,
    start_session,
    stats,
)

pytestmark = LOOP

PT = packaged("pt")
TEXT = "Era uma vez"
START = types.Position(line=0, character=0)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("hostile")
    found = {name: base / name for name in ("deep.json", "fifo", "silent")}
    # Valid JSON grammar, far deeper than any reader's recursion.
    found["deep.json"].write_text("[" * 100_000 + "]" * 100_000, encoding="ascii")
    os.mkfifo(found["fifo"])
    os.mkfifo(found["silent"])
    return found


async def new_messages(
    client: GlassClient, before: int, count: int, timeout: float = 10.0
) -> list[types.ShowMessageParams]:
    """The window messages after the first ``before``, once there are ``count`` of them."""
    deadline = asyncio.get_running_loop().time() + timeout
    while len(client.messages) - before < count and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.05)
    return client.messages[before:]


async def still_portuguese(client: GlassClient, uri: str) -> None:
    """Requests are answered, with the tokenizer the server had."""
    assert "Tokenizer: Portuguese (pt)" in markdown(await hover(client, uri, START))
    answer = await stats(client, uri)
    assert (answer["tokenizer"], answer["tokens"]) == ("pt", len(PT.encode(TEXT)))


def push(client: GlassClient, section: dict) -> None:
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"glassllm": section}))


# Through initializationOptions: the editor must be able to start the server.


@pytest_lsp.fixture(config=server_config(), scope="module")
async def started_deep(lsp_client: GlassClient, files: dict[str, Path]):
    deep = str(files["deep.json"])
    result = await start_session(
        lsp_client, "visual-studio-code", options={"glassllm": {"tokenizer": deep, "compareWith": [deep, "en"]}}
    )
    assert result.capabilities.hover_provider
    yield
    await lsp_client.shutdown_session()


async def test_deep_nesting_in_the_initialization_options(started_deep: GlassClient, files):
    deep = files["deep.json"]
    shown = await new_messages(started_deep, 0, 2)
    assert sorted(message.message for message in shown) == [
        f"glassllm: cannot compare with the tokenizer {deep}: {deep}: not valid JSON (nested too deeply). "
        "It is left out of the comparison.",
        f"glassllm: cannot use the tokenizer {deep}: {deep}: not valid JSON (nested too deeply). "
        "Still using Portuguese (pt).",
    ]
    uri = open_document(started_deep, TEXT)
    for version in range(2, 5):  # the failure is remembered: every later request is answered
        change_document(started_deep, uri, version, TEXT)
        await still_portuguese(started_deep, uri)
        answer = await started_deep.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
        assert [compared.tokenizer for compared in answer.compare] == ["en"]
        assert "English (en):" in markdown(await hover(started_deep, uri, START))
    assert len(started_deep.messages) == 2


# Pushed with didChangeConfiguration.


@pytest_lsp.fixture(config=server_config(), scope="module")
async def client(lsp_client: GlassClient):
    await start_session(lsp_client, "neovim@0.11")
    yield
    await lsp_client.shutdown_session()


@pytest.mark.parametrize(
    ("name", "setting", "problem"),
    [
        ("deep.json", "compareWith", "{path}: not valid JSON (nested too deeply)"),
        ("fifo", "tokenizer", "{path}: not a regular file (a pipe with nothing written to it)"),
        ("fifo", "compareWith", "{path}: not a regular file (a pipe with nothing written to it)"),
        ("/dev/zero", "tokenizer", "/dev/zero: not a regular file"),
    ],
)
async def test_a_file_that_never_loads_is_reported_once(client: GlassClient, files, name, setting, problem):
    path = files.get(name, Path(name))
    uri = open_document(client, TEXT)
    before = len(client.messages)
    for version in range(2, 5):
        push(client, {setting: [str(path)] if setting == "compareWith" else str(path)})
        change_document(client, uri, version, TEXT)
        await still_portuguese(client, uri)
    (shown,) = await new_messages(client, before, 1)
    assert problem.format(path=path) in shown.message and shown.type == types.MessageType.Error
    await still_portuguese(client, uri)
    assert len(client.messages) == before + 1
    push(client, {})


async def test_requests_are_answered_while_a_silent_pipe_is_waited_for(client: GlassClient, files):
    silent = files["silent"]
    uri = open_document(client, TEXT)
    # A writer that never writes: the server's read waits on the pipe, then gives up.
    writer = os.open(silent, os.O_RDWR | os.O_NONBLOCK)
    try:
        before = len(client.messages)
        push(client, {"tokenizer": str(silent)})
        for version in range(2, 4):  # typing and hovering meanwhile
            change_document(client, uri, version, TEXT)
            await asyncio.wait_for(still_portuguese(client, uri), 10)
        assert len(client.messages) == before  # answered before the load ended
        (shown,) = await new_messages(client, before, 1)
        assert shown.message == (
            f"glassllm: cannot use the tokenizer {silent}: {silent}: a pipe that sent nothing for 5 s. "
            "Still using Portuguese (pt)."
        )
        await still_portuguese(client, uri)
    finally:
        os.close(writer)
    push(client, {})


async def test_a_tokenizer_pushed_while_another_loads_wins(client: GlassClient, tmp_path):
    silent = tmp_path / "silent"
    os.mkfifo(silent)
    uri = open_document(client, TEXT)
    writer = os.open(silent, os.O_RDWR | os.O_NONBLOCK)
    try:
        before = len(client.messages)
        push(client, {"tokenizer": str(silent)})
        push(client, {"tokenizer": "en"})  # the last settings win, whatever order loads end in
        assert (await stats(client, uri))["tokenizer"] == "en"
        await asyncio.sleep(6)  # the pipe's load has ended by now: its failure is no longer news
        assert (await stats(client, uri))["tokenizer"] == "en"
        assert len(client.messages) == before
    finally:
        os.close(writer)
    push(client, {"tokenizer": "pt"})
