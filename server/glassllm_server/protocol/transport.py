"""Serving over stdio with the event loop reading the pipe itself.

pygls reads stdin on a worker thread, one ``run_in_executor`` per header line and body:
while the event loop is busy tokenizing, every message then waits for the GIL several
times (~100 ms). A pipe read by the loop waits at most one slice of background work.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from typing import TYPE_CHECKING, Any, BinaryIO

from pygls.io_ import StdinAsyncReader, StdoutWriter

from glassllm_server.protocol.framing import serve_messages

if TYPE_CHECKING:
    from glassllm_server.server import GlassServer

__all__ = ["serve_stdio"]

logger = logging.getLogger(__name__)


def serve_stdio(server: GlassServer, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
    """Serve ``server`` over stdin/stdout until the client exits or the pipe breaks.

    Returns the process's exit status: LSP's ``exit`` gives 0 after ``shutdown``, 1 without.
    """
    stop = server._stop_event = threading.Event()
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    status = 0
    try:
        asyncio.run(_serve(server, stop, stdin or sys.stdin.buffer))
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


async def _serve(server: GlassServer, stop: threading.Event, stdin: BinaryIO) -> None:
    loop = asyncio.get_running_loop()
    reader: Any = asyncio.StreamReader()
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    except (OSError, ValueError):
        # Not a pipe or a socket (a regular file, say): pygls' threaded reader.
        reader = StdinAsyncReader(stdin, server.thread_pool)
    try:
        await serve_messages(reader, server.protocol, stop, server.report_server_error)
    except asyncio.IncompleteReadError:
        logger.error("The client closed the connection in the middle of a message.")
