"""Real clients of the server over stdio, for the end-to-end tests in ``tests/server/lsp``.

The ``client`` and ``client_pt`` fixtures (``tests/server/conftest.py``) are made by
:func:`session_fixture`; a module that needs a session of its own (its own cache folder,
locale, settings or server command) makes one the same way, by the fixture's name:
``client = session_fixture(cache=CACHE)``. Mark the test module with
``pytestmark = LOOP``. :func:`read_code_actions_right` makes a client tell code actions
from bare commands.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import os
import shutil
import sys
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pygls.uris import to_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

PRESETS = ["neovim@0.11", "visual-studio-code", "emacs"]
ENCODING_OF_PRESET = {"neovim@0.11": "utf-8", "visual-studio-code": "utf-16", "emacs": "utf-32"}
SERVER_COMMAND = [sys.executable, "-m", "glassllm_server"]
LOOP = pytest.mark.asyncio(loop_scope="module")
# The workspace folder every session opens; its documents' URIs are under it.
WORKSPACE = Path("/tmp/glassllm-tests")

_uris = itertools.count()


def new_uri(name: str = "doc", suffix: str = ".txt") -> str:
    """A fresh document URI, so that tests sharing a server never collide."""
    return f"{WORKSPACE.as_uri()}/{name}-{next(_uris)}{suffix}"


class GlassClient(LanguageClient):
    """pytest-lsp's test client, with what :func:`start_session` negotiated: the
    ``preset`` it speaks as, the position ``encoding`` and the ``server_capabilities``;
    ``refreshes`` counts the ``workspace/*/refresh`` requests the server sent, by method;
    ``registrations`` holds the capabilities it asked to register (``client/registerCapability``)."""

    def __init__(self) -> None:
        # As pytest-lsp's own factory builds its client.
        super().__init__(converter_factory=default_converter)
        register_lsp_features(self)
        self.preset = ""
        self.encoding = "utf-16"
        self.server_capabilities = types.ServerCapabilities()
        self.refreshes: Counter[str] = Counter()
        self.registrations: list[types.Registration] = []


def server_config(command: list[str] = SERVER_COMMAND, env: dict[str, str] | None = None) -> ClientServerConfig:
    """A :class:`GlassClient` connected to the server started by ``command``."""
    return ClientServerConfig(server_command=command, client_factory=GlassClient, server_env=env)


async def start_session(
    client: GlassClient,
    preset: str,
    *,
    locale: str | None = "en-US",
    options: Any = None,
    configuration: dict[str, Any] | None = None,
) -> types.InitializeResult:
    """Initialize ``client`` as the editor ``preset`` would, with refresh handlers."""
    client.refreshes.clear()

    def count_refreshes(method: str) -> None:
        def refresh(params: None) -> None:
            client.refreshes[method] += 1

        client.feature(method)(refresh)

    def register(params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)

    client.registrations.clear()
    client.feature(types.CLIENT_REGISTER_CAPABILITY)(register)
    for method in (
        types.WORKSPACE_INLAY_HINT_REFRESH,
        types.WORKSPACE_CODE_LENS_REFRESH,
        types.WORKSPACE_SEMANTIC_TOKENS_REFRESH,
    ):
        count_refreshes(method)

    if configuration is not None:
        client.set_configuration(configuration)
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(preset),
            locale=locale,
            initialization_options=options,
            workspace_folders=[types.WorkspaceFolder(uri=WORKSPACE.as_uri(), name="tests")],
        )
    )
    client.encoding = str(result.capabilities.position_encoding or "utf-16")
    client.preset = preset
    client.server_capabilities = result.capabilities
    return result


def session_fixture(
    presets: Sequence[str] | str = PRESETS,
    *,
    command: list[str] = SERVER_COMMAND,
    env: dict[str, str] | None = None,
    cache: str | None = None,
    code_actions: bool = False,
    **session: Any,
) -> Any:
    """A module-scoped fixture: a :class:`GlassClient` of the server started by
    ``command`` in ``env``, in a session :func:`start_session` began (``session`` holds
    its ``locale``, ``options``, ``configuration``) and ends with the module.

    A list of ``presets`` runs each test once per preset, the preset in its ID; one
    preset alone does not parametrize. ``cache``: a folder of the module's own that the
    server writes its pages to (``$XDG_CACHE_HOME``), removed after each session.
    ``code_actions``: the client reads code actions right (:func:`read_code_actions_right`).
    """
    if cache is not None:
        env = {**(os.environ if env is None else env), "XDG_CACHE_HOME": cache}
    only = presets if isinstance(presets, str) else None
    params = None if only is not None else list(presets)

    @pytest_lsp.fixture(config=server_config(command, env), params=params, scope="module")
    async def fixture(request: pytest.FixtureRequest, lsp_client: GlassClient):
        await start_session(lsp_client, only or request.param, **session)
        if code_actions:
            read_code_actions_right(lsp_client)
        yield
        await lsp_client.shutdown_session()
        if cache is not None:
            shutil.rmtree(cache, ignore_errors=True)

    return fixture


def configure(client: LanguageClient, section: dict[str, Any]) -> None:
    """Send ``section`` as the glassllm settings, as an editor does when the user changes them."""
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"glassllm": section}))


async def eventually(check: Callable[[], Awaitable[Any]], timeout: float = 10.0) -> Any:
    """Poll ``check`` (an async callable) until it returns a true value, or ``timeout``
    seconds have passed; its last value."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        result = await check()
        if result or asyncio.get_running_loop().time() > deadline:
            return result
        await asyncio.sleep(0.02)


async def configure_and_wait(client: LanguageClient, section: dict[str, Any]) -> None:
    """Send the glassllm settings ``section``, and return once the tokenizers it names
    are in use: a file loads off the server's event loop, and a real model's (a second or
    more) can outlast the moment requests wait for a load (see glassllm_server.loads)."""
    configure(client, section)
    uri = open_document(client, "probe", "probe")
    tokenizer, compared = section.get("tokenizer"), section.get("compareWith")

    async def in_use() -> bool:
        raw = await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
        names = {row.tokenizer for row in getattr(raw, "compare", ())}
        return (tokenizer is None or raw.tokenizer == tokenizer) and set(compared or ()) - {raw.tokenizer} <= names

    assert await eventually(in_use, 30), f"the server did not take {section} within 30 s"
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=identifier(uri)))


def identifier(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


def open_document(client: LanguageClient, text: str, name: str = "doc", version: int = 1, suffix: str = ".txt") -> str:
    """Open ``text`` in the server under a fresh URI (ending in ``suffix``) and return the URI."""
    uri = new_uri(name, suffix)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="plaintext", version=version, text=text)
        )
    )
    return uri


def change_document(client: LanguageClient, uri: str, version: int, *changes: str | tuple[types.Range, str]) -> None:
    """Send one didChange: a string replaces the whole text, ``(range, text)`` a part."""
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangeWholeDocument(text=change)
                if isinstance(change, str)
                else types.TextDocumentContentChangePartial(range=change[0], text=change[1])
                for change in changes
            ],
        )
    )


async def hover(client: LanguageClient, uri: str, position: types.Position) -> types.Hover | None:
    return await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
    )


def markdown(answer: types.Hover | None) -> str:
    """The text of a hover that must be there (the server writes hovers as Markdown)."""
    assert answer is not None, "no hover"
    assert isinstance(answer.contents, types.MarkupContent), answer.contents
    assert answer.contents.kind == types.MarkupKind.Markdown
    return answer.contents.value


def hover_range(answer: types.Hover | None) -> types.Range:
    """The range of a hover that must be there and have one."""
    assert answer is not None and answer.range is not None, answer
    return answer.range


async def stats(client: LanguageClient, uri: str, lsp_range: types.Range | None = None) -> Any:
    """``glassllm/stats`` as a plain dict."""
    params: dict[str, Any] = {"textDocument": {"uri": uri}}
    if lsp_range is not None:
        params["range"] = {
            "start": {"line": lsp_range.start.line, "character": lsp_range.start.character},
            "end": {"line": lsp_range.end.line, "character": lsp_range.end.character},
        }
    answer = await client.protocol.send_request_async("glassllm/stats", params)
    return {name: getattr(answer, name) for name in ("tokens", "chunks", "characters", "unknown", "tokenizer")}


async def code_actions(client: LanguageClient, uri: str, selection: types.Range) -> list[types.CodeAction]:
    """The code actions for ``selection`` (read with :func:`read_code_actions_right`): the
    server answers code actions, never bare commands."""
    answer = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=selection,
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert answer is not None
    actions = [action for action in answer if isinstance(action, types.CodeAction)]
    assert len(actions) == len(answer), answer
    return actions


def command_of(action: types.CodeAction) -> types.Command:
    """The command a code action runs (every action of the server has one)."""
    assert action.command is not None, action
    return action.command


def file_of(uri: str) -> Path:
    """The file a ``file:`` URI names."""
    path = to_fs_path(uri)
    assert path is not None, uri
    return Path(path)


def read_code_actions_right(client: LanguageClient) -> None:
    """lsprotocol 2025.0 reads every object with a ``command`` key as a Command, even a
    CodeAction whose ``command`` is an object: tell the test client apart properly."""
    converter = client.protocol._converter

    def structure(value: dict, _: object) -> types.Command | types.CodeAction:
        if isinstance(value.get("command"), str):
            return converter.structure(value, types.Command)
        return converter.structure(value, types.CodeAction)

    converter.register_structure_hook(types.Command | types.CodeAction, structure)


_NO_PARAMS = object()


async def send_raw(client: LanguageClient, method: str, params: Any = _NO_PARAMS, msg_id: str | None = None) -> Any:
    """Send a request exactly as given (malformed params, or none at all) and await
    the answer; a JSON-RPC error raises ``JsonRpcException``."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id or f"raw-{next(_uris)}", "method": method}
    if params is not _NO_PARAMS:
        message["params"] = params
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()
    client.protocol._request_futures[message["id"]] = future
    client.protocol._send_data(message)
    return await asyncio.wrap_future(future)


def send_raw_notification(client: LanguageClient, method: str, params: Any) -> None:
    client.protocol._send_data({"jsonrpc": "2.0", "method": method, "params": params})


async def semantic_tokens_full(client: GlassClient, uri: str) -> types.SemanticTokens:
    """The whole document's semantic tokens, which must be there."""
    answer = await client.text_document_semantic_tokens_full_async(
        types.SemanticTokensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert answer is not None
    return answer
