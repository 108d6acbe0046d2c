"""Long commands in a child process, with ``window/workDoneProgress`` in the editor.

Training a tokenizer and mapping the workspace's tokens run in a child process (off the
event loop, which goes on answering requests; the child may use every core) that writes
one JSON object a line; :func:`relay` reads them, and stops the child with SIGTERM as
soon as the user cancels, from the progress (``window/workDoneProgress/cancel``) or the
request (``$/cancelRequest``). :class:`WorkProgress` is the progress the user sees.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import uuid
from asyncio.subprocess import Process
from collections.abc import Callable
from typing import Any, NamedTuple

from lsprotocol import types

from glassllm_server.client import Client

__all__ = ["ChildEnd", "WorkProgress", "relay", "run_child"]

logger = logging.getLogger(__name__)

# How often the server checks for a cancellation while the child works quietly.
_POLL_SECONDS = 0.05


class WorkProgress:
    """``window/workDoneProgress`` for one run, titled ``title``, when the client supports it."""

    def __init__(self, client: Client, title: str, kind: str) -> None:
        self.progress = client.progress
        self.title = title
        self.token = f"glassllm-{kind}-{uuid.uuid4()}"
        window = client.capabilities.window
        self.enabled = window is not None and bool(window.work_done_progress)
        self.ended = False

    async def begin(self, message: str) -> None:
        if not self.enabled:
            return
        try:
            await self.progress.create_async(self.token)
        except Exception:
            logger.warning("the client refused a progress token", exc_info=True)
            self.enabled = False
            return
        self.progress.begin(
            self.token,
            types.WorkDoneProgressBegin(title=self.title, cancellable=True, message=message, percentage=0),
        )

    @property
    def cancelled(self) -> bool:
        future = self.progress.tokens.get(self.token)
        return future is not None and future.cancelled()

    def report(self, percent: int, message: str) -> None:
        # Nothing may follow the end: the client has let the token go.
        if self.enabled and not self.ended:
            self.progress.report(self.token, types.WorkDoneProgressReport(percentage=percent, message=message))

    def end(self, message: str) -> None:
        if self.enabled and not self.ended:
            self.ended = True
            self.progress.end(self.token, types.WorkDoneProgressEnd(message=message))
            self.progress.tokens.pop(self.token, None)


async def relay(
    child: Process, seen: Callable[[dict[str, Any]], None], cancelled: Callable[[], bool]
) -> dict[str, Any]:
    """Read the child's JSON lines to the end, handing each to ``seen``; returns the last
    one. The child gets SIGTERM once ``cancelled()``."""
    stopping = False
    last: dict[str, Any] = {}
    if child.stdout is None:
        return last
    while True:
        if cancelled() and not stopping:
            stopping = True
            child.terminate()
        try:
            line = await asyncio.wait_for(child.stdout.readline(), _POLL_SECONDS)
        except TimeoutError:
            continue
        if not line:
            return last
        last = json.loads(line)
        seen(last)


class ChildEnd(NamedTuple):
    """How a child ended: its last JSON line, the last line of its standard error, its
    exit status."""

    last: dict[str, Any]
    error: str
    status: int | None


async def run_child(
    module: str,
    arguments: list[str],
    data: bytes | None,
    seen: Callable[[dict[str, Any]], None],
    cancelled: Callable[[], bool],
) -> ChildEnd:
    """Run ``python -m module arguments`` with ``data`` on its standard input (none when
    None) and :func:`relay` its lines; the child is stopped if this is cancelled (the
    request, or the server going)."""
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        module,
        *arguments,
        stdin=asyncio.subprocess.DEVNULL if data is None else asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        if data is not None and child.stdin is not None:
            await _feed(child.stdin, data)
        last = await relay(child, seen, cancelled)
        errors = (await child.stderr.read()).decode("utf-8", "replace").strip() if child.stderr else ""
        await child.wait()
    except BaseException:
        if child.returncode is None:
            child.terminate()
            await child.wait()
        raise
    return ChildEnd(last, errors.splitlines()[-1] if errors else "", child.returncode)


async def _feed(stdin: asyncio.StreamWriter, data: bytes) -> None:
    try:
        stdin.write(data)
        await stdin.drain()
        stdin.close()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the child stopped early; its last line says why
