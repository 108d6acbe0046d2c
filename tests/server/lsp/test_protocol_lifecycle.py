"""The protocol's own rules over the real stdio connection (issue 15, section 4).

LSP 3.17's lifecycle and JSON-RPC 2.0's framing, checked byte by byte with a raw client,
since a library client (pytest-lsp) would never send what these cases send: a request
before ``initialize``, ``exit`` without ``shutdown``, a request after ``shutdown``, a body
that is not JSON, a lowercase header name.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

SERVER_COMMAND = [sys.executable, "-m", "glassllm_server"]
HANG = 30  # seconds: far more than any answer takes, so only a missing answer reaches it

INITIALIZE = {"processId": None, "rootUri": None, "capabilities": {}}
HOVER = {"textDocument": {"uri": "file:///tmp/never-opened.txt"}, "position": {"line": 0, "character": 0}}


class RawClient:
    """Frames and reads JSON-RPC messages by hand; answers the server's own requests
    with ``null`` so that nothing waits on the client, except those whose method is in
    ``unanswered``."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            SERVER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stderr = b""
        self.unanswered: set[str] = set()
        self.responses: dict[Any, dict[str, Any]] = {}
        threading.Thread(target=self._read, daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._drain_stderr, daemon=True)
        self._stderr_reader.start()

    def send_bytes(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: dict[str, Any], header: str = "Content-Length") -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.send_bytes(f"{header}: {len(body)}\r\n\r\n".encode() + body)

    def request(self, id: int, method: str, params: Any = None) -> None:
        self.send({"id": id, "method": method, **({} if params is None else {"params": params})})

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"method": method, **({} if params is None else {"params": params})})

    def answer(self, id: int | None) -> dict[str, Any]:
        """The response to request ``id`` (notifications from the server are skipped,
        responses to other requests kept for their turn)."""
        if id in self.responses:
            return self.responses.pop(id)
        while True:
            message = self.messages.get(timeout=HANG)
            assert message is not None, f"the server closed its output; stderr:\n{self.stderr.decode()}"
            if "method" not in message:
                if message.get("id") == id:
                    return message
                self.responses[message.get("id")] = message

    def request_from_server(self, method: str) -> dict[str, Any]:
        """The server's next request ``method`` (other messages are skipped)."""
        while True:
            message = self.messages.get(timeout=HANG)
            assert message is not None, f"the server closed its output; stderr:\n{self.stderr.decode()}"
            if message.get("method") == method and "id" in message:
                return message

    def exit_status(self) -> int:
        return self.process.wait(timeout=HANG)

    def all_stderr(self) -> str:
        """Everything the server wrote on stderr (once it has exited)."""
        self._stderr_reader.join(timeout=HANG)
        return self.stderr.decode()

    def initialize(self) -> None:
        self.request(1, "initialize", INITIALIZE)
        assert "result" in self.answer(1)
        self.notify("initialized", {})

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=HANG)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    self.messages.put(None)
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            assert length is not None
            message = json.loads(stream.read(length))
            if "method" in message and "id" in message and message["method"] not in self.unanswered:
                self.send({"id": message["id"], "result": None})
            self.messages.put(message)

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr += line


@pytest.fixture
def server() -> Iterator[RawClient]:
    client = RawClient()
    try:
        yield client
    finally:
        client.close()


def test_shutdown_then_exit_ends_with_status_0(server):
    server.initialize()
    server.request(2, "shutdown")
    assert server.answer(2)["result"] is None
    server.notify("exit")
    assert server.exit_status() == 0


def test_shutdown_while_a_command_runs_cancels_it_and_is_answered(server, tmp_path):
    # The token map waits for the client to create its progress, which this client never
    # answers: the command is still running when shutdown comes (pygls 2.1.1 answered
    # that shutdown -32603, its loop over the running requests broken by their cancelling).
    server.unanswered.add("window/workDoneProgress/create")
    capabilities = {"window": {"workDoneProgress": True}}
    folders = [{"uri": tmp_path.as_uri(), "name": "work"}]
    server.request(1, "initialize", {**INITIALIZE, "capabilities": capabilities, "workspaceFolders": folders})
    assert "result" in server.answer(1)
    server.notify("initialized", {})
    server.request(2, "workspace/executeCommand", {"command": "glassllm.tokenMap", "arguments": []})
    server.request_from_server("window/workDoneProgress/create")
    server.request(3, "shutdown")
    assert server.answer(3) == {"jsonrpc": "2.0", "id": 3, "result": None}
    assert server.answer(2)["error"]["code"] == -32800  # RequestCancelled
    server.notify("exit")
    assert server.exit_status() == 0


@pytest.mark.parametrize("method", ["textDocument/hover", "textDocument/codeAction", "textDocument/codeLens"])
def test_a_request_before_initialize_is_refused_as_not_initialized(server, method):
    params = dict(HOVER)
    if method == "textDocument/codeAction":
        params = {
            **HOVER,
            "range": {"start": HOVER["position"], "end": HOVER["position"]},
            "context": {"diagnostics": []},
        }
        del params["position"]
    elif method == "textDocument/codeLens":
        params = {"textDocument": HOVER["textDocument"]}
    server.request(7, method, params)
    assert server.answer(7)["error"]["code"] == -32002
    server.initialize()  # and the server still starts normally afterwards


def test_exit_without_shutdown_ends_with_status_1(server):
    server.initialize()
    server.notify("exit")
    assert server.exit_status() == 1


def test_exit_before_initialize_ends_with_status_1(server):
    server.notify("exit")
    assert server.exit_status() == 1


def test_a_request_after_shutdown_is_an_invalid_request(server):
    server.initialize()
    server.request(2, "shutdown")
    server.answer(2)
    server.request(3, "textDocument/hover", HOVER)
    assert server.answer(3)["error"]["code"] == -32600


def test_a_body_that_is_not_json_is_answered_with_a_parse_error(server):
    server.initialize()
    body = b'{"jsonrpc": "2.0", "id": 5, "method": '
    server.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    answer = server.answer(None)
    assert answer["error"]["code"] == -32700
    server.request(6, "shutdown")  # the connection goes on
    assert server.answer(6)["result"] is None


def test_header_names_are_case_insensitive(server):
    server.send({"id": 1, "method": "initialize", "params": INITIALIZE}, header="content-length")
    assert "result" in server.answer(1)
    server.request(2, "shutdown")  # the next, well-framed message is not lost with it
    assert server.answer(2)["result"] is None


def test_a_notification_before_initialize_is_dropped(server):
    uri = HOVER["textDocument"]["uri"]
    server.notify(
        "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "plaintext", "version": 1, "text": "Era"}}
    )
    server.initialize()
    server.request(2, "textDocument/hover", HOVER)
    assert server.answer(2)["error"]["code"] == -32803  # the document was never opened


def test_a_second_initialize_is_an_invalid_request(server):
    server.initialize()
    server.request(2, "initialize", INITIALIZE)
    assert server.answer(2)["error"]["code"] == -32600


def test_a_json_value_that_is_not_a_message_is_an_invalid_request(server):
    server.initialize()
    server.send_bytes(b"Content-Length: 6\r\n\r\n[1, 2]")
    assert server.answer(None)["error"]["code"] == -32600
    server.request(6, "shutdown")
    assert server.answer(6)["result"] is None


def test_a_body_over_the_limit_is_skipped_and_refused(server):
    from glassllm_server.protocol.framing import MAX_BODY

    server.initialize()
    length = MAX_BODY + 1
    server.send_bytes(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: %d\r\n\r\n" % length)
    chunk = b" " * (1024 * 1024)
    for _ in range(length // len(chunk)):
        server.send_bytes(chunk)
    server.send_bytes(b" " * (length % len(chunk)))
    assert server.answer(None)["error"]["code"] == -32600
    server.request(6, "shutdown")  # the framing is intact after it
    assert server.answer(6)["result"] is None
