"""Which budget applies to an open document (``glassllm_server.budgets``), without a
client: the editor's settings first, then the repository's configuration read as
``glassllm tokens`` reads it (again when it changes, told once when broken, never
outside the folders a TCP server is confined to); and the check, once per state."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from glassllm_server.features import create_server
from glassllm_server.server import GlassServer

# What the servers below showed the user.
shown: list[str] = []


def server(root: Path, **settings: object) -> GlassServer:
    made = create_server()
    made.session.root_path = root
    made.session.configure(settings)
    made.client.show = lambda message, kind=None: shown.append(message)  # type: ignore[method-assign]
    return made


def repository(root: Path, config: str, name: str = ".glassllm.toml") -> Path:
    (root / ".git").mkdir(exist_ok=True)
    (root / name).write_text(config, encoding="utf-8")
    return root / name


def test_the_settings_win_then_the_repository_then_none(tmp_path: Path):
    repository(tmp_path, 'maxTokens = 50\n[[budgets]]\nfiles = "prompts/"\nmaxTokens = 5\ntokenizer = "en"\n')
    uri = (tmp_path / "prompts" / "a.txt").as_uri()
    plain = server(tmp_path)
    applied = plain.budgets.applied(uri)
    assert applied is not None
    assert (applied.budget.max_tokens, applied.tokenizer, applied.source) == (5, "en", str(tmp_path / ".glassllm.toml"))
    # The repository's default tokenizer is the command's, pt, not the editor's.
    other = plain.budgets.applied((tmp_path / "b.txt").as_uri())
    assert other is not None and (other.budget.max_tokens, other.tokenizer) == (50, "pt")
    # A settings budget by glob, and the settings' maxTokens: either wins over the file.
    # A settings budget by glob, and the settings' maxTokens: either wins over the file; a
    # settings budget counts with the tokenizer in use.
    globbed = server(tmp_path, budgets=[{"files": "*.txt", "maxTokens": 7}]).budgets.applied(uri)
    assert globbed is not None and (globbed.budget.max_tokens, globbed.tokenizer, globbed.source) == (
        7,
        "pt",
        "settings",
    )
    everywhere = server(tmp_path, maxTokens=9).budgets.applied(uri)
    assert everywhere is not None and everywhere.budget.max_tokens == 9
    # An untitled document has no path: the plain maxTokens alone.
    assert server(tmp_path, maxTokens=9).budgets.applied("untitled:Untitled-1") is not None
    assert plain.budgets.applied("untitled:Untitled-1") is None


def test_the_repository_is_read_again_when_its_file_changes_and_told_once_when_broken(tmp_path: Path):
    config = repository(tmp_path, "maxTokens = 50\n")
    made = server(tmp_path)
    uri = (tmp_path / "a.txt").as_uri()
    assert made.budgets.applied(uri).budget.max_tokens == 50  # type: ignore[union-attr]
    config.write_text("maxTokens = 60\n", encoding="utf-8")
    os.utime(config, ns=(0, 10**9))  # another time, whatever the clock's resolution
    assert made.budgets.applied(uri).budget.max_tokens == 60  # type: ignore[union-attr]
    shown.clear()
    config.write_text("maxtokens = 60\n", encoding="utf-8")
    os.utime(config, ns=(0, 2 * 10**9))
    for _ in range(3):
        assert made.budgets.applied(uri) is None
    assert len(shown) == 1 and "unknown key 'maxtokens'" in shown[0], shown
    # A pyproject.toml without the table is passed over, as the command passes it.
    config.unlink()
    repository(tmp_path, '[project]\nname = "x"\n', "pyproject.toml")
    assert made.budgets.applied(uri) is None


def test_a_confined_server_reads_no_configuration_outside_its_folders(tmp_path: Path):
    repository(tmp_path, "maxTokens = 50\n")
    made = server(tmp_path)
    made.session.confined_to = (tmp_path / "elsewhere",)
    assert made.budgets.applied((tmp_path / "a.txt").as_uri()) is None


def test_a_check_is_made_once_per_state_of_the_document(tmp_path: Path):
    made = server(tmp_path, maxTokens=3)
    document = made.session.open_documents.open(
        (tmp_path / "a.txt").as_uri(), "Era uma vez um gato", 1, made.tokenizers.in_use
    )
    first = asyncio.run(made.budgets.check(document.snapshot()))
    assert first is not None and first.largest == 8 and len(first.over()) == 1
    assert asyncio.run(made.budgets.check(document.snapshot())) is first
    document.apply_change(None, None, "Era")
    second = asyncio.run(made.budgets.check(document.snapshot()))
    assert second is not first and second is not None and second.over() == []
