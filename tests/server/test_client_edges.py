"""The server's own edges (issue 15, section 3), over the real stdio connection: the
settings a client sends last win, command and params mistakes are answered cleanly."""

from __future__ import annotations

import json

import pytest
from test_lifecycle_framing import INITIALIZE, RawClient


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
