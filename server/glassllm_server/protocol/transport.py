"""Serving over stdio or TCP with the event loop reading the connection itself.

pygls reads stdin on a worker thread, one ``run_in_executor`` per header line and body:
while the event loop is busy tokenizing, every message then waits for the GIL several
times (~100 ms). A pipe read by the loop waits at most one slice of background work.

Both transports read with :func:`~glassllm_server.protocol.framing.serve_messages`, and
read the client's next message only once ``settled()`` returns: once the tokenizers the
settings asked for are loaded, or after a short grace (see :mod:`glassllm_server.loads`).

Over TCP (``glassllm-lsp --tcp``) the server serves one client: the first connection.
Another one, while it is connected, gets its first request answered -32600 with a
sentence that says so, and is closed. When the client leaves, the server ends, as it
does over stdio: one server, one editor session.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, BinaryIO

from pygls.io_ import StdinAsyncReader, StdoutWriter
from pygls.lsp.server import LanguageServer

from glassllm_server.messages import Messages, choose_locale
from glassllm_server.protocol.framing import INVALID_REQUEST, serve_messages
from glassllm_server.protocol.glass_protocol import GlassProtocol

__all__ = ["serve_stdio", "serve_tcp"]

logger = logging.getLogger(__name__)

# What a refused TCP client may send before its answer: one initialize, read for its id.
_REFUSED_BODY = 1 << 20
_REFUSED_SECONDS = 5.0


class _WhenSettled:
    """A reader that reads the next line only once ``settled()`` has returned."""

    def __init__(self, reader: Any, settled: Callable[[], Awaitable[None]]) -> None:
        self._reader = reader
        self._settled = settled

    async def readline(self) -> bytes:
        await self._settled()
        return await self._reader.readline()

    async def readexactly(self, n: int) -> bytes:
        return await self._reader.readexactly(n)


# What the client's next message waits for (see above).
Settled = Callable[[], Awaitable[None]]


def _run(server: LanguageServer, serve: Coroutine[Any, Any, int]) -> int:
    """Run ``serve`` to its end; the process's exit status: ``serve``'s, or LSP's when the
    client sent ``exit`` (0 after ``shutdown``, 1 without)."""
    status = 0
    try:
        status = asyncio.run(serve)
    except BrokenPipeError:
        logger.error("The connection to the client is lost: shutting down.")
        status = 1
    except KeyboardInterrupt:
        status = 1
    except SystemExit as exit_:
        # pygls' exit handler raises it with LSP's status.
        status = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        server.shutdown()
    return status


def serve_stdio(
    server: LanguageServer,
    protocol: GlassProtocol,
    settled: Settled,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> int:
    """Serve ``server`` (whose protocol is ``protocol``) over stdin/stdout until the
    client exits or the pipe breaks; returns the process's exit status."""
    stop = server._stop_event = threading.Event()
    protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    return _run(server, _serve_stdio(server, protocol, settled, stop, stdin or sys.stdin.buffer))


async def _serve_stdio(
    server: LanguageServer, protocol: GlassProtocol, settled: Settled, stop: threading.Event, stdin: BinaryIO
) -> int:
    loop = asyncio.get_running_loop()
    reader: Any = asyncio.StreamReader()
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    except (OSError, ValueError):
        # Not a pipe or a socket (a regular file, say): pygls' threaded reader.
        reader = StdinAsyncReader(stdin, server.thread_pool)
    await _serve_client(server, protocol, settled, stop, reader)
    return 0


async def _serve_client(
    server: LanguageServer, protocol: GlassProtocol, settled: Settled, stop: threading.Event, reader: Any
) -> None:
    try:
        await serve_messages(_WhenSettled(reader, settled), protocol, stop, server.report_server_error)
    except asyncio.IncompleteReadError:
        logger.error("The client closed the connection in the middle of a message.")


def serve_tcp(server: LanguageServer, protocol: GlassProtocol, settled: Settled, host: str, port: int) -> int:
    """Serve one client of ``server`` (whose protocol is ``protocol``) on ``host:port``
    until it exits or leaves; returns the process's exit status."""
    stop = server._stop_event = threading.Event()
    return _run(server, _serve_tcp(server, protocol, settled, stop, host, port))


async def _serve_tcp(
    server: LanguageServer, protocol: GlassProtocol, settled: Settled, stop: threading.Event, host: str, port: int
) -> int:
    ended: asyncio.Future[int] = asyncio.get_running_loop().create_future()  # the exit status
    connected = False

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connected
        if connected:
            await _refuse(reader, writer)
            return
        connected = True
        logger.info("a client connected from %s", writer.get_extra_info("peername"))
        protocol.set_writer(writer)
        status = 0
        try:
            await _serve_client(server, protocol, settled, stop, reader)
        except ConnectionError:
            logger.error("The connection to the client is lost: shutting down.")
            status = 1
        except Exception as error:  # the client's exit (a SystemExit) ends the loop itself
            ended.set_exception(error)
            return
        finally:
            writer.close()
        ended.set_result(status)

    listener = await asyncio.start_server(connection, host, port)
    logger.info("serving on %s", ", ".join(str(sock.getsockname()) for sock in listener.sockets))
    async with listener:
        return await ended


async def _refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answer a second client's first request with an error that says why, and close."""
    logger.warning("a second client connected from %s: refused", writer.get_extra_info("peername"))
    try:
        request = await asyncio.wait_for(_first_message(reader), _REFUSED_SECONDS)
        if isinstance(request, dict) and "id" in request:
            params = request.get("params")
            locale = choose_locale(params.get("locale") if isinstance(params, dict) else None, None)
            error = {"code": INVALID_REQUEST, "message": Messages(locale)("tcp.busy")}
            body = json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error}).encode("utf-8")
            writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            await writer.drain()
    except (TimeoutError, OSError, ValueError, asyncio.IncompleteReadError):
        pass  # nothing readable in time: closed without a word
    finally:
        writer.close()


async def _first_message(reader: asyncio.StreamReader) -> Any:
    """The first framed message's JSON value (None without a usable Content-Length)."""
    length = None
    while line := await reader.readline():
        if not line.strip():
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length" and value.strip().isdigit():
            length = int(value)
    if length is None or length > _REFUSED_BODY:
        return None
    return json.loads(await reader.readexactly(length))
