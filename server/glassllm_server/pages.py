"""Showing a page (the merge explanation, the tokenizer comparison) in any client.

The page is a Markdown file written to the user's cache folder and opened with
``window/showDocument``; where the client cannot open documents (or opening fails), the
same text goes to ``window/showMessage``. Its HTML twin opens outside the editor
(``external``, :func:`show_in_browser`); where that fails, a message gives its path.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import Future
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types

from glassllm_server.page_files import write_page
from glassllm_server.server import GlassServer

__all__ = ["BROWSER_WAIT", "document_name", "show_in_browser", "show_page"]

logger = logging.getLogger(__name__)

# Seconds to wait for the client to say whether the browser opened (it may ask the user
# first); past that, the message with the page's path is shown anyway.
BROWSER_WAIT = 20.0


def document_name(uri: str) -> str:
    """The file name a URI ends with, for titles ("untitled:Untitled-1" → "Untitled-1")."""
    parsed = urlparse(uri)
    return PurePosixPath(unquote(parsed.path)).name or uri


def _can_show_documents(server: GlassServer) -> bool:
    window = server.client_capabilities.window
    return window is not None and window.show_document is not None and bool(window.show_document.support)


def _show_message(server: GlassServer, text: str) -> None:
    server.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=text))


def show_page(server: GlassServer, markdown: str, name: str, kind: str = "explain") -> str | None:
    """Show a page (see :func:`write_page`); returns the URI of the file written, if any."""
    can_open = _can_show_documents(server)
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


async def show_in_browser(server: GlassServer, path: Path) -> bool:
    """Ask the client to open the HTML page at ``path`` outside the editor (LSP 3.16's
    ``window/showDocument`` with ``external``); True when it says it did. Otherwise (no
    support, a refusal, an error, no answer in :data:`BROWSER_WAIT` seconds) a message
    tells the user where the page is."""
    if _can_show_documents(server):
        params = types.ShowDocumentParams(uri=path.as_uri(), external=True, take_focus=True)
        try:
            answer = await asyncio.wait_for(server.window_show_document_async(params), BROWSER_WAIT)
        except Exception as error:  # the client's answer, whatever it is, must not fail the command
            logger.warning("the client did not open %s: %r", path, error)
        else:
            if answer.success:
                return True
    _show_message(server, server.messages("browser.opened_nowhere", path=path))
    return False
