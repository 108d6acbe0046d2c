"""Over TCP, commands touch only the workspace: any local user can connect to a port.

With stdio the client is the editor that started the server, and a path it passes is the
user's wish. A TCP port is open to every local user, so there (``glassllm-lsp --tcp``)
the commands read and write only inside the workspace folders the client declared and
the cache folder of the explanation pages, after resolving symbolic links and ``..``.
"""

from __future__ import annotations

from pathlib import Path

from pygls.uris import to_fs_path

from glassllm_server.page_files import cache_folder
from glassllm_server.protocol import RequestFailed
from glassllm_server.server import GlassServer

__all__ = ["allowed_folders", "check_inside"]


def allowed_folders(server: GlassServer) -> list[Path]:
    """The workspace folders (or, without any, the root) and the cache folder, resolved."""
    uris = [folder.uri for folder in server.workspace.folders.values()]
    if not uris and server.workspace.root_uri:
        uris = [server.workspace.root_uri]
    folders = [Path(path) for uri in uris if (path := to_fs_path(uri)) is not None]
    return [folder.resolve() for folder in [*folders, cache_folder()]]


def check_inside(server: GlassServer, path: Path) -> None:
    """Raise :class:`RequestFailed` when the server listens on TCP and ``path`` (after
    resolving links) is outside :func:`allowed_folders`."""
    if not server.confined:
        return
    resolved = path.resolve()
    folders = allowed_folders(server)
    if any(resolved.is_relative_to(folder) for folder in folders):
        return
    messages = server.messages
    shown = ", ".join(str(folder) for folder in folders)
    raise RequestFailed(messages("path.outside", path=path, folders=shown))
