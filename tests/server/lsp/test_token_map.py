"""The token map of the workspace end to end: ``glassllm.tokenMap`` over stdio on a scratch
git workspace with a ``.gitignore``, a binary and a file over the size bound.

The page is the one ``glassllm tokens --html`` writes, in the cache folder, opened with
``window/showDocument`` ``external``; each file's count must be the library's. The count
runs in a child process: the server answers other requests meanwhile, reports progress,
and a cancel from the progress or the request stops the child and its workers.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import subprocess
import tempfile
from html import unescape
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import client_capabilities

from glassllm import packaged
from glassllm.file_tokens import MAX_FILE_BYTES
from tests.server.session import LOOP, GlassClient, eventually, open_document, server_config

pytestmark = LOOP

# The pages and the count cache go to $XDG_CACHE_HOME: a folder of this module's own.
CACHE = tempfile.mkdtemp(prefix="glassllm-test-map-")
WORKSPACE = Path(tempfile.mkdtemp(prefix="glassllm-test-map-workspace-"))
PT = packaged("pt")
TEXTS = {
    "README.md": "# Conto\n\nEra uma vez uma menina que morava numa casa amarela.\n",
    "docs/intro.md": "A menina comeu pão quente com o avô.\n" * 30,
    "docs/deep/note.txt": "Olá, mundo! 🙂\n",
    "src/app.py": 'print("olá")\n',
}
BUDGET = len(PT.encode(TEXTS["docs/intro.md"])) - 1  # docs/intro.md is over it by one


def _git(*args: str) -> None:
    subprocess.run(["git", "-C", str(WORKSPACE), *args], check=True, capture_output=True, timeout=60)


def _make_workspace() -> None:
    for name, text in TEXTS.items():
        (WORKSPACE / name).parent.mkdir(parents=True, exist_ok=True)
        (WORKSPACE / name).write_text(text, encoding="utf-8")
    (WORKSPACE / ".gitignore").write_text("build/\n*.log\n", encoding="utf-8")
    (WORKSPACE / ".glassllm.toml").write_text(f'[[budgets]]\nfiles = "docs/**"\nmaxTokens = {BUDGET}\n')
    (WORKSPACE / "build").mkdir()
    (WORKSPACE / "build" / "out.txt").write_text("gerado\n", encoding="utf-8")
    (WORKSPACE / "run.log").write_text("registro\n", encoding="utf-8")
    (WORKSPACE / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    with open(WORKSPACE / "dump.txt", "wb") as big:  # sparse: larger than the bound, nothing written
        big.truncate(MAX_FILE_BYTES + 1)
    _git("init", "-q")
    _git("add", "README.md", "src/app.py")  # tracked and untracked files are both mapped
    _git("-c", "user.name=glassllm", "-c", "user.email=tests@glassllm.invalid", "commit", "-qm", "start")


@pytest_lsp.fixture(
    config=server_config(env={**os.environ, "XDG_CACHE_HOME": CACHE}),
    params=[("visual-studio-code", "en-US"), ("neovim@0.11", "pt-BR")],
    scope="module",
)
async def client(request: pytest.FixtureRequest, lsp_client: GlassClient):
    if not (WORKSPACE / ".git").exists():
        _make_workspace()
    preset, locale = request.param
    # As an editor does: the server registers for the budget files (VS Code's preset).
    lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)(lambda params: None)
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(preset),
            locale=locale,
            workspace_folders=[types.WorkspaceFolder(uri=WORKSPACE.as_uri(), name=WORKSPACE.name)],
        )
    )
    lsp_client.preset = preset
    yield
    await lsp_client.shutdown_session()


def teardown_module() -> None:
    shutil.rmtree(CACHE, ignore_errors=True)
    shutil.rmtree(WORKSPACE, ignore_errors=True)


def english(client: GlassClient) -> bool:
    return client.preset == "visual-studio-code"


def token_map(client: GlassClient, msg_id: str | None = None) -> asyncio.Future[Any]:
    return asyncio.ensure_future(
        client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND, types.ExecuteCommandParams(command="glassllm.tokenMap"), msg_id=msg_id
        )
    )


def as_dict(value: Any) -> Any:
    """A command's answer, which pytest-lsp gives as namedtuples, as plain values."""
    if hasattr(value, "_asdict"):
        return {key: as_dict(item) for key, item in value._asdict().items()}
    if isinstance(value, list):
        return [as_dict(item) for item in value]
    return value


async def new_progress(client: GlassClient, seen: set[Any], kind: type, timeout: float = 30, says: str = "") -> Any:
    """The token of the progress begun since ``seen``, once it has sent a ``kind`` whose
    message holds ``says``."""

    async def found() -> Any:
        fresh = [token for token in client.progress_reports if token not in seen]
        reports = client.progress_reports[fresh[0]] if fresh else []
        sent = [report for report in reports if isinstance(report, kind)]
        return fresh[0] if any(says in (getattr(report, "message", "") or "") for report in sent) else None

    token = await eventually(found, timeout)
    assert token is not None, f"no {kind.__name__} within {timeout} s"
    return token


async def test_the_map_counts_what_git_lists_and_names_each_file_skipped(client: GlassClient):
    seen = set(client.progress_reports)
    answer = as_dict(await token_map(client))
    counts = {name: len(PT.encode(text)) for name, text in TEXTS.items()}
    counts |= {".gitignore": len(PT.encode("build/\n*.log\n"))}
    counts |= {".glassllm.toml": len(PT.encode((WORKSPACE / ".glassllm.toml").read_text()))}
    assert answer["cancelled"] is False and answer["folders"] == [str(WORKSPACE)]
    assert answer["tokenizers"] == ["pt"] and answer["tokens"] == {"pt": sum(counts.values())}
    assert answer["files"] == len(counts) and answer["over"] == ["docs/intro.md"]
    # build/ and run.log: git's excludes, each entry once.
    assert answer["ignored"] == 2 and answer["unreadable"] == []
    binary, large = (
        ("binary (a NUL byte in its first 8,000 bytes)", "larger than 10 MB")
        if english(client)
        else ("binário (um byte NUL nos primeiros 8.000 bytes)", "maior que 10 MB")
    )
    assert sorted(answer["skipped"], key=lambda file: file["path"]) == [
        {"path": "dump.txt", "reason": large},
        {"path": "logo.png", "reason": binary},
    ]
    page = unescape(Path(answer["path"]).read_text(encoding="utf-8"))
    assert answer["path"].startswith(CACHE) and answer["page"] == Path(answer["path"]).as_uri()
    assert ('<html lang="en">' if english(client) else '<html lang="pt-BR">') in page
    for name, count in counts.items():
        shown = f"{count:,} pt" if english(client) else f"{count:,} pt".replace(",", ".")
        assert f'<span class="name">{os.path.basename(name)}</span>' in page and shown in page, name
    assert f"<code>logo.png</code>: {binary}" in page and f"<code>dump.txt</code>: {large}" in page
    assert "out.txt" not in page and "run.log" not in page
    assert "<code>docs/intro.md</code>" in page  # over its budget
    # Opened in a browser; the progress named its bytes and ended with the totals.
    assert client.shown_documents[-1].uri == answer["page"] and client.shown_documents[-1].external is True
    token = await new_progress(client, seen, types.WorkDoneProgressEnd)
    begin, *_, end = client.progress_reports[token]
    assert isinstance(begin, types.WorkDoneProgressBegin) and isinstance(end, types.WorkDoneProgressEnd)
    assert begin.title == ("Token map of the workspace" if english(client) else "Mapa de tokens do espaço de trabalho")
    assert begin.cancellable is True
    total = sum(counts.values())
    assert end.message == (
        f"Token map: {len(counts)} files, {total} tokens (pt); 2 files not counted."
        if english(client)
        else f"Mapa de tokens: {len(counts)} arquivos, {total} tokens (pt); 2 arquivos não contados."
    )


async def test_a_folder_added_to_the_workspace_is_mapped_under_its_name(client: GlassClient, tmp_path: Path):
    second = tmp_path / "prompts"
    second.mkdir()
    (second / "system.txt").write_text("Responda em português.\n", encoding="utf-8")
    added = types.WorkspaceFolder(uri=second.as_uri(), name="prompts")
    change = types.WorkspaceFoldersChangeEvent(added=[added], removed=[])
    client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(event=change))
    try:
        answer = as_dict(await token_map(client))
        assert answer["folders"] == [str(WORKSPACE), str(second)]
        page = Path(answer["path"]).read_text(encoding="utf-8")
        # Two folders: each file under its folder's name.
        assert f'<span class="name">{WORKSPACE.name}/</span>' in page and '<span class="name">prompts/</span>' in page
        assert f"{len(PT.encode('Responda em português.' + chr(10)))} pt" in page
        assert answer["over"] == [f"{WORKSPACE.name}/docs/intro.md"]
    finally:
        change = types.WorkspaceFoldersChangeEvent(added=[], removed=[added])
        client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(event=change))
    assert as_dict(await token_map(client))["folders"] == [str(WORKSPACE)]


def _corpus(folder: Path, seed: int) -> None:
    """About 8 MB of text no cache has seen: some seconds of counting on two cores."""
    rng = random.Random(seed)
    letters = "abcdefghijlmnopqrstuvzáéíóúçã"
    words = ["".join(rng.choices(letters, k=rng.randint(2, 9))) for _ in range(4000)]
    folder.mkdir()
    for index in range(80):
        (folder / f"part-{index:02d}.txt").write_text(" ".join(rng.choices(words, k=16_000)), encoding="utf-8")


def _descendants(pid: int) -> list[str]:
    """The command lines of the processes under ``pid``."""
    children: dict[int, list[int]] = {}
    commands = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            commands[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    found, stack = [], list(children.get(pid, []))
    while stack:
        here = stack.pop()
        found.append(commands.get(here, ""))
        stack.extend(children.get(here, []))
    return found


@pytest.mark.parametrize("how", ["progress", "request"])
async def test_while_counting_the_server_answers_and_a_cancel_stops_the_child(client: GlassClient, how: str):
    corpus = WORKSPACE / "corpus"
    _corpus(corpus, seed=hash((client.preset, how)) & 0xFFFF)
    server = client._server  # the server's process, to find the child under it
    assert server is not None
    try:
        seen = set(client.progress_reports)
        request_id = f"map-{client.preset}-{how}"
        running = token_map(client, request_id)
        # The child's first report of bytes tokenized (the one before says how many files).
        token = await new_progress(client, seen, types.WorkDoneProgressReport, says="bytes")
        assert any("glassllm_server.token_map" in command for command in _descendants(server.pid))
        # The event loop is free: a document's count comes back while the map is counted.
        uri = open_document(client, "Era uma vez", "meanwhile")
        answer = await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
        assert answer.tokens == len(PT.encode("Era uma vez")) and not running.done()
        if how == "progress":
            client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
            assert as_dict(await running) == {"cancelled": True}
        else:
            client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=request_id))
            with pytest.raises(Exception) as raised:
                await running
            assert getattr(raised.value, "code", None) == -32800  # RequestCancelled

        async def ended() -> bool:
            return isinstance(client.progress_reports[token][-1], types.WorkDoneProgressEnd)

        assert await eventually(ended)
        said = client.progress_reports[token][-1]
        assert isinstance(said, types.WorkDoneProgressEnd) and said.message == (
            "Token map cancelled." if english(client) else "Mapa de tokens cancelado."
        )

        async def child_gone() -> bool:
            return not any("token_map" in command for command in _descendants(server.pid))

        assert await eventually(child_gone), _descendants(server.pid)
    finally:
        shutil.rmtree(corpus)
