"""Snapshots at arrival: every request sees the open documents as they were when it arrived.

The one override of a private pygls method (``_handle_request``), kept here alone and
pinned by ``tests/server/unit/test_protocol_arrival.py``, which fails loudly when pygls changes it.

pygls reads a request, runs ``_handle_request`` inside a copy of the context made for
that message, and creates the handler's task there; the task runs later, after the
``didChange`` notifications read meanwhile are applied. Snapshots of the open documents
(cheap: see :meth:`Document.snapshot`) set in a context variable just before pygls creates
the task are what the handler reads, whatever edits come in between
(:meth:`~glassllm_server.workspace.OpenDocuments.arrive`).
"""

from __future__ import annotations

from typing import Any

from pygls.protocol import LanguageServerProtocol

__all__ = ["SnapshotsAtArrival"]


class SnapshotsAtArrival(LanguageServerProtocol):
    """A protocol that snapshots the open documents as each request arrives."""

    def arrive(self) -> None:
        """Snapshot the open documents for the request arriving now (the server's
        protocol says where they are)."""
        raise NotImplementedError

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        self.arrive()
        super()._handle_request(msg_id, method_name, params)
