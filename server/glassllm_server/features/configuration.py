"""Configuration: ``initializationOptions``, ``workspace/configuration`` pulls and
``workspace/didChangeConfiguration``, merged into the server's typed settings.

The last settings the client sent win, whatever order the work finishes in: each source
takes a ticket when it is sent (a push as it arrives, a pull as it is asked), and an
answer older than the settings already applied is dropped. A client that cannot be
pulled from has its last pushed section reused by every reload. A tokenizer file the
settings name is loaded off the event loop (see :mod:`glassllm_server.loads`).

The repository's budget files (``.glassllm.toml``, ``pyproject.toml``: see
:mod:`glassllm_server.budgets`) are configuration too: where the client can register
watchers, the server asks it to watch them (``workspace/didChangeWatchedFiles``), and a
change to one, saved in the editor or elsewhere, re-checks the open documents' budgets
at once, without an edit.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from glassllm.budgets import CONFIG_NAMES
from glassllm_server.confinement import inside
from glassllm_server.feature import Feature, on_message
from glassllm_server.server import GlassServer
from glassllm_server.settings import SECTION

__all__ = ["Configuration"]

logger = logging.getLogger(__name__)

# The registration's ID, so that a client (and its log) can tell it apart.
_WATCH_ID = "glassllm-budget-files"


class Configuration(Feature):
    def __init__(self, server: GlassServer) -> None:
        super().__init__(server)
        self.pulls: set[asyncio.Future[None]] = set()  # the event loop keeps only weak references
        self.pushed: Any = None  # the last section the client pushed
        self.tickets = 0  # the last ticket handed out
        self.applied = 0  # the ticket of the settings in use

    @on_message(types.INITIALIZE)
    def initialize(self, params: types.InitializeParams) -> None:
        session = self.session
        session.client_locale = params.locale
        # pygls has negotiated it by now (before this handler runs).
        session.encoding = self.client.encoding
        root = None
        if params.workspace_folders:
            root = params.workspace_folders[0].uri
        elif params.root_uri:
            root = params.root_uri
        if root is not None and (path := to_fs_path(root)) is not None:
            session.root_path = Path(path)
        elif params.root_path:
            session.root_path = Path(params.root_path)
        folders = session.confined_to
        if folders is not None and (session.root_path is None or not inside(session.root_path, folders)):
            # Over TCP the workspace is the server's own: relative paths start in it.
            session.root_path = folders[0]
        session.initialization_options = params.initialization_options
        # Apply the options now, so that requests before the first pull already use them
        # (a tokenizer file being loaded meanwhile: initialize never waits for one).
        self.configure(session.initialization_options)

    @on_message(types.INITIALIZED)
    def initialized(self, params: types.InitializedParams) -> None:
        # The ticket is taken now, not when a task gets to run: settings pushed right
        # after ``initialized`` (read in the same turn) are newer than this pull's answer.
        self.reload_later()
        self.watch_budget_files()

    def watch_budget_files(self) -> None:
        """Ask the client to tell of changes to the budget files, where it registers
        watchers when asked (after ``initialized``, as LSP wants); its answer is awaited
        in a task, and a refusal only logged: the budgets are still read again when their
        files' times change, on the next check."""
        workspace = self.client.capabilities.workspace
        watched = None if workspace is None else workspace.did_change_watched_files
        if watched is None or not watched.dynamic_registration:
            return
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern=f"**/{name}") for name in CONFIG_NAMES]
        )
        registration = types.Registration(
            id=_WATCH_ID, method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options
        )
        task = asyncio.ensure_future(self.client.register(types.RegistrationParams(registrations=[registration])))
        self.pulls.add(task)
        task.add_done_callback(self.pulls.discard)

    @on_message(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(self, params: types.DidChangeWatchedFilesParams) -> None:
        """A budget file changed, was created or deleted: the open documents' budgets are
        checked again now (their diagnostics pushed or refreshed, their lenses refreshed)."""
        names = {Path(to_fs_path(change.uri) or change.uri).name for change in params.changes}
        if not names & set(CONFIG_NAMES):
            return
        self.budgets.forget_repository()
        self.session.open_documents.announce_all()
        self.client.refresh()

    @on_message(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(self, params: types.DidChangeConfigurationParams) -> None:
        pushed = params.settings
        if isinstance(pushed, dict) and isinstance(pushed.get(SECTION), dict):
            # Applied now, not in a task: requests read after this notification must
            # see the new settings (a new tokenizer above all).
            self.pushed = pushed[SECTION]
            self.apply(self.ticket(), self.pushed)
        else:
            self.reload_later()

    def reload_later(self) -> None:
        """Pull the client's section, as settings sent now (see :meth:`reload`)."""
        task = asyncio.ensure_future(self.reload(self.ticket()))
        self.pulls.add(task)
        task.add_done_callback(self.pulls.discard)

    async def reload(self, ticket: int) -> None:
        """Settings from the initialization options, then the client's current section,
        asked for when ``ticket`` was taken."""
        self.apply(ticket, await self.pull())

    def ticket(self) -> int:
        self.tickets += 1
        return self.tickets

    def apply(self, ticket: int, section: Any) -> None:
        if ticket < self.applied:
            logger.debug("settings %d dropped: %d, sent later, are in use", ticket, self.applied)
            return
        self.applied = ticket
        before = self.session.settings
        self.configure(self.session.initialization_options, section)
        if self.session.settings != before:
            self.tokenizers.refresh_views()

    def configure(self, *raw: Any) -> None:
        """Settings from the defaults and each raw source in turn (later ones win).

        Invalid values are reported once each. The tokenizer and the compared ones the
        settings name are switched to now when packaged, else loaded off the event loop
        (see :mod:`glassllm_server.loads`) and used once they are ready.
        """
        for problem in self.session.configure(*raw):
            self.client.report_once(problem)
        self.tokenizers.follow_settings()

    async def pull(self) -> Any:
        """The client's ``glassllm`` section, where it supports ``workspace/configuration``."""
        workspace = self.client.capabilities.workspace
        if workspace is None or not workspace.configuration:
            return self.pushed
        root = self.session.root_path
        scope = root.as_uri() if root is not None else None
        try:
            answer = await self.client.configuration(
                types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION, scope_uri=scope)])
            )
        except Exception:
            logger.exception("workspace/configuration failed")
            return None
        return answer[0] if answer else None
