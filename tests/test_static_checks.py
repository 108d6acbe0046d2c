"""The project's static checks, run by the suite so that ``pytest`` (the README's test
command, and CI's) is the one command: ruff's linter and its formatter, and pyright over
the library, the server and the tests, each configured in pyproject.toml.

The tools are the ones the ``test`` extra installs into this interpreter's environment
(``python -m ruff``, ``python -m pyright``); pyright resolves imports in that same
environment and runs on the Node.js that ``pyright[nodejs]`` brings, so a clean machine
needs nothing else.
"""

from __future__ import annotations

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
