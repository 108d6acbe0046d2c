"""Open in a browser end to end: the code actions, the ``glassllm.openInBrowser`` command
writing the ``--html`` page to the cache folder, ``window/showDocument`` with
``external``, and the message with the page's path where the client cannot open it.

The page's tokens are read back from the file and must be the library's: each piece's ID,
piece and tokenizer, for the tokenizer in use and for every compared one.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types

from glassllm import packaged
from glassllm.pipeline.chunks import chunk_text
from glassllm.shown.visible import visible
from tests.server.oracle import position_of, range_of
from tests.server.session import (
    LOOP,
    PRESETS,
    GlassClient,
    code_actions,
    command_of,
    file_of,
    open_document,
    read_code_actions_right,
    server_config,
    start_session,
)

pytestmark = LOOP

# The server writes pages to $XDG_CACHE_HOME/glassllm: a folder of this module's own.
CACHE = tempfile.mkdtemp(prefix="glassllm-test-browser-")
ENV = {**os.environ, "XDG_CACHE_HOME": CACHE}
PT, EN = packaged("pt"), packaged("en")
# Two lines (CRLF), accents that NFC composes, an emoji, no final newline.
TEXT = "Era uma vez\r\numa menina 🙂 que come\u0301u açaí"


@pytest_lsp.fixture(config=server_config(env=ENV), params=PRESETS, scope="module")
async def client(request: pytest.FixtureRequest, lsp_client: GlassClient):
    await start_session(lsp_client, request.param)
    read_code_actions_right(lsp_client)
    yield
    await lsp_client.shutdown_session()
    shutil.rmtree(CACHE, ignore_errors=True)


class PageTokens(HTMLParser):
    """The focusable pieces of a page, in order: (tokenizer, ID, piece as shown)."""

    def __init__(self) -> None:
        super().__init__()
        self.tokens: list[tuple[str, int, str]] = []
        self.lang = ""
        self.notes: list[str] = []
        self._in_note = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "html":
            self.lang = found.get("lang") or ""
        if tag == "span" and "tok" in (found.get("class") or "").split():
            self.tokens.append((found["data-tokenizer"] or "", int(found["data-id"] or ""), found["data-piece"] or ""))
        self._in_note = tag == "p" and found.get("class") == "note"

    def handle_data(self, data: str) -> None:
        if self._in_note:
            self.notes.append(data)
            self._in_note = False


def read_page(path: Path) -> PageTokens:
    parser = PageTokens()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def widened(text: str, start: int, end: int) -> str:
    """The text of the chunks that ``[start, end)`` (code points) touches."""
    touched = [(s, e) for _, s, e in chunk_text(text).spans() if s < end and start < e]
    return text[touched[0][0] : touched[-1][1]]


def expected_tokens(name: str, tokenizer: Any, text: str) -> list[tuple[str, int, str]]:
    return [(name, span.id, visible(span.piece)) for span in tokenizer.encode_spans(text)]


def selection_json(selection: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": selection.start.line, "character": selection.start.character},
        "end": {"line": selection.end.line, "character": selection.end.character},
    }


async def open_in_browser(client: GlassClient, uri: str, selection: types.Range, page: str) -> dict[str, Any]:
    answer = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="glassllm.openInBrowser", arguments=[uri, selection_json(selection), page])
    )
    assert isinstance(answer, dict), answer
    return answer


def assert_shown(client: GlassClient, answer: dict[str, Any]) -> None:
    """The client was asked to open the page outside the editor; or, without
    window/showDocument (pytest-lsp's Emacs preset), told where the page is."""
    if client.preset == "emacs":
        assert answer["opened"] is False
        message = client.messages[-1]
        assert message.type == types.MessageType.Info
        assert (
            message.message
            == f"glassllm: the page is in {answer['path']}; open that file in a browser to read it or hand it over."
        )
        return
    assert answer["opened"] is True
    shown = client.shown_documents[-1]
    assert shown.uri == answer["page"] and shown.external is True


async def test_the_code_actions_offer_both_pages_in_a_browser(client: GlassClient):
    uri = open_document(client, TEXT, name="story")
    selection = range_of(TEXT, 4, 7, client.encoding)
    actions = await code_actions(client, uri, selection)
    titles = [action.title for action in actions]
    assert titles == [
        "Explain BPE merges",
        "Compare tokenizers",
        "Explain BPE merges in a browser",
        "Compare tokenizers in a browser",
    ]
    for action, page in zip(actions[2:], ["explain", "compare"], strict=True):
        command = command_of(action)
        assert command.command == "glassllm.openInBrowser"
        assert list(command.arguments or []) == [uri, selection_json(selection), page]


async def test_the_explanation_opens_in_the_browser_with_the_librarys_tokens(client: GlassClient):
    uri = open_document(client, TEXT, name="história")
    # From inside "uma" on line 1 to inside "menina" on line 2: both chunks are widened.
    start, end = TEXT.index("ma vez"), TEXT.index("nina")
    answer = await open_in_browser(client, uri, range_of(TEXT, start, end, client.encoding), "explain")
    path = file_of(answer["page"])
    assert answer["path"] == str(path)
    assert path.parent == Path(CACHE) / "glassllm", "the cache folder, never the workspace"
    assert re.fullmatch(r"explain-história-\d+-[0-9a-f]{8}-1\.4-2\.10\.html", path.name), path.name
    assert_shown(client, answer)
    page = read_page(path)
    text = widened(TEXT, start, end)
    assert text == " uma vez\r\numa menina"
    assert page.tokens == expected_tokens("Portuguese (pt)", PT, text)
    assert page.lang == "en"
    (note,) = page.notes[:1]
    assert re.match(r"história-\d+\.txt, selection 1:6–2:6 · tokenizer: Portuguese \(pt\)", note), note
    # The same IDs as the server's own explanation page of that selection.
    explained = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="glassllm.explainMerges",
            arguments=[uri, selection_json(range_of(TEXT, start, end, client.encoding))],
        )
    )
    assert isinstance(explained, dict), explained
    assert [token_id for _, token_id, _ in page.tokens] == [i for chunk in explained["chunks"] for i in chunk["ids"]]


async def test_the_comparison_opens_with_every_compared_tokenizer(client: GlassClient):
    uri = open_document(client, TEXT, name="comparar")
    answer = await open_in_browser(client, uri, range_of(TEXT, 0, len(TEXT), client.encoding), "compare")
    path = file_of(answer["page"])
    assert path.name.startswith("compare-comparar-")
    assert_shown(client, answer)
    tokens = read_page(path).tokens
    assert tokens == expected_tokens("Portuguese (pt)", PT, TEXT) + expected_tokens("English (en)", EN, TEXT)


async def test_the_same_selection_keeps_its_page_name_and_the_page_follows_edits(client: GlassClient):
    uri = open_document(client, "Era uma vez", name="same")
    cursor = position_of("Era uma vez", 5, client.encoding)  # inside "uma": the token there
    first = await open_in_browser(client, uri, types.Range(start=cursor, end=cursor), "explain")
    again = await open_in_browser(client, uri, types.Range(start=cursor, end=cursor), "explain")
    assert first["path"] == again["path"]
    other = await open_in_browser(client, uri, range_of("Era uma vez", 0, 3, client.encoding), "explain")
    assert other["path"] != first["path"]
    assert read_page(Path(first["path"])).tokens == expected_tokens("Portuguese (pt)", PT, " uma")


async def test_portuguese_users_get_a_portuguese_page(client: GlassClient):
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"glassllm": {"locale": "pt"}})
    )
    try:
        uri = open_document(client, "Era uma vez", name="pt")
        answer = await open_in_browser(client, uri, range_of("Era uma vez", 0, 11, client.encoding), "compare")
        page = read_page(Path(answer["path"]))
        assert page.lang == "pt-BR"
        assert re.match(r"pt-\d+\.txt, seleção 1:1–1:11", page.notes[0]), page.notes[0]
        assert {name for name, _, _ in page.tokens} == {"português (pt)", "inglês (en)"}
        if client.preset == "emacs":
            assert client.messages[-1].message.startswith("glassllm: a página está em ")
    finally:
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"glassllm": {}}))


async def test_a_client_that_does_not_open_it_gets_the_path(client: GlassClient):
    """A client that refuses window/showDocument, or never offers it (Emacs's preset), is told the path."""
    handlers = client.protocol.fm.features
    default = handlers[types.WINDOW_SHOW_DOCUMENT]

    def refuse(params: types.ShowDocumentParams) -> types.ShowDocumentResult:
        return types.ShowDocumentResult(success=False)

    handlers[types.WINDOW_SHOW_DOCUMENT] = refuse
    try:
        uri = open_document(client, "Era uma vez", name="refused")
        answer = await open_in_browser(client, uri, range_of("Era uma vez", 0, 3, client.encoding), "explain")
    finally:
        handlers[types.WINDOW_SHOW_DOCUMENT] = default
    assert answer["opened"] is False
    assert Path(answer["path"]).is_file()
    assert client.messages[-1].message == (
        f"glassllm: the page is in {answer['path']}; open that file in a browser to read it or hand it over."
    )


async def test_an_empty_selection_with_no_text_writes_no_page(client: GlassClient):
    uri = open_document(client, "", name="empty")
    answer = await open_in_browser(client, uri, range_of("", 0, 0, client.encoding), "explain")
    assert answer["page"] is None and answer["opened"] is False
    assert client.messages[-1].message == "Nothing to explain: the selection holds no text."


EVERYTHING = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}}


@pytest.mark.parametrize(
    "arguments",
    [["URI"], ["URI", EVERYTHING], ["URI", {}, "explain"], ["URI", EVERYTHING, "neither"]],
)
async def test_wrong_arguments_are_invalid_params(client: GlassClient, arguments: list[Any]):
    uri = open_document(client, "Era", name="wrong")
    arguments = [uri if argument == "URI" else argument for argument in arguments]
    with pytest.raises(Exception) as raised:
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="glassllm.openInBrowser", arguments=arguments)
        )
    assert getattr(raised.value, "code", None) == -32602


@pytest.mark.parametrize("command", ["glassllm.explainMerges", "glassllm.compareTokenizers", "glassllm.openInBrowser"])
async def test_a_lone_surrogate_in_the_selection_is_written_and_named(client: GlassClient, command: str):
    """JSON can carry a lone surrogate, which no UTF-8 file can hold: every page is still
    written, and names the character as it names any invisible one."""
    text = "Era \ud800 vez"
    uri = open_document(client, text, name=f"surrogate-{command.rsplit('.', 1)[1]}")
    selection = selection_json(range_of(text, 0, len(text), client.encoding))
    arguments = [uri, selection, "explain"] if command == "glassllm.openInBrowser" else [uri, selection]
    answer = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=arguments)
    )
    assert answer is not None
    path = Path(answer["path"]) if "path" in answer else file_of(answer["page"])
    assert visible("\ud800") in path.read_text(encoding="utf-8")
