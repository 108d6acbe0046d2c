"""The project's static checks, run by the suite so that ``pytest`` (the README's test
command, and CI's) is the one command: ruff's linter and its formatter, and pyright over
the library, the server and the tests, each configured in pyproject.toml; and no function
of the library, the server, the corpora's script or the tests longer than a screen.

The tools are the ones the ``test`` extra installs into this interpreter's environment
(``python -m ruff``, ``python -m pyright``); pyright resolves imports in that same
environment and runs on the Node.js that ``pyright[nodejs]`` brings, so a clean machine
needs nothing else.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CHECKS = {
    "ruff check": ["ruff", "check", "."],
    "ruff format --check": ["ruff", "format", "--check", "."],
    "pyright": ["pyright", "--pythonpath", sys.executable],
}


# pyright reads the whole project: on a busy two-core machine that takes minutes.
@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", list(CHECKS))
def test_the_check_passes(name: str):
    # Without this, pyright's wrapper asks PyPI for a newer release on every run.
    environment = {**os.environ, "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"}
    found = subprocess.run(
        [sys.executable, "-m", *CHECKS[name]], cwd=ROOT, env=environment, capture_output=True, text=True
    )
    if found.returncode != 0:
        pytest.fail(f"`{name}` found problems:\n{found.stdout}{found.stderr}", pytrace=False)


# A function longer than this (its def to its last line) is split along its seams.
MAX_FUNCTION_LINES = 60


def test_no_function_is_longer_than_sixty_lines():
    long = [
        f"{path.relative_to(ROOT)}: {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for folder in ("glassllm", "server", "corpora", "tests")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long
