"""``glassllm/tokenizersChanged``: the server tells the client when ``glassllm/stats``
would answer otherwise without an edit (a tokenizer switched after its file loaded, a
packaged one switched, a compared one became ready), so that a status bar or a mode line
asks for its count again; never on an edit, nor on settings that leave the tokenizers be.

A load is made slower than the moment requests wait for it (``GRACE_SECONDS``) with a
FIFO the test writes the tokenizer file into, a piece at a time, over a few seconds
(:func:`tests.slow_pipe.slow_pipe`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio
import pytest_lsp
from lsprotocol import types

from glassllm import packaged
from glassllm.packaged import packaged_path
from glassllm_server.commands import TOKENIZERS_CHANGED
from glassllm_server.loads import GRACE_SECONDS
from tests.server.session import (
    LOOP,
    GlassClient,
    change_document,
    configure,
    eventually,
    open_document,
    server_config,
    start_session,
    stats,
)
from tests.slow_pipe import slow_pipe

pytestmark = LOOP

TEXT = "Era uma vez uma menina que gostava de chuva."
PT, EN = packaged("pt"), packaged("en")
# How long the FIFO takes to deliver the whole file: well past the grace.
SLOW_SECONDS = GRACE_SECONDS + 2.5


class Announcements:
    """The ``glassllm/tokenizersChanged`` notifications a client received, with when."""

    def __init__(self) -> None:
        self.received: list[tuple[float, Any]] = []

    def receive(self, params: Any) -> None:
        self.received.append((time.monotonic(), params))

    async def next(self, count: int = 1, timeout: float = 20.0) -> list[Any]:
        """The first ``count`` notifications, once they have arrived (fewer after ``timeout``)."""

        async def arrived() -> bool:
            return len(self.received) >= count

        await eventually(arrived, timeout)
        return [params for _, params in self.received[:count]]


ANNOUNCEMENTS = Announcements()


@pytest_lsp.fixture(config=server_config(), scope="module")
async def client(lsp_client: GlassClient):
    @lsp_client.feature(TOKENIZERS_CHANGED)
    def tokenizers_changed(params: Any) -> None:
        ANNOUNCEMENTS.receive(params)

    await start_session(lsp_client, "neovim@0.11")
    yield
    await lsp_client.shutdown_session()


@pytest_asyncio.fixture(loop_scope="module")
async def announcements(client: GlassClient) -> AsyncIterator[Announcements]:
    """The notifications of one test; the settings go back to the defaults after it."""
    ANNOUNCEMENTS.received.clear()
    yield ANNOUNCEMENTS
    configure(client, {})
    # Back to Portuguese: the notification of that switch came before this answer.
    assert (await stats(client, open_document(client, "probe")))["tokenizer"] == "pt"


def params_of(announced: Any) -> dict[str, Any]:
    return {"tokenizer": announced.tokenizer, "label": announced.label, "compare": list(announced.compare)}


async def test_a_load_that_outlasts_the_grace_is_announced_once_it_switches(
    client: GlassClient, announcements: Announcements, tmp_path: Path
):
    fifo = tmp_path / "english.json"
    uri = open_document(client, TEXT)
    writer = slow_pipe(fifo, packaged_path("en").read_bytes(), SLOW_SECONDS)
    pushed = time.monotonic()
    configure(client, {"tokenizer": str(fifo)})
    # The grace ends before the file does: the count is still Portuguese's, and nothing
    # has been announced.
    answer = await stats(client, uri)
    assert (answer["tokenizer"], answer["tokens"]) == ("pt", len(PT.encode(TEXT)))
    assert announcements.received == []
    (announced,) = await announcements.next()
    arrived = announcements.received[0][0]
    writer.join()
    assert arrived - pushed > GRACE_SECONDS
    # The file's tokenizer in use, and compared by default with both packaged ones.
    assert params_of(announced) == {"tokenizer": str(fifo), "label": "file english.json", "compare": ["pt", "en"]}
    answer = await stats(client, uri)
    assert (answer["tokenizer"], answer["tokens"]) == (str(fifo), len(EN.encode(TEXT)))
    await asyncio.sleep(0.5)
    assert len(announcements.received) == 1


async def test_a_compared_tokenizer_that_becomes_ready_is_announced(
    client: GlassClient, announcements: Announcements, tmp_path: Path
):
    fifo = tmp_path / "compared.json"
    uri = open_document(client, TEXT)
    slow_pipe(fifo, packaged_path("en").read_bytes(), SLOW_SECONDS)
    configure(client, {"compareWith": [str(fifo)]})
    answer = await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
    assert list(answer.compare) == [], "not ready: left out of the comparison"
    # The settings took `en` out of the comparison at once; the file joins it once loaded.
    gone, ready = await announcements.next(2)
    assert params_of(gone) == {"tokenizer": "pt", "label": "Portuguese (pt)", "compare": []}
    assert params_of(ready) == {"tokenizer": "pt", "label": "Portuguese (pt)", "compare": [str(fifo)]}
    answer = await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
    assert [(row.tokenizer, row.tokens) for row in answer.compare] == [(str(fifo), len(EN.encode(TEXT)))]


async def test_a_packaged_switch_is_announced_and_settings_that_keep_the_tokenizers_are_not(
    client: GlassClient, announcements: Announcements
):
    uri = open_document(client, TEXT)
    configure(client, {"inlayHints": {"tokenBoundaries": True}})
    assert (await stats(client, uri))["tokenizer"] == "pt"
    configure(client, {"tokenizer": "en"})
    (announced,) = await announcements.next()
    assert params_of(announced) == {"tokenizer": "en", "label": "English (en)", "compare": ["pt"]}
    assert (await stats(client, uri))["tokenizer"] == "en"
    configure(client, {"tokenizer": "en", "locale": "en"})
    assert (await stats(client, uri))["tokenizer"] == "en"
    await asyncio.sleep(0.5)
    assert len(announcements.received) == 1


async def test_a_file_within_the_grace_is_announced_once(
    client: GlassClient, announcements: Announcements, tmp_path: Path
):
    english = tmp_path / "english.json"
    english.write_bytes(packaged_path("en").read_bytes())
    uri = open_document(client, TEXT)
    configure(client, {"tokenizer": str(english)})
    # Answered after the load: the count is already the file's.
    assert (await stats(client, uri))["tokenizer"] == str(english)
    (announced,) = await announcements.next()
    assert announced.tokenizer == str(english)
    await asyncio.sleep(0.5)
    assert len(announcements.received) == 1


async def test_edits_announce_nothing(client: GlassClient, announcements: Announcements):
    uri = open_document(client, TEXT)
    text = TEXT
    for version in range(2, 12):
        text += " chuva"
        change_document(client, uri, version, text)
        assert (await stats(client, uri))["tokens"] == len(PT.encode(text))
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    await asyncio.sleep(0.5)
    assert announcements.received == []
