"""The shipped ``.pre-commit-hooks.yaml``, run by the real ``pre-commit`` in a scratch
repository: a commit over the repository's token budget is refused, one under it passes.

The scratch repository's ``.pre-commit-config.yaml`` names this checkout by its path and
its HEAD commit, as a user names the project's repository and a tag, so the hooks tested
are the committed ones. ``glassllm-tokens`` (``language: python``) makes pre-commit
install glassllm from the checkout into an environment of its own, once per test module;
pip takes glassllm's dependencies from the package index, as for a user.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pre_commit")

ROOT = Path(__file__).resolve().parents[1]
UNDER = "Era uma vez.\n"
OVER = "Era uma vez uma menina que morava numa casa amarela.\n" * 40


def _run(args: list[str], cwd: Path, environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=environment, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """pre-commit's and glassllm's caches in a temporary folder; first on PATH, a
    ``glassllm`` that runs the glassllm these tests import (for the system hook); and no
    git variables of a caller's (a hook running the suite) to point git elsewhere."""
    home = tmp_path_factory.mktemp("pre-commit-home")
    (home / "bin").mkdir()
    command = home / "bin" / "glassllm"
    command.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m glassllm.cli "$@"\n', encoding="utf-8")
    command.chmod(0o755)
    clean = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
    return clean | {
        "PRE_COMMIT_HOME": str(home / "pre-commit"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "PATH": f"{home / 'bin'}{os.pathsep}{clean.get('PATH', '')}",
        "LANG": "C.UTF-8",
    }


def _head() -> str:
    found = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    if found.returncode != 0:
        pytest.skip(f"{ROOT} is not a git checkout: pre-commit needs a commit to name")
    return found.stdout.strip()


@pytest.mark.timeout(900)
@pytest.mark.parametrize("hook", ["glassllm-tokens", "glassllm-tokens-system"])
def test_a_commit_over_the_budget_is_refused_and_one_under_passes(tmp_path, environment, hook):
    repository = tmp_path / "repo"
    repository.mkdir()
    git = ["git", "-C", str(repository)]
    for args in (["init", "-q"], ["config", "user.name", "Test"], ["config", "user.email", "test@example.com"]):
        _run([*git, *args], repository, environment)
    (repository / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {ROOT}\n    rev: {_head()}\n    hooks:\n      - id: {hook}\n", encoding="utf-8"
    )
    (repository / "pyproject.toml").write_text(
        '[[tool.glassllm.budgets]]\nfiles = "*.md"\nmaxTokens = 100\n', encoding="utf-8"
    )
    installed = _run([sys.executable, "-m", "pre_commit", "install"], repository, environment)
    assert installed.returncode == 0, installed.stdout + installed.stderr

    (repository / "under.md").write_text(UNDER, encoding="utf-8")
    _run([*git, "add", "-A"], repository, environment)
    passed = _run([*git, "commit", "-m", "under the budget"], repository, environment)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "glassllm token budgets" in passed.stdout + passed.stderr

    (repository / "over.md").write_text(OVER, encoding="utf-8")
    _run([*git, "add", "over.md"], repository, environment)
    refused = _run([*git, "commit", "-m", "over the budget"], repository, environment)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0, output
    assert "over.md: " in output and "over the budget of 100 for *.md (pt)" in output
    assert "under.md" not in output  # only the staged files are counted
    log = _run([*git, "log", "--format=%s"], repository, environment)
    assert log.stdout.splitlines() == ["under the budget"]
