"""What a feature is: a class whose methods handle LSP messages and whose attributes
hold its state (esbonio's ``LanguageFeature`` style).

A method marked :func:`on_document` receives the :class:`DocumentSnapshot` of the
document its params name (``params.text_document.uri``), taken when the request arrived,
before the params: ``async def hover(self, snapshot, params)``. :func:`on_message` marks a
handler of the params alone (lifecycle messages, custom requests), :func:`on_command` a
``workspace/executeCommand`` command (pygls structures its arguments from the type hints).
:meth:`Feature.register` hands them all to the server.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

from glassllm_server.server import GlassServer
from glassllm_server.session import Session

__all__ = ["Feature", "on_command", "on_document", "on_message"]

_Handler = TypeVar("_Handler", bound=Callable[..., Any])


class _Mark(NamedTuple):
    kind: str  # "document", "message" or "command"
    name: str  # the LSP method or the command
    options: Any


def _marker(kind: str, name: str, options: Any = None) -> Callable[[_Handler], _Handler]:
    def mark(handler: _Handler) -> _Handler:
        handler._glassllm_mark = _Mark(kind, name, options)  # type: ignore[attr-defined]
        return handler

    return mark


def on_document(method: str, options: Any = None) -> Callable[[_Handler], _Handler]:
    """Handle ``method`` with ``(snapshot, params)``: the document the params name."""
    return _marker("document", method, options)


def on_message(method: str, options: Any = None) -> Callable[[_Handler], _Handler]:
    """Handle ``method`` with its params alone."""
    return _marker("message", method, options)


def on_command(name: str) -> Callable[[_Handler], _Handler]:
    """Handle the command ``name`` with its arguments."""
    return _marker("command", str(name))


class Feature:
    """One capability of the server, with the state its handlers share. Its handlers
    read and change the :attr:`session`, use its :attr:`tokenizers` and its
    :attr:`budgets`, and talk back through the :attr:`client`; the server itself only
    registers them."""

    def __init__(self, server: GlassServer) -> None:
        self._server = server
        self.session = server.session
        self.tokenizers = server.tokenizers
        self.chats = server.chats
        self.client = server.client
        self.budgets = server.budgets

    def register(self) -> None:
        """Register every marked method with the server."""
        for name in dir(type(self)):
            mark: _Mark | None = getattr(getattr(type(self), name), "_glassllm_mark", None)
            if mark is None:
                continue
            handler = getattr(self, name)
            if mark.kind == "command":
                self._server.command(mark.name)(_function(handler))
            elif mark.kind == "message":
                self._server.feature(mark.name, mark.options)(_function(handler))
            else:
                self._server.feature(mark.name, mark.options)(_with_snapshot(self.session, handler))


def _function(handler: Callable[..., Any]) -> Callable[..., Any]:
    """A bound method as a function of its own (pygls marks what it registers), with the
    method's signature and type hints (pygls structures command arguments from them)."""
    if inspect.iscoroutinefunction(handler):

        @functools.wraps(handler)
        async def handle(*arguments: Any) -> Any:
            return await handler(*arguments)

        return handle

    @functools.wraps(handler)
    def handle_now(*arguments: Any) -> Any:
        return handler(*arguments)

    return handle_now


def _with_snapshot(session: Session, handler: Callable[..., Any]) -> Callable[[Any], Any]:
    """``handler(snapshot, params)`` as a pygls handler of ``params``, async if it is."""
    if inspect.iscoroutinefunction(handler):

        async def handle(params: Any) -> Any:
            return await handler(session.snapshot(params.text_document.uri), params)

        return handle

    def handle_now(params: Any) -> Any:
        return handler(session.snapshot(params.text_document.uri), params)

    return handle_now
