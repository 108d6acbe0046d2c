"""A compared tokenizer counting a large document in its child process, end to end: the
counts equal those counted in the server's own process (``en`` beside ``pt``, and Llama
3's ``tokenizer.json``), edits made while the child counts leave the right counts, a
killed child falls back to counting in the server (told once), and the child ends with
the server, whether it shuts down or crashes."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types

from glassllm import load_tokenizer, packaged
from glassllm_server.compare import ComparedCounts, ComparedTokenizer
from glassllm_server.compare_process import CHILD_CHARACTERS
from tests.library.formats.fixtures import model_file
from tests.server.oracle import lsp_lines
from tests.server.session import (
    LOOP,
    SERVER_COMMAND,
    GlassClient,
    change_document,
    configure_and_wait,
    open_document,
    session_fixture,
)

pytestmark = LOOP

EN = packaged("en")
SENTENCES = [
    "A menina bonita caminhou até a praça, e o café já estava frio.",
    "Não há 3,14 razões: há\tuma só — 🙂 e mais nada!",
    "  Indentada com espaços, ação, coração, pão; ÁGUA e ágUA.",
    "The quick brown fox said: «olá», then “adeus”.",
    "combinação: e\u0301 a\u0300 o\u0303 · 1234567890 · x=y+z;",
    "",
]

client = session_fixture("visual-studio-code")


def large_text(seed: int, characters: int = CHILD_CHARACTERS + 50_000) -> str:
    """Over :data:`CHILD_CHARACTERS` of varied lines (words made up, so that counting is
    real work), ending in ``\\n`` or ``\\r\\n``."""
    rng = random.Random(seed)
    letters = "abcdefghijlmnoprstuvxzáâãçéêíóôõú"
    parts: list[str] = []
    size = 0
    while size < characters:
        words = [rng.choice(SENTENCES)] + ["".join(rng.choices(letters, k=rng.randint(1, 12))) for _ in range(8)]
        line = " ".join(rng.sample(words, len(words))) + rng.choice(["\n", "\n", "\r\n"])
        parts.append(line)
        size += len(line)
    return "".join(parts)


def in_process(tokenizer: Any, name: str, text: str) -> ComparedCounts:
    """The counts the server makes in its own process, for ``text``."""
    return ComparedTokenizer(tokenizer, name).counts(lsp_lines(text))


async def compare_row(client: GlassClient, uri: str) -> dict[str, Any]:
    raw = await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
    (row,) = raw.compare
    return {"tokenizer": row.tokenizer, "tokens": row.tokens, "chunks": row.chunks, "unknown": row.unknown}


def as_row(counts: ComparedCounts) -> dict[str, Any]:
    return {"tokenizer": counts.tokenizer, "tokens": counts.tokens, "chunks": counts.chunks, "unknown": counts.unknown}


def children(pid: int) -> list[int]:
    """The compared tokenizers' child processes of process ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            status = (entry / "status").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if f"\nPPid:\t{pid}\n" in status and b"glassllm_server.compare_child" in command:
            found.append(int(entry.name))
    return found


async def gone(pids: list[int], timeout: float = 20.0) -> bool:
    """Whether every process of ``pids`` has ended (or is a zombie) within ``timeout``."""
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        alive = []
        for pid in pids:
            try:
                state = Path(f"/proc/{pid}/status").read_text().split("\nState:\t")[1][0]
            except (OSError, IndexError):
                continue
            if state != "Z":
                alive.append(pid)
        if not alive:
            return True
        await asyncio.sleep(0.05)
    return False


def server_pid(client: GlassClient) -> int:
    process = client._server
    assert process is not None, "the test client started the server"
    return process.pid


async def test_the_childs_counts_equal_those_counted_in_the_server(client):
    await configure_and_wait(client, {"tokenizer": "pt", "compareWith": ["en"]})
    text = large_text(1)
    uri = open_document(client, text)
    row = await compare_row(client, uri)
    assert row == as_row(in_process(EN, "en", text))
    assert row["tokens"] == len(EN.encode(text))
    assert children(server_pid(client)), "a document this large is counted in a child process"


async def test_a_real_models_counts_from_the_child_equal_the_servers(client):
    path = str(model_file("llama3"))
    llama = load_tokenizer(path)
    await configure_and_wait(client, {"tokenizer": "pt", "compareWith": [path]})
    text = large_text(2) + "Era uma vez.\n\n\n  coisa <|end_of_text|>\r\n\r\nfim"
    uri = open_document(client, text)
    row = await compare_row(client, uri)
    assert row == as_row(in_process(llama, path, text))
    assert row["tokens"] == len(llama.encode(text))
    # Edited: the edited blocks are counted again, the others kept.
    change_document(client, uri, 2, (types.Range(start=types.Position(2, 0), end=types.Position(4, 0)), "x\n\n"))
    lines = lsp_lines(text)
    edited = "".join([*lines[:2], "x\n\n", *lines[4:]])
    assert await compare_row(client, uri) == as_row(in_process(llama, path, edited))
    await configure_and_wait(client, {"tokenizer": "pt", "compareWith": ["en"]})


async def test_edits_while_the_child_counts_leave_the_right_counts(client):
    await configure_and_wait(client, {"tokenizer": "pt", "compareWith": ["en"]})
    text = large_text(3, 4 * CHILD_CHARACTERS)
    uri = open_document(client, text)
    lines = lsp_lines(text)
    # At once, before the child is done: a line typed, lines deleted, a large paste.
    inserted = "Um texto novo, 🙂 café.\r\n"
    pasted = large_text(4)
    start = types.Position(line=2, character=0)
    change_document(client, uri, 2, (types.Range(start=start, end=start), inserted))
    change_document(client, uri, 3, (types.Range(start=types.Position(5, 0), end=types.Position(7, 0)), ""))
    end = types.Position(line=len(lines) - 2, character=0)
    change_document(client, uri, 4, (types.Range(start=end, end=end), pasted))
    final = [*lines[:2], inserted, *lines[2:4], *lines[6:]]
    final[len(lines) - 2 : len(lines) - 2] = [pasted]
    expected = "".join(final)
    assert await compare_row(client, uri) == as_row(in_process(EN, "en", expected))
    # A whole new text while the child counts the old one.
    replaced = large_text(5)
    uri = open_document(client, large_text(6, 2 * CHILD_CHARACTERS))
    change_document(client, uri, 2, replaced)
    assert await compare_row(client, uri) == as_row(in_process(EN, "en", replaced))


async def test_a_killed_child_falls_back_to_counting_in_the_server_told_once(client):
    await configure_and_wait(client, {"tokenizer": "pt", "compareWith": ["en"]})
    text = large_text(7)
    assert await compare_row(client, open_document(client, text)) == as_row(in_process(EN, "en", text))
    pids = children(server_pid(client))
    assert pids
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    assert await gone(pids)
    before = len(client.messages)
    for seed in (8, 9):
        other = large_text(seed)
        assert await compare_row(client, open_document(client, other)) == as_row(in_process(EN, "en", other))
    told = [m.message for m in client.messages[before:] if "separate process" in m.message]
    assert len(told) == 1, client.messages[before:]
    assert "English (en)" in told[0] and "server's own process" in told[0]
    assert not children(server_pid(client))


# The child ends with the server


def _send(server: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert server.stdin is not None
    body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
    server.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    server.stdin.flush()


def _answer(server: subprocess.Popen[bytes], number: int) -> Any:
    """Read the server's messages until the answer to request ``number``."""
    assert server.stdout is not None
    while True:
        length = 0
        while (header := server.stdout.readline()) not in (b"\r\n", b""):
            if header.lower().startswith(b"content-length:"):
                length = int(header.split(b":")[1])
        message = json.loads(server.stdout.read(length))
        if message.get("id") == number and "method" not in message:
            return message["result"]
        if "method" in message and "id" in message:  # workspace/configuration and the like
            _send(server, {"id": message["id"], "result": None})


async def _counting_server() -> tuple[subprocess.Popen[bytes], list[int]]:
    """A server with a large document counted, and its child processes."""
    server = subprocess.Popen(SERVER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    _send(server, {"id": 1, "method": "initialize", "params": {"processId": None, "capabilities": {}}})
    await asyncio.to_thread(_answer, server, 1)
    _send(server, {"method": "initialized", "params": {}})
    item = {"uri": "file:///tmp/large.txt", "languageId": "plaintext", "version": 1, "text": large_text(10)}
    _send(server, {"method": "textDocument/didOpen", "params": {"textDocument": item}})
    _send(server, {"id": 2, "method": "glassllm/stats", "params": {"textDocument": {"uri": item["uri"]}}})
    assert (await asyncio.to_thread(_answer, server, 2))["compare"][0]["tokenizer"] == "en"
    pids = children(server.pid)
    assert pids
    return server, pids


async def test_the_child_ends_when_the_server_exits():
    server, pids = await _counting_server()
    _send(server, {"id": 3, "method": "shutdown"})
    await asyncio.to_thread(_answer, server, 3)
    _send(server, {"method": "exit"})
    assert await asyncio.to_thread(server.wait, 20) == 0
    assert await gone(pids)


async def test_the_child_ends_when_the_server_crashes():
    server, pids = await _counting_server()
    server.kill()
    await asyncio.to_thread(server.wait, 20)
    assert await gone(pids)
    assert sys.platform.startswith("linux")  # where /proc told which processes were the server's
