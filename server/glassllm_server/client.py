"""The editor on the other end: everything the server says or asks it, in one place.

Messages (and each problem shown once a session), questions, pages to open, progress,
diagnostics pushed, the refreshes of what depends on the tokens, the client's settings
pulled, custom notifications; and what the client said it can do. Features talk back
only through :class:`Client`, never through pygls' server object.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.progress import Progress

from glassllm_server.positions import Encoding

__all__ = ["Client"]

logger = logging.getLogger(__name__)


class Client:
    """What the server sends the editor, through the pygls server ``server``."""

    def __init__(self, server: LanguageServer) -> None:
        self._server = server
        self._reported: set[str] = set()

    # What the client can do

    @property
    def capabilities(self) -> types.ClientCapabilities:
        """What the client said it can do at ``initialize`` (nothing before)."""
        return self._server.client_capabilities

    @property
    def initialized(self) -> bool:
        """Whether ``initialize`` has told what the client can do."""
        return getattr(self._server.protocol, "client_capabilities", None) is not None

    @property
    def encoding(self) -> Encoding:
        """The position encoding negotiated at initialize (UTF-16 until then)."""
        try:
            encoding = self._server.workspace.position_encoding
        except RuntimeError:
            return "utf-16"
        return str(getattr(encoding, "value", encoding) or "utf-16")  # type: ignore[return-value]

    @property
    def can_show_documents(self) -> bool:
        window = self.capabilities.window
        return window is not None and window.show_document is not None and bool(window.show_document.support)

    @property
    def workspace_folders(self) -> list[str]:
        """The URIs of the workspace folders open in the client, as ``initialize`` and
        ``workspace/didChangeWorkspaceFolders`` left them (pygls keeps them)."""
        try:
            folders = self._server.workspace.folders
        except RuntimeError:  # before initialize
            return []
        return [folder.uri for folder in folders.values()]

    # Messages and questions

    def show(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        """Show ``message`` (``window/showMessage``)."""
        self._server.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def report_once(self, message: str, kind: types.MessageType = types.MessageType.Error) -> None:
        """Show ``message`` to the user unless it was already shown this session."""
        logger.warning("%s", message)
        if message in self._reported:
            return
        self._reported.add(message)
        self.show(message, kind)

    async def ask(self, params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        """The action the user chose (``window/showMessageRequest``); None if dismissed."""
        return await self._server.window_show_message_request_async(params)

    def show_document(self, params: types.ShowDocumentParams) -> Future[types.ShowDocumentResult]:
        """Ask the client to open a document (``window/showDocument``), answered later."""
        return self._server.window_show_document(params)

    async def show_document_async(self, params: types.ShowDocumentParams) -> types.ShowDocumentResult:
        return await self._server.window_show_document_async(params)

    @property
    def progress(self) -> Progress:
        """``window/workDoneProgress``: tokens, begin, report, end."""
        return self._server.work_done_progress

    def current_request(self) -> Future[Any] | None:
        """The future pygls answers the request being handled with: a ``$/cancelRequest``
        for a command cancels it, not the handler."""
        protocol = self._server.protocol
        msg_id = protocol.msg_id
        return None if msg_id is None else protocol._request_futures.get(msg_id)

    # The client's settings, views and notifications

    async def configuration(self, params: types.ConfigurationParams) -> Sequence[Any]:
        """The client's answer to ``workspace/configuration``."""
        return await self._server.workspace_configuration_async(params)

    async def register(self, params: types.RegistrationParams) -> None:
        """Ask the client to register capabilities (``client/registerCapability``); a
        refusal is logged, not raised."""
        try:
            await self._server.client_register_capability_async(params)
        except Exception as error:  # the client's answer: an error response, or none before it went
            logger.info("client/registerCapability refused: %s", error)

    def publish_diagnostics(self, params: types.PublishDiagnosticsParams) -> None:
        self._server.text_document_publish_diagnostics(params)

    def notify(self, method: str, params: Any) -> None:
        """Send the notification ``method`` (one of glassllm's own)."""
        self._server.protocol.notify(method, params)

    def refresh(self) -> None:
        """Ask the client to re-request diagnostics, inlay hints, code lenses and semantic
        tokens, those it says it can refresh."""
        workspace = self.capabilities.workspace
        if workspace is None:
            return
        server = self._server
        if workspace.diagnostics is not None and workspace.diagnostics.refresh_support:
            server.workspace_diagnostic_refresh(None)
        if workspace.inlay_hint is not None and workspace.inlay_hint.refresh_support:
            server.workspace_inlay_hint_refresh(None)
        if workspace.code_lens is not None and workspace.code_lens.refresh_support:
            server.workspace_code_lens_refresh(None)
        if workspace.semantic_tokens is not None and workspace.semantic_tokens.refresh_support:
            server.workspace_semantic_tokens_refresh(None)
