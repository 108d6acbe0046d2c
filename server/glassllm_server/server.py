"""The glassllm language server: pygls' server object, its main loop and its parts.

:class:`GlassServer` serves over stdio or TCP (:mod:`glassllm_server.protocol.transport`)
and holds the parts every feature works with: the :class:`Session` (the one
mutable state: documents, settings), the :class:`Tokenizers` (loading them), the
:class:`ChatDocuments` (chat documents' conversations, encoded), the :class:`Client`
(talking back) and the :class:`Budgets` (which budget applies where). The pygls edge it
speaks through is :mod:`glassllm_server.protocol`; the handlers are the features (``features/``).
"""

from __future__ import annotations

import logging
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from glassllm_server import __version__
from glassllm_server.budgets import Budgets
from glassllm_server.chat_documents import ChatDocuments
from glassllm_server.client import Client
from glassllm_server.protocol.glass_protocol import GlassProtocol
from glassllm_server.protocol.transport import serve_stdio, serve_tcp
from glassllm_server.session import Session
from glassllm_server.tokenizers import Tokenizers

__all__ = ["GlassServer"]

logger = logging.getLogger(__name__)


class GlassServer(LanguageServer):
    """The language server: the session, its tokenizers and its client, served."""

    protocol: GlassProtocol

    def __init__(self) -> None:
        super().__init__(
            "glassllm-lsp",
            __version__,
            protocol_cls=GlassProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.session = Session()
        self.client = Client(self)
        self.tokenizers = Tokenizers(self.session, self.client)
        self.chats = ChatDocuments(self.session, self.tokenizers, self.client)
        self.budgets = Budgets(self.session, self.tokenizers, self.client)
        self.protocol.session = self.session
        self._notification_error_reported = False
        self.exit_status = 0

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve over stdio (see :mod:`glassllm_server.protocol.transport`); the exit
        status LSP asks for is kept in :attr:`exit_status`."""
        self.exit_status = serve_stdio(self, self.protocol, self.tokenizers.loads.settled, stdin, stdout)

    def start_tcp(self, host: str, port: int) -> None:
        """Serve one client on a TCP port, confined to the session's folders (see
        :mod:`glassllm_server.protocol.transport`); the exit status as for stdio."""
        self.exit_status = serve_tcp(self, self.protocol, self.tokenizers.loads.settled, host, port)

    def shutdown(self) -> None:
        """Stop the child processes the compared tokenizers count in, then pygls' parts."""
        self.tokenizers.close()
        super().shutdown()

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log every error; show the first one out of a notification, then only log."""
        if getattr(source, "__name__", "") == "FeatureRequestError":
            # Already answered to the client as a JSON-RPC error.
            logger.info("request failed: %s", error)
            return
        logger.error("%s: %s", getattr(source, "__name__", source), error, exc_info=error)
        if self._notification_error_reported:
            return
        self._notification_error_reported = True
        self.client.show(self.session.messages("error.notification", error=error), types.MessageType.Error)
