"""The VS Code extension: its Node test suite and build, and its contract with the server.

Every server setting has a VS Code setting with the same default and vice versa (less the
settings only the extension reads), and every server command is contributed to the
Command Palette. The Node part (status text, debouncing and stale answers, the manifest,
the order in which the extension looks for a Python; the TypeScript build, which
type-checks the extension against the VS Code API) runs where npm is installed. The
packaged extension itself runs in a real VS Code in test_vscode_e2e.py.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from glassllm_server.features import create_server
from glassllm_server.settings import Settings, parse_settings

EXTENSION = Path(__file__).resolve().parents[2] / "editors" / "vscode"
MANIFEST = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
PROPERTIES: dict[str, dict] = MANIFEST["contributes"]["configuration"]["properties"]
# Read by the extension itself to start and trace the server; the server ignores them.
CLIENT_ONLY = {"glassllm.server.path", "glassllm.server.python", "glassllm.server.args", "glassllm.trace.server"}
SERVER_KEYS = {key: spec for key, spec in PROPERTIES.items() if key not in CLIENT_ONLY}
# The extension's own command: a quick pick that writes glassllm.tokenizer.
CLIENT_COMMANDS = {"glassllm.chooseTokenizer"}


def _other_valid_value(spec: dict):
    """A valid value that differs from the setting's default."""
    if spec["type"] == "boolean":
        return not spec["default"]
    if "enum" in spec:
        return next(value for value in spec["enum"] if value is not None and value != spec["default"])
    if "array" in spec["type"] and spec["items"]["type"] == "object":  # glassllm.budgets
        return [{name: _example(name, field) for name, field in spec["items"]["properties"].items()}]
    if "array" in spec["type"]:
        return ["en"]
    if "integer" in spec["type"]:
        return spec["minimum"] + 1
    return "en" if spec["default"] != "en" else "pt"


def _example(name: str, spec: dict):
    """A valid value of the field ``name`` of an object setting (a budget's)."""
    if "enum" in spec:
        return spec["enum"][-1]
    if spec["type"] == "integer":
        return spec["minimum"] + 1
    return {"files": "prompts/**", "tokenizer": "en"}[name]


def _invalid_value(spec: dict):
    """A value of the wrong type for the setting."""
    return "not valid" if "array" in spec["type"] else ["not", "valid"]


def _nested(key: str, value) -> dict:
    """``glassllm.inlayHints.chunkBoundaries`` → the object VS Code sends for the section."""
    *parents, leaf = key.removeprefix("glassllm.").split(".")
    section: dict = {leaf: value}
    for parent in reversed(parents):
        section = {parent: section}
    return section


@pytest.mark.parametrize("key", sorted(SERVER_KEYS))
def test_the_server_accepts_each_setting_and_its_default(key):
    spec = SERVER_KEYS[key]
    settings, problems = parse_settings(_nested(key, spec["default"]))
    assert problems == []
    assert settings == Settings(), f"{key}'s default in package.json is not the server's"
    _, problems = parse_settings(_nested(key, _invalid_value(spec)))
    assert [problem.key for problem in problems] == [key], f"the server does not read {key}"


def test_every_server_setting_has_a_vscode_setting():
    changed_by = {}
    for key, spec in SERVER_KEYS.items():
        settings, problems = parse_settings(_nested(key, _other_valid_value(spec)))
        assert problems == []
        for field in dataclasses.fields(Settings):
            if getattr(settings, field.name) != getattr(Settings(), field.name):
                changed_by[field.name] = key
    missing = {field.name for field in dataclasses.fields(Settings)} - set(changed_by)
    assert not missing, f"server settings without a VS Code setting: {sorted(missing)}"


def test_locale_is_unset_by_default_and_offers_both_languages():
    assert PROPERTIES["glassllm.locale"]["default"] is None
    assert PROPERTIES["glassllm.locale"]["enum"] == [None, "pt", "en"]


def test_every_server_command_is_contributed_and_vice_versa():
    server_commands = set(create_server().protocol.fm.commands)
    contributed = {entry["command"] for entry in MANIFEST["contributes"]["commands"]}
    assert contributed - CLIENT_COMMANDS == server_commands


@pytest.fixture(scope="module")
def built_extension(tmp_path_factory) -> Path:
    """The extension copied out of the checkout, `npm ci` and `npm test` run there."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed")
    work = tmp_path_factory.mktemp("vscode") / "glassllm"
    shutil.copytree(EXTENSION, work, ignore=shutil.ignore_patterns("node_modules", "out", "dist", "bundled", "*.vsix"))
    for command in ([npm, "ci", "--no-audit", "--no-fund"], [npm, "test"]):
        result = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, f"{' '.join(command[1:])} failed:\n{result.stdout}\n{result.stderr}"
    assert "# skipped 0" in result.stdout, f"some Node tests were skipped:\n{result.stdout}"
    return work


def test_node_suite_passes(built_extension):
    """`npm test` (run by the fixture) compiled the extension and all its tests passed."""
    assert (built_extension / "out" / "src" / "extension.js").is_file()
    assert (built_extension / "out" / "test" / "server.test.js").is_file()
