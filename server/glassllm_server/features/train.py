"""Train a tokenizer from the editor: ``glassllm.trainTokenizer [uri_or_folder, vocab_size,
output_path]``.

Training runs in a child process and reports ``window/workDoneProgress`` (percent of
merges done). Cancelling the progress, or the request, stops it before anything is
written (see :mod:`glassllm_server.training`). When it succeeds the server offers to
switch to the new tokenizer for this session. An output that exists and is not a glassllm
tokenizer file is replaced only when the user says yes to ``window/showMessageRequest``;
over TCP, both paths must lie inside the workspace, and so must every file read from a
folder (see :mod:`glassllm_server.confinement`).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from lsprotocol import types
from pygls.uris import to_fs_path

from glassllm.formats.files import may_replace
from glassllm.shown.problems import describe
from glassllm_server.client import Client
from glassllm_server.commands import Command
from glassllm_server.feature import Feature, on_command
from glassllm_server.messages import Messages
from glassllm_server.progress import WorkProgress, run_child
from glassllm_server.protocol.errors import RequestFailed
from glassllm_server.server import GlassServer
from glassllm_server.session import Session
from glassllm_server.training import check_unicode

__all__ = ["TrainTokenizer"]

logger = logging.getLogger(__name__)


def _path(session: Session, value: str) -> Path:
    """A file URI or a path; relative paths resolve against the workspace folder."""
    if "://" in value or value.startswith("file:"):
        local = to_fs_path(value)
        if local is None:
            messages = session.messages
            raise RequestFailed(messages("train.failed", problem=messages("train.not_file_uri", uri=value)))
        return Path(local)
    path = Path(value).expanduser()
    if not path.is_absolute() and session.root_path is not None:
        path = session.root_path / path
    return path


async def _may_replace(client: Client, messages: Messages, path: Path) -> bool:
    """Ask whether to replace ``path``, a file that is not a tokenizer: ``True`` on yes.
    Raises :class:`RequestFailed` when the client cannot ask (it answers with an error)."""
    replace = messages("train.replace_yes")
    try:
        answer = await client.ask(
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


class _Job(NamedTuple):
    """One training run: what to train on, how large, where to write."""

    text: str | None  # an open document's text, or None to read ``source``
    source: Path | None
    vocab_size: int
    output: Path
    replace: bool  # the user said yes to replacing a file that is not a tokenizer
    inside: tuple[Path, ...] | None  # over TCP: files of a folder are read only if inside these


async def _run(job: _Job, progress: WorkProgress, messages: Messages, cancelled: Callable[[], bool]) -> dict[str, Any]:
    """Train in a child process (see :func:`glassllm_server.training.main`) and relay its
    progress; returns its last message. SIGTERM asks it to stop when ``cancelled()``."""
    arguments = [str(job.vocab_size), str(job.output), "--locale", messages.locale]
    arguments += ([] if job.source is None else [str(job.source)]) + (["--replace"] if job.replace else [])
    for folder in job.inside or ():
        arguments += ["--inside", str(folder)]
    data = None if job.text is None else job.text.encode("utf-8")
    end = await run_child("glassllm_server.training", arguments, data, _reported(progress, messages), cancelled)
    if not {"done", "cancelled", "error"} & set(end.last):
        if cancelled() and end.status == -signal.SIGTERM:
            # Asked to stop before the child installed its handler: still a cancel.
            return {"cancelled": True}
        return {"error": end.error or messages("train.stopped", status=end.status)}
    return end.last


def _reported(progress: WorkProgress, messages: Messages) -> Callable[[dict[str, Any]], None]:
    """What to do with each of the child's lines: report its progress in percent of merges."""

    def seen(line: dict[str, Any]) -> None:
        if "progress" in line:
            done, total = line["progress"]
            text_done = messages("train.progress", done=messages.integer(done), total=messages.integer(total))
            progress.report(100 if total <= 0 else done * 100 // total, text_done)

    return seen


class TrainTokenizer(Feature):
    def __init__(self, server: GlassServer) -> None:
        super().__init__(server)
        self.offers: set[asyncio.Task[None]] = set()  # the event loop keeps only weak references

    @on_command(Command.TRAIN_TOKENIZER)
    async def train(self, source: str, vocab_size: int, output: str) -> dict[str, Any]:
        messages = self.session.messages
        started = time.perf_counter()
        # pygls answers a $/cancelRequest for a command by cancelling this future of its
        # own without cancelling the handler: training watches the future instead.
        request = self.client.current_request()
        job = await self.job(source, vocab_size, output)
        if job is None:
            return {"cancelled": True, "path": str(_path(self.session, output))}
        progress = WorkProgress(self.client, messages("train.title"), "train")
        await progress.begin(messages("train.reading", source=source))
        try:
            result = await _run(
                job, progress, messages, lambda: progress.cancelled or (request is not None and request.cancelled())
            )
        except asyncio.CancelledError:
            progress.end(messages("train.cancelled", path=job.output))
            raise
        if "cancelled" in result:
            progress.end(messages("train.cancelled", path=job.output))
            return {"cancelled": True, "path": str(job.output)}
        if "error" in result:
            problem = messages("train.failed", problem=result["error"])
            progress.end(problem)
            raise RequestFailed(problem)
        return self.trained(source, job.output, result["done"], time.perf_counter() - started, progress)

    async def job(self, source: str, vocab_size: int, output: str) -> _Job | None:
        """The run the command asks for, its paths checked; None when the user would not
        have a file that is not a tokenizer replaced."""
        session = self.session
        snapshot = session.find_snapshot(source)  # an open document: its text as the request found it
        output_path = _path(session, output)
        source_path = None if snapshot is not None else _path(session, source)
        session.check_inside(output_path)
        if source_path is not None:
            session.check_inside(source_path)
        # Training never destroys a file: anything but a tokenizer is replaced on a yes only.
        replace = not may_replace(output_path)
        if replace and not await _may_replace(self.client, session.messages, output_path):
            return None
        text = None if snapshot is None else snapshot.document.text
        if text is not None:
            try:
                check_unicode(text)
            except ValueError as error:
                problem = describe(error, session.locale)
                raise RequestFailed(session.messages("train.failed", problem=problem)) from error
        return _Job(text, source_path, vocab_size, output_path, replace, session.confined_to)

    def trained(
        self, source: str, output: Path, trained: dict[str, Any], seconds: float, progress: WorkProgress
    ) -> dict[str, Any]:
        """End the progress, offer the new tokenizer, and answer the command."""
        messages = self.session.messages
        files = trained["files"] or [to_fs_path(source) or source]
        done = messages(
            "train.done",
            path=output,
            size=messages.integer(trained["vocabSize"]),
            merges=messages.integer(trained["merges"]),
            files=messages.integer(len(files)),
            seconds=messages.decimal(seconds),
        )
        progress.end(done)
        offer = asyncio.ensure_future(self.offer(output, done))
        self.offers.add(offer)
        offer.add_done_callback(self.offers.discard)
        return {
            "cancelled": False,
            "path": str(output),
            "uri": output.as_uri(),
            **trained,
            "files": files,
            "seconds": round(seconds, 3),
        }

    async def offer(self, path: Path, done: str) -> None:
        """Ask whether to switch to the new tokenizer; switch when the user says so."""
        messages, tokenizers = self.session.messages, self.tokenizers
        use, keep = messages("train.use"), messages("train.keep")
        try:
            answer = await self.client.ask(
                types.ShowMessageRequestParams(
                    type=types.MessageType.Info,
                    message=messages("train.offer", done=done, current=tokenizers.label()),
                    actions=[types.MessageActionItem(title=use), types.MessageActionItem(title=keep)],
                )
            )
        except Exception:
            logger.warning("the client did not answer the offer to switch tokenizers", exc_info=True)
            return
        if answer is None or answer.title != use:
            return
        if await tokenizers.use(str(path)):
            tokenizers.switched = (self.session.settings.tokenizer, str(path))
            tokenizers.refresh_views()
            self.client.show(messages("train.switched", path=path))
