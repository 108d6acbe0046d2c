"""A user's Emacs for the Emacs tests: glassllm.el installed as a package with
``package-install-file`` into a fresh home, and the README's init lines with this
machine's server. Under ``CI=true`` a missing Emacs fails the tests; elsewhere they skip,
naming the script that installs it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "editors" / "emacs" / "glassllm.el"


def emacs_major() -> int:
    emacs = shutil.which("emacs")
    if emacs is None:
        return 0
    found = subprocess.run(
        [emacs, "--batch", "-Q", "--eval", "(princ emacs-major-version)"], capture_output=True, text=True, timeout=60
    )
    return int(found.stdout) if found.stdout.isdigit() else 0


def require_emacs(*libraries: str) -> None:
    """Skip (fail under CI) unless Emacs 29+ runs here with each of ``libraries``
    available the way a user's Emacs finds them (Debian's elpa-* packages)."""
    message = "needs Emacs 29+ (eglot built in), lsp-mode and package-lint: run `sudo bash editors/setup.sh`"
    ready = emacs_major() >= 29
    if ready and libraries:
        located = " ".join(f'(locate-library "{library}")' for library in libraries)
        found = subprocess.run(
            ["emacs", "--batch", "--eval", f"(progn (package-activate-all) (princ (and {located} t)))"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        ready = found.stdout == "t"
    if not ready:
        pytest.skip(f"{message} (editors/setup/emacs.sh)")


def readme_init_lines() -> str:
    """The README's Emacs Lisp block (the same in both languages)."""
    blocks = []
    for name in ("README.md", "README.pt-BR.md"):
        found = re.findall(r"^```elisp\n(.*?)^```", (REPO / name).read_text(encoding="utf-8"), flags=re.S | re.M)
        assert len(found) == 1, f"{name} should have one elisp block"
        blocks.append(found[0])
    assert blocks[0] == blocks[1], "the READMEs show different Emacs setups"
    return blocks[0]


def server_command() -> list[str]:
    """The server installed with this interpreter (a virtual environment's, in general)."""
    script = Path(sys.executable).with_name("glassllm-lsp")
    return [str(script)] if script.exists() else [sys.executable, "-m", "glassllm_server"]


def init_file(folder: Path, before: str = "") -> Path:
    """``before`` (say, the choice of client), then the README's lines with this
    machine's server command."""
    server = " ".join(json.dumps(part) for part in server_command())
    lines, replaced = re.subn(
        r"\(setq glassllm-server-command '\([^)]*\)\)",
        f"(setq glassllm-server-command '({server}))",
        readme_init_lines(),
    )
    assert replaced == 1, "the README should show how to set glassllm-server-command"
    path = folder / "init.el"
    path.write_text(before + lines, encoding="utf-8")
    return path


def install_package(home: Path) -> str:
    """``M-x package-install-file`` of editors/emacs/glassllm.el in a fresh Emacs whose
    home is ``home``; returns what Emacs printed (its byte-compilation included)."""
    assert not (home / ".emacs.d").exists(), "the user's Emacs directory should be fresh"
    environment = {**os.environ, "HOME": str(home)}
    install = f"(progn (package-initialize) (package-install-file {json.dumps(str(PACKAGE))}))"
    run = subprocess.run(
        ["emacs", "--batch", "--eval", install],
        env=environment,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, f"package-install-file failed:\n{run.stderr[-3000:]}"
    installed = list((home / ".emacs.d" / "elpa").glob("glassllm-*/glassllm.elc"))
    assert len(installed) == 1, f"no compiled glassllm in {home / '.emacs.d' / 'elpa'}"
    return run.stderr


def run_session(session: Path, environment: dict[str, str], out: Path) -> dict[str, Any]:
    """Run the Elisp ``session`` in real Emacs (``--batch``) and return the JSON report it
    writes to ``out``."""
    run = subprocess.run(
        ["emacs", "--batch", "-l", str(session)], env=environment, capture_output=True, text=True, timeout=180
    )
    assert run.returncode == 0 and out.exists(), f"Emacs failed ({run.returncode}):\n{run.stderr[-3000:]}"
    return json.loads(out.read_text(encoding="utf-8"))
