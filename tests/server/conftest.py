"""Shared fixtures and helpers for the server tests: real clients over stdio, an
independent position oracle, and documents with every tricky case.

Fixtures (module scope; mark the test module with ``pytestmark = LOOP``):

- ``client``: a :class:`GlassClient` talking to ``python -m glassllm_server`` over stdio,
  initialized with the capabilities of each preset in :data:`PRESETS` (so each test runs
  under UTF-8, UTF-16 and UTF-32) and English locale;
- ``client_pt``: the same, with the client locale ``pt-BR``.

:func:`read_code_actions_right` makes a client tell code actions from bare commands.

To start a session of your own, use :func:`start_session` inside a ``pytest_lsp.fixture``
configured by :func:`server_config`.

The oracle (:func:`lsp_lines`, :func:`position_of`, :func:`offset_of`, :func:`covered`)
is written here from the specification, independently of ``glassllm_server.positions``,
so that the tests check the server rather than the server's own conversion code.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import sys
from collections import Counter
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

# Every case the issue lists, in one document: emoji (a surrogate pair in UTF-16), a ZWJ
# family, "e" + U+0301 that NFC composes, CJK, tabs, CRLF and a lone CR, form feed and
# U+2028 inside a line, a character the Portuguese tokenizer does not know (🧪), runs of
# spaces, and a last line without a newline.
TRICKY = (
    "Era uma vez, 🙂 caf\u00e9 e cafe\u0301!\r\n"
    "\tfam\u00edlia 👩\u200d👩\u200d👧 um\u2028dois\x0ctr\u00eas\r"
    "ana  banana   b — 猫 🧪!\n"
    "\n"
    "sem fim"
)

TEXTS = {
    "tricky": TRICKY,
    "empty": "",
    "one_line": "Era uma vez",
    "trailing_newline": "Era uma vez\n",
    "crlf": "um\r\ndois\r\n",
    "lone_cr": "um\rdois\rtrês",
    "emoji": "🙂🙂 a👩\u200d👩\u200d👧b",
    "combining": "cafe\u0301 nai\u0308ve \u0958x",
    "separators": "um\u2028dois\x0ctrês\x0b\x85quatro",
    "cjk_tabs": "\t猫\t犬 漢字\tabc",
}

_uris = itertools.count()


def new_uri(name: str = "doc") -> str:
    """A fresh document URI, so that tests sharing a server never collide."""
    return f"file:///tmp/glassllm-tests/{name}-{next(_uris)}.txt"


class GlassClient(LanguageClient):
    """pytest-lsp's test client, with what :func:`start_session` negotiated: the
    ``preset`` it speaks as, the position ``encoding`` and the ``server_capabilities``;
    ``refreshes`` counts the ``workspace/*/refresh`` requests the server sent, by method."""

    def __init__(self) -> None:
        # As pytest-lsp's own factory builds its client.
        super().__init__(converter_factory=default_converter)
        register_lsp_features(self)
        self.preset = ""
        self.encoding = "utf-16"
        self.server_capabilities = types.ServerCapabilities()
        self.refreshes: Counter[str] = Counter()


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
            workspace_folders=[types.WorkspaceFolder(uri="file:///tmp/glassllm-tests", name="tests")],
        )
    )
    client.encoding = str(result.capabilities.position_encoding or "utf-16")
    client.preset = preset
    client.server_capabilities = result.capabilities
    return result


@pytest_lsp.fixture(config=server_config(), params=PRESETS, scope="module")
async def client(request: pytest.FixtureRequest, lsp_client: GlassClient):
    await start_session(lsp_client, request.param)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=server_config(), params=PRESETS, scope="module")
async def client_pt(request: pytest.FixtureRequest, lsp_client: GlassClient):
    await start_session(lsp_client, request.param, locale="pt-BR")
    yield
    await lsp_client.shutdown_session()


def open_document(client: LanguageClient, text: str, name: str = "doc", version: int = 1) -> str:
    """Open ``text`` in the server under a fresh URI and return the URI."""
    uri = new_uri(name)
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


# The oracle


def lsp_lines(text: str) -> list[str]:
    """LSP lines of ``text`` with their endings (only \\n, \\r\\n, \\r break lines)."""
    lines, current, index = [], "", 0
    while index < len(text):
        character = text[index]
        current += character
        if character == "\r" and text[index + 1 : index + 2] == "\n":
            current += "\n"
            index += 1
        if character in "\r\n":
            lines.append(current)
            current = ""
        index += 1
    lines.append(current)
    return lines


def _units(character: str, encoding: str) -> int:
    code = ord(character)
    if encoding == "utf-8":
        return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
    if encoding == "utf-16":
        return 2 if code > 0xFFFF else 1
    return 1


def position_of(text: str, offset: int, encoding: str) -> types.Position:
    """The LSP position of code-point ``offset`` (a line ending's inside → its line's end)."""
    start = 0
    lines = lsp_lines(text)
    for number, line in enumerate(lines):
        if offset < start + len(line) or number == len(lines) - 1:
            content = line.rstrip("\r\n")
            column = min(offset - start, len(content))
            return types.Position(line=number, character=sum(_units(c, encoding) for c in content[:column]))
        start += len(line)
    raise AssertionError("unreachable")


def offset_of(text: str, position: types.Position, encoding: str) -> int:
    """The code-point offset of an LSP position (must be exact, not clamped)."""
    lines = lsp_lines(text)
    start = sum(len(line) for line in lines[: position.line])
    units = 0
    content = lines[position.line].rstrip("\r\n")
    for column, character in enumerate(content):
        if units == position.character:
            return start + column
        units += _units(character, encoding)
    assert units == position.character, f"{position} is inside a character or past the line"
    return start + len(content)


def covered(text: str, lsp_range: types.Range, encoding: str) -> str:
    """The characters of ``text`` that ``lsp_range`` covers."""
    return text[offset_of(text, lsp_range.start, encoding) : offset_of(text, lsp_range.end, encoding)]


def every_offset(text: str) -> list[int]:
    """Offsets of every character that an LSP position can point at (line endings'
    second character excluded)."""
    offsets, start = [], 0
    for line in lsp_lines(text):
        content = len(line.rstrip("\r\n"))
        offsets.extend(range(start, start + content + (1 if len(line) > content else 0)))
        start += len(line)
    return offsets


def range_of(text: str, start: int, end: int, encoding: str) -> types.Range:
    """The LSP range of code-point offsets ``[start, end)`` (oracle side)."""
    return types.Range(start=position_of(text, start, encoding), end=position_of(text, end, encoding))


def line_spans(tokenizer: Any, text: str) -> list[tuple[int, str, int, int]]:
    """``(id, piece, start, end)`` of every token, from ``encode_spans`` of each LSP line."""
    spans, start = [], 0
    for line in lsp_lines(text):
        spans.extend((s.id, s.piece, start + s.start, start + s.end) for s in tokenizer.encode_spans(line))
        start += len(line)
    return spans


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
