"""Snapshots at arrival: every request sees the open documents as they were when it arrived.

The one override of a private pygls method (``_handle_request``), kept here alone and
pinned by ``tests/server/unit/test_protocol_arrival.py``, which fails loudly when pygls changes it.

pygls reads a request, runs ``_handle_request`` inside a copy of the context made for
that message, and creates the handler's task there; the task runs later, after the
``didChange`` notifications read meanwhile are applied. Snapshots of the open documents
(cheap: see :meth:`Document.snapshot`) set in a context variable just before pygls creates
the task are what the handler reads, whatever edits come in between.
"""

from __future__ import annotations

import contextvars
from typing import Any

from pygls.protocol import LanguageServerProtocol

from glassllm_server.document import ReadOnlyDocument

__all__ = ["SnapshotsAtArrival", "documents_at_arrival"]

# Unset outside requests: notifications and background work see the live documents.
_AT_ARRIVAL: contextvars.ContextVar[dict[str, ReadOnlyDocument]] = contextvars.ContextVar("documents_at_arrival")


def documents_at_arrival() -> dict[str, ReadOnlyDocument] | None:
    """The open documents as the request being handled found them (None outside a request)."""
    return _AT_ARRIVAL.get(None)


class SnapshotsAtArrival(LanguageServerProtocol):
    """A protocol that snapshots the open documents as each request arrives."""

    def take_snapshots(self) -> dict[str, ReadOnlyDocument]:
        """The open documents as they are now, by URI (the server's protocol says where they are)."""
        raise NotImplementedError

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        _AT_ARRIVAL.set(self.take_snapshots())
        super()._handle_request(msg_id, method_name, params)
