"""The token map of the workspace: the ``glassllm.tokenMap`` command.

For the open workspace folders, the page ``glassllm tokens FOLDER… --html`` writes
(:mod:`glassllm.shown.tokens_page`): the folder tree sized by tokens, each file's count,
share and budget, the files not counted with their reason. Files are listed as
``glassllm tokens`` lists them (git's own ``.gitignore`` reading in a git work tree) and
counted by the library in a child process (:mod:`glassllm_server.token_map`) with the
tokenizer in use, plus any tokenizer a file's budget counts with (the budgets the editor
applies: the settings', else the repository's). It reports ``window/workDoneProgress``
(bytes tokenized) and is cancelled from the progress or the request, as training is. The
page goes to the cache folder and opens in a browser (``window/showDocument`` with
``external``), else a message gives its path.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pygls.uris import to_fs_path

from glassllm import PACKAGED
from glassllm.budgets import Budget
from glassllm.file_tokens import Found, find_files
from glassllm.shown.problems import describe
from glassllm.shown.tokens_page import tokens_page
from glassllm_server.commands import Command
from glassllm_server.feature import Feature, on_command
from glassllm_server.messages import Messages
from glassllm_server.page_files import cache_folder, tokens_page_name, write_html_page
from glassllm_server.pages import show_in_browser
from glassllm_server.progress import WorkProgress, run_child
from glassllm_server.protocol.errors import RequestFailed
from glassllm_server.token_map import counting_job, file_rows, shown_path

__all__ = ["TokenMap"]

logger = logging.getLogger(__name__)

# The server gives the event loop back after looking up this many files' budgets.
_BUDGETS_AT_ONCE = 200


def _reported(progress: WorkProgress, messages: Messages) -> Callable[[dict[str, Any]], None]:
    def seen(line: dict[str, Any]) -> None:
        if "progress" in line:
            done, total = line["progress"]
            text = messages("map.progress", done=messages.integer(done), total=messages.integer(total))
            progress.report(100 if total <= 0 else done * 100 // total, text)

    return seen


async def _count(
    job: bytes, progress: WorkProgress, messages: Messages, cancelled: Callable[[], bool]
) -> dict[str, Any]:
    """Count in the child (see :mod:`glassllm_server.token_map`); its last line, or
    ``{"cancelled": True}``, or ``{"error": …}`` when it stopped without one."""
    end = await run_child("glassllm_server.token_map", [], job, _reported(progress, messages), cancelled)
    if "done" in end.last or "error" in end.last:
        return end.last
    if cancelled():
        return {"cancelled": True}
    return {"error": end.error or messages("map.stopped", status=end.status)}


class TokenMap(Feature):
    @on_command(Command.TOKEN_MAP)
    async def token_map(self) -> dict[str, Any]:
        messages = self.session.messages
        # As training: a $/cancelRequest cancels pygls' future of the request, not the handler.
        request = self.client.current_request()
        folders = self.folders()
        progress = WorkProgress(self.client, messages("map.title"), "map")
        await progress.begin(messages("map.listing", folders=", ".join(map(str, folders))))

        def cancelled() -> bool:
            return progress.cancelled or (request is not None and request.cancelled())

        try:
            found = await asyncio.to_thread(find_files, [str(folder) for folder in folders])
            names, budgets = await self.budgets_of(found.files)
            progress.report(0, messages("map.counting", files=messages.integer(len(found.files))))
            matching = self.session.settings.match_special_tokens
            job = counting_job(found.files, [(name, matching) for name in names], self.session.locale)
            result: dict[str, Any] = (
                {"cancelled": True} if cancelled() else await _count(job, progress, messages, cancelled)
            )
        except asyncio.CancelledError:
            progress.end(messages("map.cancelled"))
            raise
        except RequestFailed as error:
            progress.end(str(error))
            raise
        if "cancelled" in result:
            progress.end(messages("map.cancelled"))
            return {"cancelled": True}
        if "error" in result:
            problem = messages("map.failed", problem=result["error"])
            progress.end(problem)
            raise RequestFailed(problem)
        return await self.show(folders, found, names, budgets, result["done"], progress)

    def folders(self) -> list[Path]:
        """The workspace folders (else the root the client gave), each a folder that is there."""
        uris = self.client.workspace_folders
        paths = [Path(path) for uri in uris if (path := to_fs_path(uri)) is not None]
        if not paths and self.session.root_path is not None:
            paths = [self.session.root_path]
        folders = list(dict.fromkeys(path for path in paths if path.is_dir()))
        if not folders:
            raise RequestFailed(self.session.messages("map.no_folder"))
        for folder in folders:
            self.session.check_inside(folder)
        return folders

    async def budgets_of(self, files: Sequence[str]) -> tuple[list[str], dict[str, tuple[Budget, int] | None]]:
        """The tokenizers to count with (the one in use, then each a budget counts with)
        and each file's budget with its tokenizer's index among them."""
        names = [self.tokenizers.in_use.name]
        budgets: dict[str, tuple[Budget, int] | None] = {}
        for index, path in enumerate(files):
            if index % _BUDGETS_AT_ONCE == _BUDGETS_AT_ONCE - 1:
                await asyncio.sleep(0)  # other requests are answered meanwhile
            applied = self.budgets.applied(Path(path).as_uri())
            if applied is None:
                budgets[path] = None
                continue
            if applied.tokenizer not in names:
                if applied.tokenizer not in PACKAGED:
                    self.session.check_inside(Path(applied.tokenizer))
                names.append(applied.tokenizer)
            budgets[path] = (applied.budget, names.index(applied.tokenizer))
        return names, budgets

    async def show(
        self,
        folders: list[Path],
        found: Found,
        names: list[str],
        budgets: dict[str, tuple[Budget, int] | None],
        done: dict[str, Any],
        progress: WorkProgress,
    ) -> dict[str, Any]:
        """Write the page, open it, end the progress and answer the command."""
        session, messages = self.session, self.session.messages
        rows = file_rows(done["counts"], budgets, folders)
        skipped = [
            (shown_path(path, folders), en if session.locale == "en" else pt) for path, en, pt in done["skipped"]
        ]
        # As the command names them (pt, en), a file by its name.
        labels = [name if name in PACKAGED else self.tokenizers.name(name) for name in names]
        html = tokens_page(rows, labels, session.locale, skipped=skipped, ignored=found.ignored)
        try:
            path = write_html_page(html, "tokens", tokens_page_name(folders))
        except OSError as error:
            problem = messages("browser.unwritable", folder=cache_folder(), problem=error)
            progress.end(problem)
            raise RequestFailed(problem) from error
        totals = {name: sum(row.counts[i] for row in rows) for i, name in enumerate(names)}
        progress.end(
            messages(
                "map.done",
                files=messages.integer(len(rows)),
                tokens=messages.integer(totals[names[0]]),
                tokenizer=labels[0],
                skipped=messages.integer(len(skipped)),
            )
        )
        for problem in found.problems:
            logger.warning("token map: %s", describe(problem, session.locale))
        return {
            "cancelled": False,
            "folders": [str(folder) for folder in folders],
            "tokenizers": names,
            "files": len(rows),
            "tokens": totals,
            "over": [row.path for row in rows if row.failed],
            "skipped": [{"path": path, "reason": reason} for path, reason in skipped],
            "ignored": found.ignored,
            "unreadable": done["unreadable"] + [describe(problem, session.locale) for problem in found.problems],
            "page": path.as_uri(),
            "path": str(path),
            "opened": await show_in_browser(self.client, path, messages),
        }
