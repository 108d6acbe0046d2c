"""Train a tokenizer from the editor: ``glassllm.trainTokenizer [uri_or_folder, vocab_size,
output_path]``.

Training runs on a worker thread and reports ``window/workDoneProgress`` (percent of
merges done). Cancelling the progress, or the request, stops it before anything is
written (see :mod:`glassllm_server.training`). When it succeeds the server offers to
switch to the new tokenizer for this session.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from glassllm_server.server import GlassServer, RequestFailed
from glassllm_server.training import Percent, TrainingCancelled, TrainingSource, gather_text, train_tokenizer

__all__ = ["TRAIN_TOKENIZER", "register"]

logger = logging.getLogger(__name__)

TRAIN_TOKENIZER = "glassllm.trainTokenizer"


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
        ls.refresh_views()
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Info, message=messages("train.switched", path=path))
        )


def register(server: GlassServer) -> None:
    offers: set[asyncio.Task[None]] = set()

    @server.command(TRAIN_TOKENIZER)
    async def train(ls: GlassServer, source: str, vocab_size: int, output: str) -> dict[str, Any]:
        messages = ls.messages
        started = time.perf_counter()
        # pygls answers a $/cancelRequest for a command by cancelling this future of its
        # own without cancelling the handler: training watches the future instead.
        request = ls.protocol._request_futures.get(ls.protocol.msg_id)
        try:
            output_path = _path(ls, output)
            document = ls.documents.get(source)
            if document is not None:
                corpus = TrainingSource(document.text, [Path(to_fs_path(source) or source)], [])
            else:
                corpus = await asyncio.to_thread(gather_text, _path(ls, source))
        except (OSError, ValueError) as error:
            raise RequestFailed(messages("train.failed", problem=error)) from error

        progress = _Progress(ls)
        await progress.begin(messages("train.reading", source=source))
        loop = asyncio.get_running_loop()
        stop = threading.Event()
        percent = Percent()

        def report(done: int, total: int) -> None:
            # Called on the training thread after each merge.
            if (value := percent(done, total)) is not None:
                text = messages("train.progress", done=messages.integer(done), total=messages.integer(total))
                loop.call_soon_threadsafe(progress.report, value, text)

        def cancelled() -> bool:
            return stop.is_set() or progress.cancelled or (request is not None and request.cancelled())

        try:
            tok = await asyncio.to_thread(train_tokenizer, corpus.text, vocab_size, output_path, report, cancelled)
        except asyncio.CancelledError:
            # $/cancelRequest: the thread stops at its next merge, before writing.
            stop.set()
            progress.end(messages("train.cancelled", path=output_path))
            raise
        except TrainingCancelled:
            progress.end(messages("train.cancelled", path=output_path))
            return {"cancelled": True, "path": str(output_path)}
        except (OSError, ValueError) as error:
            progress.end(messages("train.failed", problem=error))
            raise RequestFailed(messages("train.failed", problem=error)) from error
        seconds = time.perf_counter() - started
        done = messages(
            "train.done",
            path=output_path,
            size=messages.integer(tok.vocab_size),
            merges=messages.integer(len(tok.merges)),
            files=messages.integer(len(corpus.files)),
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
            "vocabSize": tok.vocab_size,
            "alphabet": len(tok.alphabet),
            "merges": len(tok.merges),
            "files": [str(path) for path in corpus.files],
            "skipped": [str(path) for path in corpus.skipped],
            "seconds": round(seconds, 3),
        }
