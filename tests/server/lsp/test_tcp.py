"""Over TCP (``glassllm-lsp --tcp``) the commands read and write only inside the workspace
folders the client declared and the explanation-page cache folder.

The server runs as a user would start it, on a free local port; a plain pygls client
connects to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.client import LanguageClient

from glassllm import Tokenizer

pytestmark = pytest.mark.asyncio(loop_scope="module")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("tcp")
    found = {name: base / name for name in ("workspace", "second", "outside", "cache")}
    for folder in found.values():
        folder.mkdir()
    (found["outside"] / "corpus.txt").write_text("banana banana\n", encoding="utf-8")
    (found["workspace"] / "corpus.txt").write_text("banana banana\n", encoding="utf-8")
    (found["workspace"] / "escape").symlink_to(found["outside"])
    return found


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(folders):
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "glassllm_server", "--tcp", "--port", str(port)],
        env={**os.environ, "XDG_CACHE_HOME": str(folders["cache"])},
        stderr=subprocess.DEVNULL,
    )
    client = LanguageClient("tcp-test", "1")

    @client.feature(types.WORKSPACE_CONFIGURATION)
    def configuration(params: types.ConfigurationParams) -> list[None]:
        return [None] * len(params.items)

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def question(params: types.ShowMessageRequestParams) -> types.MessageActionItem:
        return types.MessageActionItem(title="Keep the current one")

    try:
        for _ in range(600):  # 30 s: the server imports its modules first
            try:
                await client.start_tcp("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.05)
        else:
            raise AssertionError("the server never listened")
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                workspace_folders=[
                    types.WorkspaceFolder(uri=folders["workspace"].as_uri(), name="workspace"),
                    types.WorkspaceFolder(uri=folders["second"].as_uri(), name="second"),
                ],
                locale="en",
            )
        )
        client.initialized(types.InitializedParams())
        yield client
        await client.shutdown_async(None)
        client.exit(None)
        assert server.wait(timeout=30) == 0
    finally:
        if server.poll() is None:
            server.terminate()
            server.wait(timeout=30)
        # The server closed the connection as it exited.
        with contextlib.suppress(ConnectionResetError):
            await client.stop()


async def command(client: LanguageClient, name: str, *arguments: Any) -> Any:
    answer = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=name, arguments=list(arguments))
    )
    assert answer is not None, name
    return answer


def open_document(client: LanguageClient, uri: str, text: str) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="plaintext", version=1, text=text)
        )
    )


async def test_training_inside_the_workspace_folders_works(client, folders):
    answer = await command(client, "glassllm.trainTokenizer", str(folders["workspace"] / "corpus.txt"), 20, "tok.json")
    assert answer["path"] == str(folders["workspace"] / "tok.json")
    uri = folders["second"].joinpath("doc.txt").as_uri()
    open_document(client, uri, "cabana cabana\n")
    await command(client, "glassllm.trainTokenizer", uri, 20, str(folders["second"] / "sub" / "tok.json"))
    assert (
        Tokenizer.load(folders["second"] / "sub" / "tok.json").merges == Tokenizer.train("cabana cabana\n", 20).merges
    )


@pytest.mark.parametrize(
    ("source", "output"),
    [
        ("{workspace}/corpus.txt", "{outside}/tok.json"),  # writing outside
        ("{workspace}/corpus.txt", "{workspace}/../outside/tok.json"),  # .. leads outside
        ("{workspace}/corpus.txt", "{workspace}/escape/tok.json"),  # a link leads outside
        ("{outside}/corpus.txt", "{workspace}/tok2.json"),  # reading outside
        ("{workspace}/escape", "{workspace}/tok3.json"),
    ],
)
async def test_paths_outside_the_workspace_are_refused_with_a_clear_error(client, folders, source, output):
    places = {name: str(folder) for name, folder in folders.items()}
    before = sorted(path.name for folder in folders.values() for path in folder.rglob("*"))
    with pytest.raises(
        JsonRpcException, match="is outside the workspace folders; over TCP, glassllm reads and writes only inside them"
    ):
        await command(client, "glassllm.trainTokenizer", source.format(**places), 20, output.format(**places))
    assert sorted(path.name for folder in folders.values() for path in folder.rglob("*")) == before


async def test_explanation_pages_still_go_to_the_cache_folder(client, folders):
    uri = folders["workspace"].joinpath("explain.txt").as_uri()
    open_document(client, uri, "Era uma vez\n")
    selection = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}}
    answer = await command(client, "glassllm.explainMerges", uri, selection)
    assert Path(answer["page"].removeprefix("file://")).parent == folders["cache"] / "glassllm"


async def test_pages_for_the_browser_go_to_the_cache_folder_too(client, folders):
    uri = folders["workspace"].joinpath("browser.txt").as_uri()
    open_document(client, uri, "Era uma vez\n")
    selection = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}}
    answer = await command(client, "glassllm.openInBrowser", uri, selection, "compare")
    path = Path(answer["path"])
    assert path.parent == folders["cache"] / "glassllm" and path.suffix == ".html"
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    # This client cannot open documents: a message gave the path instead.
    assert answer["opened"] is False
    assert not list(folders["workspace"].rglob("*.html"))
