"""editors/emacs/glassllm.el as an Emacs package, checked by Emacs' own tools in a real
Emacs 30: it byte-compiles with no warning, checkdoc finds nothing, package-lint (Debian's
elpa-package-lint) finds only what this machine or the project cannot change, it installs
with ``package-vc-install-from-checkout`` from a clone's folder as with
``package-install-file`` (test_emacs.py), and its MELPA recipe names the file.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from emacs_setup import PACKAGE, REPO, require_emacs

RECIPE = PACKAGE.parent / "recipes" / "glassllm"


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """glassllm.el alone in a folder, so that compiling leaves nothing in the checkout."""
    require_emacs("package-lint")
    folder = tmp_path_factory.mktemp("package")
    shutil.copy(PACKAGE, folder)
    return folder / PACKAGE.name


def _emacs(*arguments: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    environment = None if home is None else {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        ["emacs", "--batch", *arguments], capture_output=True, text=True, timeout=180, env=environment
    )


def _lines(output: str) -> list[str]:
    """What Emacs said, less the lines every batch Emacs prints on Debian."""
    return [line for line in output.splitlines() if line and not line.startswith("Loading /etc/emacs/")]


def test_it_byte_compiles_without_a_warning_and_no_client_loaded(copy):
    compiled = _emacs(
        "-Q",
        "--eval",
        f"(progn (setq byte-compile-error-on-warn t) (unless (byte-compile-file {json.dumps(str(copy))}) "
        "(kill-emacs 1)) (princ (format \"eglot:%s lsp-mode:%s\" (featurep 'eglot) (featurep 'lsp-mode))))",
    )
    assert compiled.returncode == 0, compiled.stderr
    assert [line for line in _lines(compiled.stderr) if "Warning" in line or "Error" in line] == []
    assert compiled.stdout == "eglot:nil lsp-mode:nil"
    assert copy.with_suffix(".elc").exists()


def test_checkdoc_finds_nothing(copy):
    checked = _emacs(
        "-Q",
        "--eval",
        f"(progn (find-file {json.dumps(str(copy))}) (checkdoc-current-buffer t)"
        ' (princ (if (get-buffer "*Style Warnings*")'
        ' (with-current-buffer "*Style Warnings*" (buffer-string)) "")))',
    )
    assert checked.returncode == 0, checked.stderr
    found = [line for line in checked.stdout.splitlines() if line.startswith(f"{copy.name}:")]
    assert found == [], "\n".join(found)


def test_package_lint_finds_only_what_cannot_be_changed_here(copy):
    linted = _emacs(
        "--eval",
        "(progn (package-activate-all) (require 'package-lint))",
        "-f",
        "package-lint-batch-and-exit",
        str(copy),
    )
    found = {line.split(": ", 2)[2] for line in _lines(linted.stderr) if line.startswith(f"{copy.name}:")}
    assert found == {
        # The project has no public URL yet, and none is invented.
        "Package should have a Homepage or URL header.",
        # package-lint 0.16 (Debian 12) predates Emacs 28: it takes any Emacs from 28 on
        # for unreleased. Emacs 29.1 is the first with eglot built in.
        "This makes the package uninstallable in all released Emacs versions.",
        # eglot 1.17 (Emacs 30's, or GNU ELPA's for Emacs 29) is checked against the
        # archives' contents, which this machine cannot download.
        "Package eglot is not installable.",
    }, linted.stderr


def test_it_installs_from_a_clone_with_package_vc(tmp_path):
    require_emacs()
    clone = tmp_path / "glassllm"
    (clone / "editors").mkdir(parents=True)
    shutil.copytree(PACKAGE.parent, clone / "editors" / "emacs")
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "add", "."], check=True)
    subprocess.run(
        ["git", "-C", str(clone), "-c", "user.name=glassllm", "-c", "user.email=tests@localhost", "commit", "-qm", "x"],
        check=True,
    )
    home = tmp_path / "home"
    home.mkdir()
    folder = clone / "editors" / "emacs"
    installed = _emacs(
        "--eval",
        f'(progn (package-initialize) (package-vc-install-from-checkout {json.dumps(str(folder))} "glassllm"))',
        home=home,
    )
    assert installed.returncode == 0, installed.stderr
    # A new Emacs finds it as a user's would: the autoloaded global mode.
    started = _emacs(
        "--eval",
        "(progn (package-activate-all) (princ (list (and (package-installed-p 'glassllm) t)"
        " (autoloadp (symbol-function 'global-glassllm-mode)))))",
        home=home,
    )
    assert started.stdout == "(t t)", started.stderr
    # What the install wrote beside the file is ignored by git.
    status = subprocess.run(["git", "-C", str(clone), "status", "--porcelain"], capture_output=True, text=True)
    assert status.stdout == ""


def test_the_melpa_recipe_names_the_package_file():
    recipe = RECIPE.read_text(encoding="utf-8")
    forms = [line for line in recipe.splitlines() if line and not line.startswith(";")]
    assert forms == ['(glassllm :files ("editors/emacs/glassllm.el"))']
    assert (REPO / "editors" / "emacs" / "glassllm.el") == PACKAGE
