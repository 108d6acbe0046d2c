"""LSP's base protocol: reading framed JSON-RPC messages off a byte stream.

Replaces pygls' reader loop, which matches ``Content-Length: N\\r\\n`` byte for byte (a
lowercase ``content-length:`` is not recognized, and the next message is lost with it),
takes any length it is given, and answers a body that is not JSON with nothing. Here:

- header names are case-insensitive, other headers are read and ignored;
- a body may have at most :data:`MAX_BODY` bytes: a larger one is skipped in chunks
  (never held in memory) and answered -32600 Invalid Request with ``id: null``;
- a body that is not JSON (or not UTF-8) is answered -32700 Parse error with ``id: null``,
  a JSON value that is not a message -32600; the connection goes on with the next message.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcException

if TYPE_CHECKING:
    import threading

    from pygls.io_ import AsyncReader

    from glassllm_server.protocol.glass_protocol import GlassProtocol

__all__ = ["INVALID_REQUEST", "MAX_BODY", "PARSE_ERROR", "serve_messages"]

logger = logging.getLogger(__name__)

MAX_BODY = 64 * 1024 * 1024  # bytes: a document of tens of MB still fits, /dev/zero does not
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
_SKIP_CHUNK = 1024 * 1024


class _Header:
    """What a block of header lines said: the body's length, or why it cannot be read."""

    def __init__(self, length: int | None = None, problem: str | None = None) -> None:
        self.length = length
        self.problem = problem


async def _read_header(reader: AsyncReader) -> _Header | None:
    """The next header block (None at the end of the stream)."""
    header = _Header()
    seen_any = False
    while True:
        try:
            line = await reader.readline()
        except ValueError:  # a line longer than the stream's limit
            header.problem = "a header line too long"
            seen_any = True
            continue
        if not line:
            return None
        if not line.strip():
            if seen_any:
                return header
            continue  # blank lines between messages
        seen_any = True
        name, colon, value = line.decode("ascii", errors="replace").partition(":")
        if colon and name.strip().lower() == "content-length":
            text = value.strip()
            if text.isdigit():
                header.length = int(text)
            else:
                header.problem = f"Content-Length {text[:20]!r} is not a number"


async def _skip(reader: AsyncReader, length: int) -> None:
    while length > 0:
        chunk = min(length, _SKIP_CHUNK)
        await reader.readexactly(chunk)
        length -= chunk


async def serve_messages(
    reader: AsyncReader,
    protocol: GlassProtocol,
    stop: threading.Event,
    on_error: Callable[[Exception, Any], Any],
) -> None:
    """Read messages and hand them to ``protocol`` until ``stop`` is set or the stream ends."""
    while not stop.is_set():
        header = await _read_header(reader)
        if header is None:
            return
        if header.length is None:
            logger.warning("a message without a valid Content-Length header (%s): skipped", header.problem or "none")
            continue
        if header.length > MAX_BODY:
            logger.warning("a message of %d bytes, over the %d MB limit: skipped", header.length, MAX_BODY >> 20)
            await _skip(reader, header.length)
            protocol.answer_unidentified(INVALID_REQUEST, f"message larger than {MAX_BODY >> 20} MB")
            continue
        body = await reader.readexactly(header.length)
        _handle_body(body, protocol, on_error)


def _handle_body(body: bytes, protocol: GlassProtocol, on_error: Callable[[Exception, Any], Any]) -> None:
    try:
        message = json.loads(body, object_hook=protocol.structure_message)
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError alike
        logger.warning("a message that is not JSON: %s", error)
        protocol.answer_unidentified(PARSE_ERROR, f"Parse error: {error}")
        return
    if message is None or isinstance(message, (dict, list, str, int, float)):
        logger.warning("a JSON value that is not a JSON-RPC message: skipped")
        protocol.answer_unidentified(INVALID_REQUEST, "not a JSON-RPC 2.0 message")
        return
    try:
        protocol.handle_message(message)
    except Exception as error:
        logger.exception("Unable to handle message")
        on_error(error, JsonRpcException)
