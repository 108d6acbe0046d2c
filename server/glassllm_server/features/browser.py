"""Open the merge explanation or the tokenizer comparison in a browser, for sharing: the
``glassllm.openInBrowser`` command (offered on any selection by the code actions).

The page is the one ``glassllm explain|compare --html`` writes (:mod:`glassllm.shown.html_page`):
one self-contained HTML file that works offline, to hand to a class or a colleague. It
holds what the server's own page holds: the chunks the selection touches (whole, at most
:data:`~glassllm_server.explanation.CHUNK_LIMIT` of them), by the tokenizer in use and, for
the comparison, every compared tokenizer, in the user's language. The file goes to the
cache folder (never the workspace) under a name fixed by the document and the chunks
(:func:`~glassllm_server.page_files.html_page_name`), which is also allowed over TCP.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from lsprotocol import types

from glassllm.packaged import load_problem, own_only
from glassllm.shown import html_page
from glassllm_server.commands import Command
from glassllm_server.explanation import Explanation, explain_document
from glassllm_server.feature import Feature, on_command
from glassllm_server.page_files import cache_folder, html_page_name, write_html_page
from glassllm_server.pages import document_name, show_in_browser
from glassllm_server.protocol.errors import RequestFailed
from glassllm_server.render.browser import page_note

__all__ = ["OpenInBrowser", "explained_text"]


def explained_text(lines: Sequence[str], explanation: Explanation) -> str:
    """The document's text from the first explained chunk's start to the last one's end.

    Chunks never cross a line break and the chunk rule cuts a text the same way from any
    chunk boundary, so the library tokenizes this text into exactly these chunks."""
    first, last = explanation.chunks[0], explanation.chunks[-1]
    if first.line == last.line:
        return lines[first.line][first.start : last.end]
    middle = "".join(lines[first.line + 1 : last.line])
    return lines[first.line][first.start :] + middle + lines[last.line][: last.end]


class OpenInBrowser(Feature):
    @on_command(Command.OPEN_IN_BROWSER)
    async def open_in_browser(
        self, uri: str, selection: types.Range, page: Literal["explain", "compare"]
    ) -> dict[str, Any]:
        session, tokenizers = self.session, self.tokenizers
        snapshot = session.snapshot(uri)
        explanation = explain_document(snapshot.document, *snapshot.points(selection))
        messages = session.messages
        answer: dict[str, Any] = {"uri": uri, "kind": page, "page": None, "path": None, "opened": False}
        if not explanation.chunks:
            self.client.show(messages("explain.empty"))
            return answer
        document = snapshot.document
        text = explained_text(document.lines, explanation)
        label = tokenizers.label(document.tokenizer.name)
        note = page_note(page, explanation, messages, messages.integer, document_name(uri), label)
        named = [(document.tokenizer.name, document.tokenizer.tokenizer)]
        if page == "compare":
            named += [(tok.name, tok.tokenizer) for tok in tokenizers.compared()]
        try:
            own = {tokenizers.label(name): own_only(tokenizer, name) for name, tokenizer in named}
        except ValueError as error:  # a real model's: the page shows glassllm's own only
            raise RequestFailed(load_problem(error, session.locale)) from error
        if page == "explain":
            html = html_page.explain_page(text, label, own[label], session.locale, note)
        else:
            html = html_page.compare_page(text, own, session.locale, note)
        first, last = explanation.chunks[0], explanation.chunks[-1]
        name = html_page_name(page, uri, (first.line, first.start), (last.line, last.end))
        try:
            path = write_html_page(html, page, name)
        except OSError as error:
            raise RequestFailed(messages("browser.unwritable", folder=cache_folder(), problem=error)) from error
        answer.update(
            {"page": path.as_uri(), "path": str(path), "opened": await show_in_browser(self.client, path, messages)}
        )
        return answer
