"""JSON-RPC errors the server answers with, and how a malformed message is described."""

from __future__ import annotations

from pygls.exceptions import JsonRpcException

__all__ = ["RequestFailed", "describe_invalid"]


class RequestFailed(JsonRpcException):
    """LSP's RequestFailed: the request was well formed but cannot be answered."""

    CODE = -32803
    MESSAGE = "Request failed"


def describe_invalid(error: BaseException | None) -> str:
    """A short, readable account of a cattrs validation error: each leaf problem with the
    path of attributes that leads to it ("params.position: Position.line should be …")."""
    if error is None:
        return "malformed"
    found = [f"{'.'.join(path) + ': ' if path else ''}{problem}" for path, problem in _leaves(error, ())]
    return "; ".join(found) or str(error)


def _leaves(error: BaseException, path: tuple[str, ...]) -> list[tuple[tuple[str, ...], str]]:
    for note in getattr(error, "__notes__", None) or []:
        # cattrs notes where an error happened: "Structuring class X @ attribute name".
        name = str(note).rpartition("@ attribute ")[2]
        if name and name != str(note):
            path = (*path, name)
    inner = getattr(error, "exceptions", None)
    if not inner:
        problem = "missing" if isinstance(error, KeyError) else str(error)
        return [(path, problem)]
    return [leaf for exception in inner for leaf in _leaves(exception, path)]
