"""Routine events leave the log quiet: error answers that are part of normal work (a
request about a closed document, a cancelled request) and cancels of requests already
answered write no traceback and no warning; a real exception still logs its traceback,
once."""

from __future__ import annotations

import asyncio
import logging
import tempfile
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import FeatureNotificationError, FeatureRequestError, JsonRpcException

from glassllm_server.server import GlassServer
from tests.server.session import (
    LOOP,
    SERVER_COMMAND,
    hover,
    open_document,
    send_raw_notification,
    session_fixture,
)

LOG = Path(tempfile.mkdtemp(prefix="glassllm-test-log-")) / "server.log"


# The log does not depend on the position encoding: one preset is enough.
client = session_fixture("visual-studio-code", command=[*SERVER_COMMAND, "--log-file", str(LOG)])


@LOOP
async def test_routine_error_answers_and_late_cancels_are_not_logged_as_problems(client):
    position = types.Position(line=0, character=0)
    with pytest.raises(JsonRpcException) as closed:
        await hover(client, "file:///tmp/glassllm-tests/never-opened.txt", position)
    assert closed.value.code == -32803

    uri = open_document(client, "Era uma vez")
    answered = client.protocol.send_request(
        types.TEXT_DOCUMENT_HOVER,
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position),
        msg_id="answered-hover",
    )
    await asyncio.wrap_future(answered)
    send_raw_notification(client, "$/cancelRequest", {"id": "answered-hover"})

    # A request still waiting when it is cancelled answers RequestCancelled.
    large = open_document(client, "palavra e outra palavra\n" * 60_000)
    msg_id = "waiting-lens"
    waiting = client.protocol.send_request(
        types.TEXT_DOCUMENT_CODE_LENS,
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=large)),
        msg_id=msg_id,
    )
    send_raw_notification(client, "$/cancelRequest", {"id": msg_id})
    with pytest.raises(JsonRpcException) as cancelled:
        await asyncio.wrap_future(waiting)
    assert cancelled.value.code == -32800

    assert (await hover(client, uri, position)) is not None  # the server goes on
    log = LOG.read_text(encoding="utf-8")
    assert "Traceback" not in log
    assert not [line for line in log.splitlines() if " WARNING " in line or " ERROR " in line]


def test_a_real_exception_in_a_handler_logs_its_traceback_once(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
):
    server = GlassServer()
    protocol = server.protocol
    answers = []
    monkeypatch.setattr(
        protocol, "_send_response", lambda msg_id, result=None, error=None: answers.append((msg_id, error))
    )
    loop = asyncio.new_event_loop()
    try:
        future = loop.create_future()
        future.set_exception(ValueError("a bug"))
        with caplog.at_level(logging.INFO):
            protocol._send_handler_result(future, msg_id=7)
    finally:
        loop.close()
    assert answers[0][0] == 7 and answers[0][1].code == -32603
    tracebacks = [record for record in caplog.records if record.exc_info]
    assert len(tracebacks) == 1 and "a bug" in caplog.text


def test_notification_errors_are_logged_and_shown_once(monkeypatch: pytest.MonkeyPatch):
    server = GlassServer()
    shown: list[types.ShowMessageParams] = []
    monkeypatch.setattr(server, "window_show_message", shown.append)
    server.report_server_error(ValueError("first"), FeatureNotificationError)
    server.report_server_error(ValueError("second"), FeatureNotificationError)
    server.report_server_error(ValueError("a request"), FeatureRequestError)
    assert len(shown) == 1
    assert "first" in shown[0].message
