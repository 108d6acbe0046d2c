"""The server's own edges (issue 15, section 3), over the real stdio connection: the
settings a client sends last win, command and params mistakes are answered cleanly."""

from __future__ import annotations

import json

import pytest

from tests.server.lsp.test_protocol_lifecycle import INITIALIZE, RawClient


@pytest.fixture
def server():
    client = RawClient()
    try:
        yield client
    finally:
        client.close()


def frame(message: dict) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def hover_text(server: RawClient, id: int, uri: str) -> str:
    server.request(id, "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 1}})
    return server.answer(id)["result"]["contents"]["value"]


@pytest.mark.parametrize("attempt", range(3))
def test_settings_pushed_right_after_initialized_win_over_the_reload_it_started(server, attempt):
    # A client without workspace/configuration; initialized and the push in one write,
    # so the server reads both before the reload initialized started has run.
    server.request(1, "initialize", {**INITIALIZE, "locale": "en"})
    server.answer(1)
    uri = "file:///tmp/glassllm-tests/race.txt"
    document = {"uri": uri, "languageId": "plaintext", "version": 1, "text": "Once upon a time"}
    server.send_bytes(
        frame({"method": "initialized", "params": {}})
        + frame(
            {"method": "workspace/didChangeConfiguration", "params": {"settings": {"glassllm": {"tokenizer": "en"}}}}
        )
        + frame({"method": "textDocument/didOpen", "params": {"textDocument": document}})
    )
    assert "Tokenizer: English (en)" in hover_text(server, 2, uri)
    assert "Tokenizer: English (en)" in hover_text(server, 3, uri)  # and after every reload


COMMANDS = [
    "glassllm.showStats",
    "glassllm.explainMerges",
    "glassllm.compareTokenizers",
    "glassllm.openInBrowser",
    "glassllm.trainTokenizer",
]


@pytest.mark.parametrize("command", COMMANDS)
def test_a_command_without_arguments_is_invalid_params_without_a_traceback(server, command):
    server.request(1, "initialize", INITIALIZE)
    server.answer(1)
    server.notify("initialized", {})
    server.request(2, "workspace/executeCommand", {"command": command})
    error = server.answer(2)["error"]
    assert error["code"] == -32602
    server.request(3, "workspace/executeCommand", {"command": command, "arguments": []})
    assert server.answer(3)["error"] == error  # the same answer as an empty list
    server.request(4, "shutdown")
    server.answer(4)
    server.notify("exit")
    assert server.exit_status() == 0
    assert "Traceback" not in json.dumps(error)
    assert "Traceback" not in server.all_stderr()


@pytest.mark.parametrize(
    ("position", "expected"),
    [
        (None, "params.position: missing"),
        ({"line": -1, "character": 0}, "params.position: Position.line should be in range"),
    ],
)
def test_invalid_params_are_answered_and_logged_in_one_line(server, position, expected):
    server.request(1, "initialize", INITIALIZE)
    server.answer(1)
    server.notify("initialized", {})
    params: dict = {"textDocument": {"uri": "file:///tmp/glassllm-tests/never.txt"}}
    if position is not None:
        params["position"] = position
    server.request(2, "textDocument/hover", params)
    error = server.answer(2)["error"]
    assert error["code"] == -32602
    assert expected in error["message"]
    server.request(3, "shutdown")
    server.answer(3)
    server.notify("exit")
    assert server.exit_status() == 0
    logged = [line for line in server.all_stderr().splitlines() if line.strip()]
    assert len(logged) == 1, logged
    assert "textDocument/hover" in logged[0] and expected in logged[0]
