"""The repository's budget files followed while the editor is open (features/configuration.py):
the server asks clients that can register watchers to watch ``.glassllm.toml`` and
``pyproject.toml``; a change to one (``workspace/didChangeWatchedFiles``) re-checks the
open documents' budgets at once, without an edit: the diagnostic appears and goes away;
a malformed file is told once, naming it, however often it is saved."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from tests.server.lsp.test_diagnostics_budgets import current, file_document, settle
from tests.server.oracle import PT
from tests.server.session import LOOP, GlassClient, eventually, identifier, open_document

pytestmark = LOOP

TEXT = "Era uma vez um gato que comia muito"


def saved(client: GlassClient, path: Path, text: str | None) -> None:
    """Write (or, with None, delete) ``path`` and tell the server, as an editor's watcher does."""
    kind = types.FileChangeType.Changed if path.exists() else types.FileChangeType.Created
    if text is None:
        path.unlink()
        kind = types.FileChangeType.Deleted
    else:
        path.write_text(text, encoding="utf-8")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=path.as_uri(), type=kind)])
    )


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    return tmp_path


async def test_the_server_asks_to_watch_the_budget_files_where_the_client_can(client: GlassClient):
    async def registered() -> list[types.Registration]:
        return client.registrations

    workspace = client_capabilities(client.preset).workspace
    assert workspace is not None
    watched = workspace.did_change_watched_files
    if watched is None or not watched.dynamic_registration:
        # A request answered after initialized: any registration would have been asked first.
        uri = open_document(client, "Era uma vez")
        await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
        assert client.registrations == []
        return
    [registration] = await eventually(registered)
    assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    options = client.protocol._converter.structure(
        registration.register_options, types.DidChangeWatchedFilesRegistrationOptions
    )
    assert [watcher.glob_pattern for watcher in options.watchers] == ["**/.glassllm.toml", "**/pyproject.toml"]


async def test_a_saved_budget_file_rechecks_the_open_documents_without_an_edit(client: GlassClient, repository):
    uri = file_document(client, repository / "prompt.txt", TEXT)
    assert await settle(client, uri, 0) == []
    config = repository / ".glassllm.toml"
    saved(client, config, "maxTokens = 3\n")
    (diagnostic,) = await settle(client, uri, 1, "token 4 of 3 ")
    assert diagnostic.message.endswith(f"{len(PT.encode(TEXT)) - 3} over, Portuguese")
    # A pyproject.toml's table, the same way; then the budget raised, then the file gone.
    saved(client, config, None)
    assert await settle(client, uri, 0) == []
    pyproject = repository / "pyproject.toml"
    saved(client, pyproject, '[project]\nname = "x"\n\n[tool.glassllm]\nmaxTokens = 5\n')
    await settle(client, uri, 1, "token 6 of 5 ")
    saved(client, pyproject, "[tool.glassllm]\nmaxTokens = 1000\n")
    assert await settle(client, uri, 0) == []
    # The code lens is refreshed where the client can be asked to, and shows the new budget.
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(text_document=identifier(uri)))
    assert lenses and lenses[0].command and lenses[0].command.title.startswith(f"{len(PT.encode(TEXT))} / 1,000 ")
    workspace = client_capabilities(client.preset).workspace
    assert workspace is not None
    if workspace.code_lens is not None and workspace.code_lens.refresh_support:
        assert client.refreshes[types.WORKSPACE_CODE_LENS_REFRESH] > 0


async def test_a_malformed_budget_file_is_told_once_naming_it_however_often_saved(client: GlassClient, repository):
    uri = file_document(client, repository / "prompt.txt", TEXT)
    config = repository / ".glassllm.toml"
    saved(client, config, "maxTokens = 3\n")
    await settle(client, uri, 1)
    before = len(client.messages)
    for _ in range(4):  # saved again and again, as while fixing it
        saved(client, config, "maxTokens = [3\n")
    assert await settle(client, uri, 0) == []

    async def told() -> bool:
        return len(client.messages) > before

    assert await eventually(told)
    await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
    await current(client, uri)
    shown = [message.message for message in client.messages[before:]]
    assert len(shown) == 1, shown
    assert str(config) in shown[0] and "repository's budgets are not checked" in shown[0]
    saved(client, config, "maxTokens = 3\n")
    await settle(client, uri, 1, "token 4 of 3 ")
