"""The pygls internals the protocol layer relies on, pinned: these fail loudly when pygls
changes them. Above all the one override that matters, ``_handle_request`` (in
``glassllm_server.protocol.arrival``): every request sees its snapshot.

The pipelining and robustness tests check the same behaviour end to end; these say *why*
it broke.
"""

from __future__ import annotations

import asyncio
import copy
import inspect

from lsprotocol import types
from pygls.protocol import JsonRPCProtocol, LanguageServerProtocol

from glassllm_server.protocol.arrival import SnapshotsAtArrival
from glassllm_server.server import GlassServer
from glassllm_server.workspace import documents_at_arrival


def test_pygls_still_has_the_private_method_with_the_signature_we_override():
    method = LanguageServerProtocol._handle_request
    assert list(inspect.signature(method).parameters) == ["self", "msg_id", "method_name", "params"]
    assert list(inspect.signature(SnapshotsAtArrival._handle_request).parameters) == list(
        inspect.signature(method).parameters
    )
    # pygls must still run it inside a copy of the context made for each message, and
    # create the handler's task there: that is what carries the snapshots to the handler.
    source = inspect.getsource(JsonRPCProtocol.handle_message)
    assert "copy_context()" in source
    assert "ctx.run(self._handle_request" in source


def test_the_other_private_names_the_protocol_uses_still_exist():
    # Overridden (a quiet answer to routine errors, raw JSON results, cancels, finished
    # notifications' futures dropped) or read.
    names = (
        "_send_response",
        "_send_data",
        "_send_handler_result",
        "_handle_cancel_notification",
        "_handle_notification",
    )
    for name in names:
        assert callable(getattr(JsonRPCProtocol, name, None)), name
    server = GlassServer()
    # _shutdown: the lifecycle refuses requests after shutdown by it.
    for name in ("_request_futures", "_result_types", "_shutdown", "msg_id", "writer"):
        assert hasattr(server.protocol, name), name
    assert list(inspect.signature(JsonRPCProtocol._send_handler_result).parameters) == ["self", "future", "msg_id"]
    assert list(inspect.signature(JsonRPCProtocol._handle_notification).parameters) == ["self", "method_name", "params"]


async def test_a_request_sees_its_snapshot_whatever_changes_before_it_runs():
    server = GlassServer()
    protocol = server.protocol
    protocol._initialize_arrived = True  # past initialize: requests before it are refused
    answers: list[tuple[object, object, object]] = []
    protocol._send_response = lambda msg_id, result=None, error=None: answers.append((msg_id, result, error))  # type: ignore[method-assign]
    uri = "file:///arrival.txt"
    server.session.open_documents.open(uri, "before", 1, server.tokenizers.in_use)

    @server.feature("glassllm/testText")
    async def text(ls: GlassServer, params: object) -> str:
        assert documents_at_arrival() is not None
        return ls.session.snapshot(uri).document.text

    request = {"jsonrpc": "2.0", "id": 1, "method": "glassllm/testText", "params": {}}
    protocol.handle_message(protocol.structure_message(request))
    # Read after the request, applied before its handler runs.
    change = types.TextDocumentContentChangeWholeDocument(text="after")
    server.session.open_documents.apply_changes(uri, 2, [change], "utf-16")
    while not answers:
        await asyncio.sleep(0)
    assert answers == [(1, "before", None)]
    live = server.session.open_documents.get(uri)
    assert live is not None and live.text == "after"
    assert documents_at_arrival() is None  # outside a request: the live documents


def test_custom_params_arrive_as_pygls_makes_them_with_one_class_per_shape():
    from pygls.protocol import _dict_to_object

    from glassllm_server.protocol.glass_protocol import as_objects

    shapes = [
        {"textDocument": {"uri": "file:///a.txt"}, "range": {"start": {"line": 1, "character": 2}}},
        {"items": [{"a": 1}, 2, None, [{"b": "x"}]], "class": 1, "1x": 2, "_y": 3},
        {"type_name": "Thing", "inner": {"b": 1}},
        {},
        None,
        [1, {"a": 1}],
        "text",
    ]
    for value in shapes:
        ours, pygls = as_objects(copy.deepcopy(value)), _dict_to_object(copy.deepcopy(value))
        assert ours == pygls
        assert type(ours).__name__ == type(pygls).__name__
        assert getattr(ours, "_fields", None) == getattr(pygls, "_fields", None)
    protocol = GlassServer().protocol
    arrived = [
        protocol.structure_message(
            {"jsonrpc": "2.0", "id": number, "method": "glassllm/stats", "params": copy.deepcopy(shapes[0])}
        ).params
        for number in (1, 2)
    ]
    assert arrived[0] == arrived[1] == _dict_to_object(copy.deepcopy(shapes[0]))
    assert type(arrived[0]) is type(arrived[1])
    assert type(arrived[0].textDocument) is type(arrived[1].textDocument)
