"""Configuration: ``initializationOptions``, ``workspace/configuration`` pulls and
``workspace/didChangeConfiguration``, merged into the server's typed settings.

The last settings the client sent win, whatever order the work finishes in: each source
takes a ticket when it is sent (a push as it arrives, a pull as it is asked), and an
answer older than the settings already applied is dropped. A client that cannot be
pulled from has its last pushed section reused by every reload. A tokenizer file the
settings name is loaded off the event loop (see :mod:`glassllm_server.loads`).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from glassllm_server.confinement import inside
from glassllm_server.feature import Feature, on_message
from glassllm_server.server import GlassServer
from glassllm_server.settings import SECTION

__all__ = ["Configuration"]

logger = logging.getLogger(__name__)


class Configuration(Feature):
    def __init__(self, server: GlassServer) -> None:
        super().__init__(server)
        self.pulls: set[asyncio.Future[None]] = set()  # the event loop keeps only weak references
        self.pushed: Any = None  # the last section the client pushed
        self.tickets = 0  # the last ticket handed out
        self.applied = 0  # the ticket of the settings in use

    @on_message(types.INITIALIZE)
    def initialize(self, params: types.InitializeParams) -> None:
        server = self.server
        server.client_locale = params.locale
        root = None
        if params.workspace_folders:
            root = params.workspace_folders[0].uri
        elif params.root_uri:
            root = params.root_uri
        if root is not None and (path := to_fs_path(root)) is not None:
            server.root_path = Path(path)
        elif params.root_path:
            server.root_path = Path(params.root_path)
        folders = server.confined_to
        if folders is not None and (server.root_path is None or not inside(server.root_path, folders)):
            # Over TCP the workspace is the server's own: relative paths start in it.
            server.root_path = folders[0]
        server.initialization_options = params.initialization_options
        # Apply the options now, so that requests before the first pull already use them
        # (a tokenizer file being loaded meanwhile: initialize never waits for one).
        server.configure(server.initialization_options)

    @on_message(types.INITIALIZED)
    async def initialized(self, params: types.InitializedParams) -> None:
        await self.reload()

    @on_message(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(self, params: types.DidChangeConfigurationParams) -> None:
        pushed = params.settings
        if isinstance(pushed, dict) and isinstance(pushed.get(SECTION), dict):
            # Applied now, not in a task: requests read after this notification must
            # see the new settings (a new tokenizer above all).
            self.pushed = pushed[SECTION]
            self.apply(self.ticket(), self.pushed)
        else:
            task = asyncio.ensure_future(self.reload())
            self.pulls.add(task)
            task.add_done_callback(self.pulls.discard)

    async def reload(self) -> None:
        """Settings from the initialization options, then the client's current section."""
        ticket = self.ticket()
        self.apply(ticket, await self.pull())

    def ticket(self) -> int:
        self.tickets += 1
        return self.tickets

    def apply(self, ticket: int, section: Any) -> None:
        if ticket < self.applied:
            logger.debug("settings %d dropped: %d, sent later, are in use", ticket, self.applied)
            return
        self.applied = ticket
        server = self.server
        before = server.settings
        server.configure(server.initialization_options, section)
        if server.settings != before:
            server.refresh_views()

    async def pull(self) -> Any:
        """The client's ``glassllm`` section, where it supports ``workspace/configuration``."""
        server = self.server
        workspace = server.client_capabilities.workspace
        if workspace is None or not workspace.configuration:
            return self.pushed
        scope = server.root_path.as_uri() if server.root_path is not None else None
        try:
            answer = await server.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION, scope_uri=scope)])
            )
        except Exception:
            logger.exception("workspace/configuration failed")
            return None
        return answer[0] if answer else None
