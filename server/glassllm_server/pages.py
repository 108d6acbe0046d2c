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

from glassllm_server.client import Client
from glassllm_server.messages import Messages
from glassllm_server.page_files import write_page

__all__ = ["BROWSER_WAIT", "document_name", "show_in_browser", "show_page"]

logger = logging.getLogger(__name__)

# Seconds to wait for the client to say whether the browser opened (it may ask the user
# first); past that, the message with the page's path is shown anyway.
BROWSER_WAIT = 20.0


def document_name(uri: str) -> str:
    """The file name a URI ends with, for titles ("untitled:Untitled-1" → "Untitled-1")."""
    parsed = urlparse(uri)
    return PurePosixPath(unquote(parsed.path)).name or uri


def show_page(client: Client, markdown: str, name: str, kind: str = "explain") -> str | None:
    """Show a page (see :func:`write_page`); returns the URI of the file written, if any."""
    can_open = client.can_show_documents
    try:
        path = write_page(markdown, name, kind=kind)
    except OSError as error:
        logger.warning("cannot write the explanation page: %s", error)
        client.show(markdown)
        return None
    uri = path.as_uri()
    if not can_open:
        client.show(markdown)
        return uri

    def opened(future: Future[Any]) -> None:
        # The answer arrives after the command's; a refusal still shows the text.
        if future.cancelled() or future.exception() is not None or not getattr(future.result(), "success", False):
            client.show(markdown)

    # Sent before the command answers, so the page opens as the command completes.
    client.show_document(types.ShowDocumentParams(uri=uri, take_focus=True)).add_done_callback(opened)
    return uri


async def show_in_browser(client: Client, path: Path, messages: Messages) -> bool:
    """Ask the client to open the HTML page at ``path`` outside the editor (LSP 3.16's
    ``window/showDocument`` with ``external``); True when it says it did. Otherwise (no
    support, a refusal, an error, no answer in :data:`BROWSER_WAIT` seconds) a message
    tells the user where the page is."""
    if client.can_show_documents:
        params = types.ShowDocumentParams(uri=path.as_uri(), external=True, take_focus=True)
        try:
            answer = await asyncio.wait_for(client.show_document_async(params), BROWSER_WAIT)
        except Exception as error:  # the client's answer, whatever it is, must not fail the command
            logger.warning("the client did not open %s: %r", path, error)
        else:
            if answer.success:
                return True
    client.show(messages("browser.opened_nowhere", path=path))
    return False
