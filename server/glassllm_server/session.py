"""The session: the server's one mutable state, apart from loading tokenizers
(:mod:`glassllm_server.tokenizers`) and from talking to the client
(:mod:`glassllm_server.client`).

It holds the open documents (:mod:`glassllm_server.workspace`), the settings, what the
client said at ``initialize`` (its locale, its workspace, the position encoding) and,
over TCP, the folders the server is confined to. Handlers read a document through
:meth:`Session.snapshot`: a :class:`DocumentSnapshot` of it as the request found it (or
the JSON-RPC error a closed document gets, :class:`RequestFailed`: the one thing of
pygls here).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glassllm.shown.problems import describe
from glassllm_server.confinement import check_inside
from glassllm_server.document import Document, ReadOnlyDocument
from glassllm_server.messages import Locale, Messages, choose_locale
from glassllm_server.positions import Encoding
from glassllm_server.protocol.errors import RequestFailed
from glassllm_server.settings import Settings, parse_settings
from glassllm_server.snapshot import DocumentSnapshot
from glassllm_server.workspace import OpenDocuments, documents_at_arrival

__all__ = ["Session"]


class Session:
    """The open documents, the settings and what the client told at ``initialize``."""

    def __init__(self) -> None:
        self.open_documents = OpenDocuments()
        self.settings = Settings()
        self.initialization_options: Any = None  # the client's, kept for every reload
        self.client_locale: str | None = None
        self.root_path: Path | None = None
        # Over TCP any local user can connect: the server then reads and writes only inside
        # these folders, fixed when it started (see confinement.py). None over stdio.
        self.confined_to: tuple[Path, ...] | None = None
        self.encoding: Encoding = "utf-16"  # negotiated at initialize

    @property
    def locale(self) -> Locale:
        return choose_locale(self.client_locale, self.settings.locale)

    @property
    def messages(self) -> Messages:
        return Messages(self.locale)

    def configure(self, *raw: Any) -> list[str]:
        """Settings from the defaults and each raw source in turn (later ones win); what
        was wrong with them, for the user (the invalid values fall back)."""
        settings = Settings()
        problems = []
        for source in raw:
            settings, found = parse_settings(source, settings)
            problems.extend(found)
        self.settings = settings
        messages = self.messages
        return [
            messages("settings.invalid_checked", problem=describe(problem.error, self.locale))
            if problem.error is not None
            else messages(
                "settings.invalid", key=problem.key, value=repr(problem.value), expected=messages(problem.expected)
            )
            for problem in problems
        ]

    def check_inside(self, path: Path) -> None:
        """Raise :class:`RequestFailed` when the server listens on TCP and ``path`` (after
        resolving links) is outside its workspace folders."""
        check_inside(path, self.confined_to, self.messages)

    # Snapshots

    def find_snapshot(self, uri: str) -> DocumentSnapshot | None:
        """The open document ``uri`` as the request being handled found it (outside a
        request, as it is now); None when it is not open."""
        arrived = documents_at_arrival()
        document = self.open_documents.get(uri) if arrived is None else arrived.get(uri)
        return None if document is None else self.snapshot_of(document)

    def snapshot(self, uri: str) -> DocumentSnapshot:
        """Like :meth:`find_snapshot`, with a clear JSON-RPC error when ``uri`` is not open."""
        found = self.find_snapshot(uri)
        if found is None:
            raise RequestFailed(self.messages("error.unknown_document", uri=uri))
        return found

    def snapshot_of(self, document: ReadOnlyDocument) -> DocumentSnapshot:
        """``document`` as it is now (a snapshot of a live one), with the client's encoding."""
        return DocumentSnapshot(document.snapshot() if isinstance(document, Document) else document, self.encoding)

    def focus(self, uri: str, line: int) -> None:
        """Make ``line`` the one the user last looked at in the open document ``uri``
        (views that cannot cover a large document whole look there)."""
        document = self.open_documents.get(uri)
        if document is not None:
            document.focus(line)
