"""The ``glassllm-lsp`` command line: options, and serving over TCP instead of stdio."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from typing import BinaryIO

import pytest

from glassllm_server import __version__

COMMAND = [sys.executable, "-m", "glassllm_server"]


def test_version_and_help():
    done = subprocess.run([*COMMAND, "--version"], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == f"glassllm-lsp {__version__}"
    done = subprocess.run([*COMMAND, "--help"], capture_output=True, text=True, check=True)
    for option in ("--tcp", "--workspace", "--host", "--port", "--log-file", "-v"):
        assert option in done.stdout


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _send(connection: socket.socket, message: dict) -> None:
    body = json.dumps(message).encode("utf-8")
    connection.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)


def _exchange(connection: socket.socket, reader, message: dict) -> dict:
    """Send a request and read its answer."""
    _send(connection, message)
    length = 0
    while True:
        header = reader.readline()
        if header.lower().startswith(b"content-length:"):
            length = int(header.split(b":")[1])
        elif header == b"\r\n":
            return json.loads(reader.read(length))


def test_tcp_with_a_log_file(tmp_path):
    port = _free_port()
    log = tmp_path / "server.log"
    server = subprocess.Popen(
        [
            *COMMAND,
            "--tcp",
            "--workspace",
            str(tmp_path),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-file",
            str(log),
            "-v",
        ]
    )
    try:
        connection = _connect(port, server)
        with connection, connection.makefile("rb") as reader:
            _initialize_and_ask_for_stats(connection, reader)
    finally:
        server.terminate()
        server.wait(10)
    # -v logs at INFO, into the file rather than standard error.
    assert " INFO " in log.read_text(encoding="utf-8")


def _connect(port: int, server: subprocess.Popen) -> socket.socket:
    """A connection to the server once it listens on ``port``."""
    deadline = time.monotonic() + 20
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=10)
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                pytest.fail("the server did not listen on its port")
            time.sleep(0.1)


def _initialize_and_ask_for_stats(connection: socket.socket, reader: BinaryIO) -> None:
    answer = _exchange(
        connection, reader, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
    )
    assert answer["result"]["serverInfo"]["name"] == "glassllm-lsp"
    _send(connection, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
    document = {"uri": "file:///tcp.txt", "languageId": "plaintext", "version": 1, "text": "Era uma vez"}
    _send(connection, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": document}})
    answer = _exchange(
        connection,
        reader,
        {"jsonrpc": "2.0", "id": 2, "method": "glassllm/stats", "params": {"textDocument": {"uri": "file:///tcp.txt"}}},
    )
    assert answer["result"] == {
        "tokens": 4,
        "chunks": 3,
        "characters": 11,
        "unknown": 0,
        "tokenizer": "pt",
        "compare": [{"tokenizer": "en", "tokens": 8, "chunks": 3, "unknown": 0}],
    }


def test_stdio_flag_is_accepted_as_the_default_transport():
    """vscode-languageclient and other generic clients start servers with ``--stdio``."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    exit_body = json.dumps({"jsonrpc": "2.0", "method": "exit"})
    frames = "".join(f"Content-Length: {len(b.encode())}\r\n\r\n{b}" for b in (body, exit_body))
    done = subprocess.run([*COMMAND, "--stdio"], input=frames.encode(), capture_output=True, timeout=60)
    assert b'"id": 1' in done.stdout or b'"id":1' in done.stdout, done.stderr.decode()
    assert b"capabilities" in done.stdout
    rejected = subprocess.run([*COMMAND, "--stdio", "--tcp"], capture_output=True, text=True, timeout=60)
    assert rejected.returncode == 2 and "not allowed with argument" in rejected.stderr


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        (["--tcp"], "--tcp needs --workspace DIR (one or more): any local user can connect to a TCP port"),
        (["--tcp", "--workspace", "{missing}"], "--workspace {missing}: not a folder"),
        (["--workspace", "{here}"], "--workspace goes with --tcp"),
    ],
)
def test_tcp_needs_the_workspace_folders(tmp_path, arguments, error):
    places = {"missing": str(tmp_path / "missing"), "here": str(tmp_path)}
    done = subprocess.run(
        [*COMMAND, *(argument.format(**places) for argument in arguments)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and error.format(**places) in done.stderr
