"""Runs a language server for ALE, adding UTF-8 to the position encodings ALE offers.

ALE 3.3 counts an LSP position's ``character`` in bytes (Vim's columns) but announces no
position encoding, so a server counts UTF-16 units and the two disagree after any
character outside ASCII. This relay starts the server given as its arguments, adds
``"general": {"positionEncodings": ["utf-8"]}`` to the capabilities of ALE's
``initialize`` request, and then copies every byte unchanged in both directions: the
server, which supports UTF-8, then counts as ALE does.

Usage: python3 glassllm_utf8.py SERVER [ARGUMENT...]
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import threading
from typing import IO, cast


def read_message(stream: io.BufferedReader) -> tuple[bytes, bytes] | None:
    """One message's header block and body, or None at the end of the stream."""
    header = b""
    while not header.endswith(b"\r\n\r\n"):
        byte = stream.read(1)
        if not byte:
            return None
        header += byte
    length = 0
    for line in header.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    return header, stream.read(length)


def with_utf8(body: bytes) -> bytes:
    """``body`` with UTF-8 first among its position encodings if it is ``initialize``."""
    try:
        message = json.loads(body)
    except ValueError:
        return body
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return body
    capabilities = message.setdefault("params", {}).setdefault("capabilities", {})
    general = capabilities.setdefault("general", {})
    offered = [encoding for encoding in general.get("positionEncodings", []) if encoding != "utf-8"]
    general["positionEncodings"] = ["utf-8", *offered]
    return json.dumps(message, ensure_ascii=False).encode("utf-8")


def relay_to_server(source: io.BufferedReader, server: IO[bytes]) -> None:
    """ALE's messages to the server: the first one (initialize) amended, the rest as they come."""
    try:
        first = read_message(source)
        if first is not None:
            body = with_utf8(first[1])
            server.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            server.flush()
            while chunk := source.read1(65536):
                server.write(chunk)
                server.flush()
    except OSError:
        pass  # the server is gone: its exit ends the relay
    finally:
        with contextlib.suppress(OSError):
            server.close()


def main(command: list[str]) -> int:
    if not command:
        sys.stderr.write(__doc__ or "")
        return 2
    try:
        server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    except OSError as error:
        sys.stderr.write(f"glassllm_utf8: cannot start {command[0]}: {error}\n")
        return 127
    assert server.stdin is not None and server.stdout is not None
    source = cast(io.BufferedReader, sys.stdin.buffer)
    threading.Thread(target=relay_to_server, args=(source, server.stdin), daemon=True).start()
    output, answers = sys.stdout.buffer, cast(io.BufferedReader, server.stdout)
    while chunk := answers.read1(65536):
        output.write(chunk)
        output.flush()
    return server.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
