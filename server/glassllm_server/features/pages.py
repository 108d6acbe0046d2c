"""Showing a page (the merge explanation, the tokenizer comparison) in any client.

The page is a Markdown file written to the user's cache folder and opened with
``window/showDocument``; where the client cannot open documents (or opening fails), the
same text goes to ``window/showMessage``.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types

from glassllm_server.page_files import write_page
from glassllm_server.server import GlassServer

__all__ = ["document_name", "show_page"]

logger = logging.getLogger(__name__)


def document_name(uri: str) -> str:
    """The file name a URI ends with, for titles ("untitled:Untitled-1" → "Untitled-1")."""
    parsed = urlparse(uri)
    return PurePosixPath(unquote(parsed.path)).name or uri


def _show_message(server: GlassServer, text: str) -> None:
    server.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=text))


def show_page(server: GlassServer, markdown: str, name: str, kind: str = "explain") -> str | None:
    """Show a page (see :func:`write_page`); returns the URI of the file written, if any."""
    window = server.client_capabilities.window
    can_open = window is not None and window.show_document is not None and window.show_document.support
    try:
        path = write_page(markdown, name, kind=kind)
    except OSError as error:
        logger.warning("cannot write the explanation page: %s", error)
        _show_message(server, markdown)
        return None
    uri = path.as_uri()
    if not can_open:
        _show_message(server, markdown)
        return uri

    def opened(future: Future[Any]) -> None:
        # The answer arrives after the command's; a refusal still shows the text.
        if future.cancelled() or future.exception() is not None or not getattr(future.result(), "success", False):
            _show_message(server, markdown)

    # Sent before the command answers, so the page opens as the command completes.
    server.window_show_document(types.ShowDocumentParams(uri=uri, take_focus=True)).add_done_callback(opened)
    return uri
