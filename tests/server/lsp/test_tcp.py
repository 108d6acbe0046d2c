"""Over TCP (``glassllm-lsp --tcp --workspace DIR…``) any local user can connect, so the
server serves one client and reads and writes only inside the folders it was started
with, whatever folders the client declares: commands, training on a folder (links
leading outside left out) and the tokenizer files the settings name, whose errors never
quote the file's content.

The server runs as a user would start it, on a free local port; a plain pygls client
connects to it, and a second client speaks raw LSP framing on a socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
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


# Characters no other file here holds, and a file's content no message may quote.
SECRET = "ẞŒ segredo\n"
TOPSECRET_VERSION = json.dumps({"version": "TOPSECRET-v9", "alphabet": ["a"], "merges": []})
TOPSECRET_MERGE = json.dumps({"version": 1, "alphabet": ["a"], "merges": [["a", "TOPSECRET-piece"]]})


class TcpClient(LanguageClient):
    """A pygls client of the server on ``port`` that keeps the window messages it is shown."""

    def __init__(self, port: int) -> None:
        super().__init__("tcp-test", "1")
        self.port = port
        self.shown: list[str] = []

        @self.feature(types.WINDOW_SHOW_MESSAGE)
        def show(params: types.ShowMessageParams) -> None:
            self.shown.append(params.message)


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
    (found["outside"] / "secret.txt").write_text(SECRET, encoding="utf-8")
    (found["outside"] / "secret.json").write_text(TOPSECRET_VERSION, encoding="utf-8")
    (found["workspace"] / "corpus.txt").write_text("banana banana\n", encoding="utf-8")
    (found["workspace"] / "escape").symlink_to(found["outside"])
    (found["workspace"] / "leak.txt").symlink_to(found["outside"] / "secret.txt")
    (found["workspace"] / "version.json").write_text(TOPSECRET_VERSION, encoding="utf-8")
    (found["workspace"] / "merges.json").write_text(TOPSECRET_MERGE, encoding="utf-8")
    (found["workspace"] / "linked.json").symlink_to(found["outside"] / "secret.json")
    Tokenizer.train("banana banana\n", 20).save(found["workspace"] / "banana.json")
    return found


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(folders):
    port = free_port()
    workspace = ["--workspace", str(folders["workspace"]), "--workspace", str(folders["second"])]
    server = subprocess.Popen(
        [sys.executable, "-m", "glassllm_server", "--tcp", "--port", str(port), *workspace],
        env={**os.environ, "XDG_CACHE_HOME": str(folders["cache"])},
        stderr=subprocess.DEVNULL,
    )
    client = TcpClient(port)

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
                # A client may declare anything: the server keeps to its --workspace folders.
                workspace_folders=[
                    types.WorkspaceFolder(uri="file:///", name="everything"),
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


async def test_a_second_client_is_refused_and_the_first_one_served(client: TcpClient, folders):
    uri = folders["workspace"].joinpath("first.txt").as_uri()
    open_document(client, uri, "Era uma vez")
    reader, writer = await asyncio.open_connection("127.0.0.1", client.port)
    try:
        initialize = {"capabilities": {}, "rootUri": "file:///", "locale": "pt-BR"}
        send(writer, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize})
        answer = await asyncio.wait_for(receive(reader), 10)
        assert answer["id"] == 1 and answer["error"]["code"] == -32600
        assert answer["error"]["message"] == (
            "este glassllm-lsp atende um cliente, e há um conectado: inicie outro `glassllm-lsp --tcp` "
            "em outra porta para este cliente"
        )
        assert await asyncio.wait_for(reader.read(), 10) == b""  # and closed
    finally:
        writer.close()
    stats = await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
    assert (stats.tokens, stats.tokenizer) == (4, "pt")


async def test_training_on_a_folder_leaves_out_links_leading_outside(client: TcpClient, folders):
    answer = await command(client, "glassllm.trainTokenizer", str(folders["workspace"]), 40, "folder.json")
    assert answer["files"] == [str(folders["workspace"] / "corpus.txt")]
    assert answer["skipped"] == [str(folders["workspace"] / "leak.txt")]
    alphabet = Tokenizer.load(folders["workspace"] / "folder.json").alphabet
    assert not set("ẞŒsegrdo") & set(alphabet)  # nothing of the outside file


async def messages_after(client: TcpClient, before: int, count: int) -> list[str]:
    for _ in range(200):  # 10 s
        if len(client.shown) >= before + count:
            break
        await asyncio.sleep(0.05)
    return client.shown[before:]


def push(client: TcpClient, section: dict[str, Any]) -> None:
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"glassllm": section}))


async def test_a_tokenizer_file_outside_the_workspace_is_not_read(client: TcpClient, folders):
    places = [
        folders["outside"] / "secret.json",
        folders["outside"] / "missing.json",
        folders["workspace"] / "linked.json",
    ]
    before = len(client.shown)
    for count, place in enumerate(places, 1):
        push(client, {"tokenizer": str(place)})
        await messages_after(client, before, count)
    shown = client.shown[before:]
    folders_named = f"{folders['workspace']}, {folders['second']}"
    # The same words whether the file exists or not: nothing is learnt of it.
    assert shown == [
        f"glassllm: cannot use the tokenizer {place}: it is outside the workspace folders, and over TCP "
        f"glassllm reads tokenizer files only inside them ({folders_named}). Still using Portuguese (pt)."
        for place in places
    ]
    push(client, {"compareWith": [str(places[0])]})
    (compared,) = await messages_after(client, before + len(places), 1)
    assert compared.startswith(f"glassllm: cannot compare with the tokenizer {places[0]}: it is outside")
    push(client, {})


@pytest.mark.parametrize(("name", "place"), [("version.json", "version"), ("merges.json", "merges[0]")])
async def test_errors_do_not_quote_a_files_content(client: TcpClient, folders, name, place):
    path = folders["workspace"] / name
    before = len(client.shown)
    push(client, {"tokenizer": name, "compareWith": [name]})  # relative: from the workspace
    shown = await messages_after(client, before, 2)
    assert len(shown) == 2 and all("TOPSECRET" not in message for message in shown)
    assert (
        f"cannot use the tokenizer {path}: {path}: not a tokenizer file glassllm can use: {place} is not valid "
        "(over TCP, messages do not quote a file's content)"
    ) in shown[0]
    push(client, {})


async def test_a_tokenizer_file_inside_the_workspace_is_used(client: TcpClient, folders):
    uri = folders["workspace"].joinpath("banana.txt").as_uri()
    open_document(client, uri, "banana banana\n")
    push(client, {"tokenizer": "banana.json"})
    stats = await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
    assert stats.tokenizer == str(folders["workspace"] / "banana.json")
    assert stats.tokens == len(Tokenizer.load(folders["workspace"] / "banana.json").encode("banana banana\n"))
    push(client, {})


def send(writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
    body = json.dumps(message).encode("utf-8")
    writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)


async def receive(reader: asyncio.StreamReader) -> dict[str, Any]:
    length = 0
    while (line := await reader.readline()) != b"\r\n":
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    return json.loads(await reader.readexactly(length))


async def test_pages_for_the_browser_go_to_the_cache_folder_too(client: TcpClient, folders):
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


async def test_a_chat_template_outside_the_workspace_is_not_read(client: TcpClient, folders):
    from tests.library.formats.fixtures import model_file

    model = folders["workspace"] / "llama3"
    model.mkdir(exist_ok=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(model_file("llama3").with_name(name), model / name)
    template = folders["outside"] / "chat.jinja"
    template.write_text("{{ messages[0].content }} TOPSECRET", encoding="utf-8")
    uri = folders["workspace"].joinpath("chat.json").as_uri()
    open_document(client, uri, json.dumps([{"role": "user", "content": "Oi"}]))
    before = len(client.shown)
    push(client, {"tokenizer": str(model / "tokenizer.json"), "chatTemplate": str(template)})

    async def model_in_use() -> bool:
        stats = await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
        return stats.tokenizer == str(model / "tokenizer.json")

    deadline = asyncio.get_running_loop().time() + 30  # the model loads off the event loop
    while not await model_in_use() and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.05)
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert lenses is not None and len(lenses) == 1
    resolved = await client.code_lens_resolve_async(lenses[0])
    assert resolved.command is not None and "template" not in resolved.command.title  # plain text
    # Told once, whichever request asked first (a pushed diagnostic, the lens).
    (shown,) = await messages_after(client, before, 1)
    assert shown.startswith(f"glassllm: cannot use the chat template of {template}: it is outside the workspace")
    assert "TOPSECRET" not in shown
    push(client, {})
