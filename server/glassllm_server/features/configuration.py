"""Configuration: ``initializationOptions``, ``workspace/configuration`` pulls and
``workspace/didChangeConfiguration``, merged into the server's typed settings."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from glassllm_server.server import GlassServer
from glassllm_server.settings import SECTION

__all__ = ["register"]

logger = logging.getLogger(__name__)


def register(server: GlassServer) -> None:
    pulls: set[asyncio.Future[None]] = set()

    @server.feature(types.INITIALIZE)
    def initialize(ls: GlassServer, params: types.InitializeParams) -> None:
        ls.client_locale = params.locale
        root = None
        if params.workspace_folders:
            root = params.workspace_folders[0].uri
        elif params.root_uri:
            root = params.root_uri
        if root is not None and (path := to_fs_path(root)) is not None:
            ls.root_path = Path(path)
        elif params.root_path:
            ls.root_path = Path(params.root_path)
        ls.initialization_options = params.initialization_options
        # Apply the options now, so that requests before the first pull already use them.
        ls.configure(ls.initialization_options)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: GlassServer, params: types.InitializedParams) -> None:
        await reload(ls, None)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: GlassServer, params: types.DidChangeConfigurationParams) -> None:
        pushed = params.settings
        if isinstance(pushed, dict) and isinstance(pushed.get(SECTION), dict):
            # Applied now, not in a task: requests read after this notification must
            # see the new settings (a new tokenizer above all).
            apply(ls, pushed[SECTION])
        else:
            task = asyncio.ensure_future(reload(ls, None))
            pulls.add(task)  # the event loop keeps only a weak reference
            task.add_done_callback(pulls.discard)

    async def reload(ls: GlassServer, pushed: Any) -> None:
        """Settings from the initialization options, then the client's current section
        (pushed with the notification, or pulled where the client supports it)."""
        apply(ls, pushed if pushed is not None else await pull(ls))

    def apply(ls: GlassServer, section: Any) -> None:
        before = ls.settings
        ls.configure(ls.initialization_options, section)
        if ls.settings != before:
            ls.refresh_views()

    async def pull(ls: GlassServer) -> Any:
        workspace = ls.client_capabilities.workspace
        if workspace is None or not workspace.configuration:
            return None
        scope = ls.root_path.as_uri() if ls.root_path is not None else None
        try:
            answer = await ls.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION, scope_uri=scope)])
            )
        except Exception:
            logger.exception("workspace/configuration failed")
            return None
        return answer[0] if answer else None
