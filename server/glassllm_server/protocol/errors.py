"""JSON-RPC errors the server answers with, and how a malformed message is described."""

from __future__ import annotations

from pygls.exceptions import JsonRpcException

__all__ = ["RequestFailed", "describe_invalid"]


class RequestFailed(JsonRpcException):
    """LSP's RequestFailed: the request was well formed but cannot be answered."""

    CODE = -32803
    MESSAGE = "Request failed"


def describe_invalid(error: BaseException | None) -> str:
    """A short, readable account of a cattrs validation error."""
    if error is None:
        return "malformed"
    parts = [str(error)]
    for inner in getattr(error, "exceptions", []) or []:
        notes = getattr(inner, "__notes__", None)
        parts.append(f"{notes[0] if notes else ''} {inner}".strip())
    return "; ".join(parts)
