"""Train a tokenizer from the editor: ``glassllm.trainTokenizer [uri_or_folder, vocab_size,
output_path]``.

Training runs in a child process and reports ``window/workDoneProgress`` (percent of
merges done). Cancelling the progress, or the request, stops it before anything is
written (see :mod:`glassllm_server.training`). When it succeeds the server offers to
switch to the new tokenizer for this session. An output that exists and is not a glassllm
tokenizer file is replaced only when the user says yes to ``window/showMessageRequest``;
over TCP, both paths must lie inside the workspace (see :mod:`glassllm_server.confinement`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from glassllm.files import may_replace
from glassllm_server.confinement import check_inside
from glassllm_server.server import GlassServer, RequestFailed

__all__ = ["TRAIN_TOKENIZER", "register"]

logger = logging.getLogger(__name__)

TRAIN_TOKENIZER = "glassllm.trainTokenizer"

# How often the server checks for a cancellation while the child trains quietly.
_POLL_SECONDS = 0.05


def _path(ls: GlassServer, value: str) -> Path:
    """A file URI or a path; relative paths resolve against the workspace folder."""
    if "://" in value or value.startswith("file:"):
        local = to_fs_path(value)
        if local is None:
            raise ValueError(f"{value}: not a file URI")
        return Path(local)
    path = Path(value).expanduser()
    if not path.is_absolute() and ls.root_path is not None:
        path = ls.root_path / path
    return path


class _Progress:
    """``window/workDoneProgress`` for one training run, when the client supports it."""

    def __init__(self, ls: GlassServer) -> None:
        self.ls = ls
        self.token = f"glassllm-train-{uuid.uuid4()}"
        window = ls.client_capabilities.window
        self.enabled = window is not None and bool(window.work_done_progress)
        self.ended = False

    async def begin(self, message: str) -> None:
        if not self.enabled:
            return
        try:
            await self.ls.work_done_progress.create_async(self.token)
        except Exception:
            logger.warning("the client refused a progress token", exc_info=True)
            self.enabled = False
            return
        self.ls.work_done_progress.begin(
            self.token,
            types.WorkDoneProgressBegin(
                title=self.ls.messages("train.title"), cancellable=True, message=message, percentage=0
            ),
        )

    @property
    def cancelled(self) -> bool:
        future = self.ls.work_done_progress.tokens.get(self.token)
        return future is not None and future.cancelled()

    def report(self, percent: int, message: str) -> None:
        # A report still queued from the training thread must not follow the end.
        if self.enabled and not self.ended:
            self.ls.work_done_progress.report(
                self.token, types.WorkDoneProgressReport(percentage=percent, message=message)
            )

    def end(self, message: str) -> None:
        if self.enabled and not self.ended:
            self.ended = True
            self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
            self.ls.work_done_progress.tokens.pop(self.token, None)


async def _offer(ls: GlassServer, path: Path, done: str) -> None:
    """Ask whether to switch to the new tokenizer; switch when the user says so."""
    messages = ls.messages
    use, keep = messages("train.use"), messages("train.keep")
    try:
        answer = await ls.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Info,
                message=messages("train.offer", done=done, current=ls.tokenizer_label()),
                actions=[types.MessageActionItem(title=use), types.MessageActionItem(title=keep)],
            )
        )
    except Exception:
        logger.warning("the client did not answer the offer to switch tokenizers", exc_info=True)
        return
    if answer is None or answer.title != use:
        return
    if ls.use_tokenizer(str(path)):
        ls.switched_tokenizer = (ls.settings.tokenizer, str(path))
        ls.refresh_views()
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Info, message=messages("train.switched", path=path))
        )


async def _may_replace(ls: GlassServer, path: Path) -> bool:
    """Ask whether to replace ``path``, a file that is not a tokenizer: ``True`` on yes.
    Raises :class:`RequestFailed` when the client cannot ask (it answers with an error)."""
    messages = ls.messages
    replace = messages("train.replace_yes")
    try:
        answer = await ls.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Warning,
                message=messages("train.replace", path=path),
                actions=[
                    types.MessageActionItem(title=replace),
                    types.MessageActionItem(title=messages("train.replace_no")),
                ],
            )
        )
    except Exception as error:
        logger.warning("the client cannot ask whether to replace %s", path, exc_info=True)
        raise RequestFailed(messages("train.failed", problem=messages("train.cannot_ask", path=path))) from error
    return answer is not None and answer.title == replace


async def _run(
    text: str | None,
    source: Path | None,
    vocab_size: int,
    output: Path,
    progress: _Progress,
    cancelled: Callable[[], bool],
    replace: bool,
) -> dict[str, Any]:
    """Train in a child process (see :func:`glassllm_server.training.main`) and relay its
    progress; returns its last message. SIGTERM asks it to stop when ``cancelled()``."""
    messages = progress.ls.messages
    arguments = [str(vocab_size), str(output)] + ([] if source is None else [str(source)])
    if replace:
        arguments.append("--replace")
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "glassllm_server.training",
        *arguments,
        stdin=asyncio.subprocess.PIPE if text is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stopping = False
    last: dict[str, Any] = {}
    try:
        if text is not None:
            try:
                child.stdin.write(text.encode("utf-8"))
                await child.stdin.drain()
                child.stdin.close()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the child stopped early; its last line says why
        while True:
            if cancelled() and not stopping:
                stopping = True
                child.terminate()
            try:
                line = await asyncio.wait_for(child.stdout.readline(), _POLL_SECONDS)
            except TimeoutError:
                continue
            if not line:
                break
            last = json.loads(line)
            if "progress" in last:
                done, total = last["progress"]
                text_done = messages("train.progress", done=messages.integer(done), total=messages.integer(total))
                progress.report(100 if total <= 0 else done * 100 // total, text_done)
        errors = (await child.stderr.read()).decode("utf-8", "replace").strip()
        await child.wait()
    except BaseException:
        # The request itself was cancelled (or the server is going): stop the child.
        if child.returncode is None:
            child.terminate()
            await child.wait()
        raise
    if not {"done", "cancelled", "error"} & set(last):
        return {"error": errors.splitlines()[-1] if errors else f"training stopped (exit status {child.returncode})"}
    return last


def register(server: GlassServer) -> None:
    offers: set[asyncio.Task[None]] = set()

    @server.command(TRAIN_TOKENIZER)
    async def train(ls: GlassServer, source: str, vocab_size: int, output: str) -> dict[str, Any]:
        messages = ls.messages
        started = time.perf_counter()
        # pygls answers a $/cancelRequest for a command by cancelling this future of its
        # own without cancelling the handler: training watches the future instead.
        request = ls.protocol._request_futures.get(ls.protocol.msg_id)
        document = ls.documents.get(source)
        try:
            output_path = _path(ls, output)
            source_path = None if document is not None else _path(ls, source)
        except ValueError as error:
            raise RequestFailed(messages("train.failed", problem=error)) from error
        check_inside(ls, output_path)
        if source_path is not None:
            check_inside(ls, source_path)
        # Training never destroys a file: anything but a tokenizer is replaced on a yes only.
        replace = not may_replace(output_path)
        if replace and not await _may_replace(ls, output_path):
            return {"cancelled": True, "path": str(output_path)}

        progress = _Progress(ls)
        await progress.begin(messages("train.reading", source=source))

        def cancelled() -> bool:
            return progress.cancelled or (request is not None and request.cancelled())

        try:
            result = await _run(
                document.text if document is not None else None,
                source_path,
                vocab_size,
                output_path,
                progress,
                cancelled,
                replace,
            )
        except asyncio.CancelledError:
            progress.end(messages("train.cancelled", path=output_path))
            raise
        if "cancelled" in result:
            progress.end(messages("train.cancelled", path=output_path))
            return {"cancelled": True, "path": str(output_path)}
        if "error" in result:
            problem = messages("train.failed", problem=result["error"])
            progress.end(problem)
            raise RequestFailed(problem)
        trained = result["done"]
        files = trained["files"] or [to_fs_path(source) or source]
        seconds = time.perf_counter() - started
        done = messages(
            "train.done",
            path=output_path,
            size=messages.integer(trained["vocabSize"]),
            merges=messages.integer(trained["merges"]),
            files=messages.integer(len(files)),
            seconds=messages.decimal(seconds),
        )
        progress.end(done)
        offer = asyncio.ensure_future(_offer(ls, output_path, done))
        offers.add(offer)
        offer.add_done_callback(offers.discard)
        return {
            "cancelled": False,
            "path": str(output_path),
            "uri": output_path.as_uri(),
            **trained,
            "files": files,
            "seconds": round(seconds, 3),
        }
