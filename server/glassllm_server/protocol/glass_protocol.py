"""The server's protocol: pygls' with the fixes glassllm needs at the JSON-RPC edge.

- a request whose params do not deserialize gets a -32602 answer (pygls sends none), and
  so does a command without ``arguments`` that needs some;
- a result may be JSON already written (:class:`RawJSON`), spliced in as it is;
- every request sees the documents as they were when it arrived (:mod:`.arrival`);
- document lifecycle: ``didOpen``, ``didChange`` and ``didClose`` go only to the server's
  own open documents, never to pygls' workspace, which rebuilds the whole text on every
  keystroke;
- lifecycle (LSP 3.17): a request before ``initialize`` is answered -32002
  ServerNotInitialized, a second ``initialize`` or any request after ``shutdown`` -32600
  InvalidRequest; notifications then are dropped, except ``exit``; ``shutdown`` while
  requests run cancels them and is answered;
- routine error answers (a closed document, a cancelled request) and cancels of requests
  already answered are not logged as problems;
- custom messages' params arrive as the namedtuples pygls makes, but of one class per
  shape rather than a new class per message (see :func:`as_objects`).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections import namedtuple
from collections.abc import Callable
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage, lsp_method

from glassllm.caches import LruCache
from glassllm_server.protocol.arrival import SnapshotsAtArrival
from glassllm_server.protocol.errors import describe_invalid
from glassllm_server.session import Session

__all__ = ["GlassProtocol", "RawJSON"]

logger = logging.getLogger(__name__)
# pygls logs every outgoing message at INFO: a 7 MB document would be logged whole.
logging.getLogger("pygls.protocol.json_rpc").setLevel(logging.WARNING)


def _not_a_deserialize_traceback(record: logging.LogRecord) -> bool:
    # pygls logs a full traceback for every malformed message; the protocol logs one
    # line instead (see GlassProtocol.structure_message): a client's mistake is routine.
    return not str(record.msg).startswith("Unable to deserialize message")


logging.getLogger("pygls.protocol.json_rpc").addFilter(_not_a_deserialize_traceback)


class RawJSON:
    """A result already serialized: JSON text, spliced into the response as it is.

    For answers with thousands of items built from per-line caches (inlay hints), where
    even ``json.dumps`` of plain dicts would cost more than everything else.
    """

    def __init__(self, text: str) -> None:
        self.text = text


# The namedtuple classes custom messages' params are made of, by name and keys: the
# shapes a client sends are few, and a class costs some 5 KB.
_OBJECT_CLASSES: LruCache[tuple[str, tuple[str, ...]], Any] = LruCache(256)


def as_objects(value: Any) -> Any:
    """What pygls (``pygls.protocol._dict_to_object``) makes of a custom message's params
    or result: a dict, and every dict within, as namedtuples named by its ``type_name``
    ("Object" when absent), keys renamed as ``namedtuple(rename=True)`` does; anything
    else as it is.

    pygls makes a new class for every object, each a reference cycle that only the
    garbage collector frees, some 0.2 ms and 5 KB per ``glassllm/stats``: here the class
    is made once per shape.
    """
    if not isinstance(value, dict):
        return value
    type_name = str(value.pop("type_name", "Object"))

    def structure(fields: dict[str, Any]) -> Any:
        shape = (type_name, tuple(fields))
        made = _OBJECT_CLASSES.get(shape)
        if made is None:
            made = namedtuple(type_name, fields, rename=True)
            _OBJECT_CLASSES.put(shape, made)
        return made(*fields.values())

    # Through JSON as pygls goes: every nested dict, even in lists, becomes an object.
    return json.loads(json.dumps(value), object_hook=structure)


def _structure_with_objects(field: str) -> Callable[[dict[str, Any], type], Any]:
    """A structure hook for pygls' generic messages with ``field`` as :func:`as_objects`."""

    def structure(message: dict[str, Any], cls: type) -> Any:
        if field in message:
            message[field] = as_objects(message[field])
        return cls(**message)

    return structure


_SERVER_NOT_INITIALIZED = -32002
_INVALID_REQUEST = -32600


class _Answered:
    """Stands for a message already answered while it was being read."""


class GlassProtocol(SnapshotsAtArrival):
    """pygls' protocol with our documents and with answers for malformed requests."""

    # The server's session, set as soon as the server has made it (the protocol is made
    # first, by pygls' server): where the open documents and the user's language are.
    session: Session

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        converter.register_structure_hook(JsonRPCRequestMessage, _structure_with_objects("params"))
        converter.register_structure_hook(JsonRPCNotification, _structure_with_objects("params"))
        converter.register_structure_hook(JsonRPCResponseMessage, _structure_with_objects("result"))
        self._writes: set[asyncio.Future[Any]] = set()
        self._initialize_arrived = False

    def arrive(self) -> None:
        self.session.open_documents.arrive()

    def structure_message(self, data: dict[str, Any]) -> Any:
        params = data.get("params")
        command = data.get("method") == types.WORKSPACE_EXECUTE_COMMAND
        if command and isinstance(params, dict) and "arguments" not in params:
            # LSP makes the member optional: none is an empty list, checked as one
            # (pygls would call the command with no arguments at all).
            data = {**data, "params": {**params, "arguments": []}}
        missing = "jsonrpc" in data and "method" in data and "params" not in data
        if missing:
            # Custom methods cannot even be read without the member; null is the same.
            data = {**data, "params": None}
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            method = data.get("method", "?")
            messages = self.session.messages
            if missing or data.get("params") is None:
                detail = messages("error.missing_params", method=method)
            else:
                detail = messages("error.invalid_params", method=method, detail=describe_invalid(error.__cause__))
            logger.warning("%s", detail)
            if "id" in data and "method" in data:
                self._send_response(
                    data["id"], error=types.ResponseError(code=JsonRpcInvalidParams.CODE, message=detail)
                )
            return _Answered()

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Answered):
            return
        method = getattr(message, "method", None)
        if method is not None and method != types.EXIT and (refusal := self._lifecycle_refusal(method)):
            if hasattr(message, "id"):
                self._send_response(message.id, error=types.ResponseError(code=refusal[0], message=refusal[1]))
            else:
                logger.debug("notification %s dropped: %s", method, refusal[1])
            return
        if method == types.INITIALIZE:
            self._initialize_arrived = True
        super().handle_message(message)

    def _handle_notification(self, method_name: str, params: Any) -> None:
        super()._handle_notification(method_name, params)
        # pygls 2.1.1 files a notification run by one of its generator handlers (didChange,
        # didOpen…) in _request_futures under a fresh id and never takes it out: a Future
        # per keystroke, kept for the server's life. A done future there is of no use.
        futures = self._request_futures
        for msg_id in [msg_id for msg_id, future in futures.items() if future.done()]:
            del futures[msg_id]

    def _lifecycle_refusal(self, method: str) -> tuple[int, str] | None:
        """Why a message with ``method`` cannot be handled now (None when it can)."""
        if self._shutdown:
            return _INVALID_REQUEST, f"{method}: the server is shutting down (shutdown was received)"
        if not self._initialize_arrived:
            if method != types.INITIALIZE:
                return _SERVER_NOT_INITIALIZED, f"{method}: the server is not initialized yet"
        elif method == types.INITIALIZE:
            return _INVALID_REQUEST, "initialize: the server is already initialized"
        return None

    def answer_unidentified(self, code: int, message: str) -> None:
        """An error answer to a message whose id cannot be known (JSON-RPC's ``id: null``)."""
        error = {"code": code, "message": message}
        self._send_body(json.dumps({"jsonrpc": self.VERSION, "id": None, "error": error}))

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if error is None and isinstance(result, RawJSON):
            self._result_types.pop(msg_id, None)
            self._send_body(f'{{"jsonrpc": "{self.VERSION}", "id": {json.dumps(msg_id)}, "result": {result.text}}}')
            return
        super()._send_response(msg_id, result, error)

    def _send_body(self, body: str) -> None:
        """Frame and write a JSON body, as pygls' ``_send_data`` does after ``json.dumps``."""
        if self.writer is None:
            logger.error("Unable to send data, no available transport!")
            return
        data = body.encode(self.CHARSET)
        header = f"Content-Length: {len(data)}\r\nContent-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
        written = self.writer.write(header.encode(self.CHARSET) + data)
        if inspect.isawaitable(written):
            # The event loop keeps only a weak reference to a task.
            task = asyncio.ensure_future(written)
            self._writes.add(task)
            task.add_done_callback(self._writes.discard)

    def _send_handler_result(self, future: Any, *, msg_id: Any) -> None:
        # pygls logs a traceback for every error answer; one the handler raised on purpose
        # (a closed document, a cancelled wait) is routine work, not a problem.
        if not future.cancelled() and isinstance(error := future.exception(), JsonRpcException):
            self._request_futures.pop(msg_id, None)
            logger.info("request %s answered with error %s: %s", msg_id, error.code, error.message)
            self._send_response(msg_id, error=error.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        # Clients cancel requests already answered all the time (VS Code its code actions).
        future = self._request_futures.pop(msg_id, None)
        if future is None:
            logger.debug("cancel for request %s, already answered", msg_id)
        elif future.cancel():
            logger.debug("request %s cancelled", msg_id)

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any):
        """pygls' own, over a copy of the pending requests: cancelling a request runs its
        done callback at once, which takes it out of the dict pygls iterates, and the
        ``shutdown`` (a token map or training running) was answered -32603."""
        if (handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield handler, args, None
        current = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current and not future.done():
                future.cancel()
        self._shutdown = True

    # Document lifecycle: the registered handler only (pygls' own would fill its workspace).

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None
