"""A tokenizer file that takes seconds to arrive, for the tests of what happens when the
server's load of a file outlasts the moment requests wait for it (``GRACE_SECONDS``).

It is a FIFO that a thread writes the file into a piece at a time, the first piece at
once and the others only once a reader has taken it: however long an editor takes to
start the server, the load lasts as long as the writing from the moment the server starts
reading. The server's reader waits for each piece (it gives up only on a pipe silent for
5 s, far longer than the pauses here).
"""

from __future__ import annotations

import fcntl
import os
import struct
import termios
import threading
import time
from pathlib import Path

__all__ = ["slow_pipe"]

# How long the writer waits for a reader before it gives up and closes the FIFO.
READER_TIMEOUT = 180.0


def _unread(descriptor: int) -> int:
    """How many bytes written to the pipe no reader has taken yet."""
    return struct.unpack("i", fcntl.ioctl(descriptor, termios.FIONREAD, b"\0\0\0\0"))[0]


def slow_pipe(path: Path, content: bytes, seconds: float, pieces: int = 12) -> threading.Thread:
    """Make ``path`` a FIFO and write ``content`` into it in ``pieces`` pieces: the first
    now, the rest spread over ``seconds`` from the moment a reader has taken the first;
    then close it. The thread doing so is returned. The FIFO has its writer from the
    start, so a reader that opens it waits for the pieces (a FIFO with no writer is
    refused at once)."""
    os.mkfifo(path)
    writer = os.open(path, os.O_RDWR)
    step = -(-len(content) // pieces)

    def write() -> None:
        try:
            os.write(writer, content[:step])
            deadline = time.monotonic() + READER_TIMEOUT
            while _unread(writer) and time.monotonic() < deadline:
                time.sleep(0.02)
            for start in range(step, len(content), step):
                time.sleep(seconds / (pieces - 1))
                os.write(writer, content[start : start + step])
        finally:
            os.close(writer)

    thread = threading.Thread(target=write, name=f"slow pipe {path.name}", daemon=True)
    thread.start()
    return thread
