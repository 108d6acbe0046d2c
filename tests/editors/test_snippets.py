"""The snippets for Helix, Zed, Sublime Text and Kate: each one parses, starts
`glassllm-lsp` for plain text and Markdown, and hands the server settings it accepts.

No such editor is installed here, so each file is read with a parser for its syntax
(tomllib, json) and checked against what the editor's documentation says it reads.
(Emacs' glassllm.el runs in a real Emacs: tests/editors/test_emacs*.py.)
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from glassllm_server.settings import Settings, parse_settings

EDITORS = Path(__file__).resolve().parents[2] / "editors"
COMMAND = "glassllm-lsp"


def _accepted(section: Any) -> Settings:
    """The server's reading of a settings object a snippet sends; no setting may be refused."""
    settings, problems = parse_settings(section)
    assert problems == [], f"the server refuses {problems}"
    return settings


def test_helix():
    languages = tomllib.loads((EDITORS / "helix" / "languages.toml").read_text(encoding="utf-8"))
    server = languages["language-server"]["glassllm"]
    assert server["command"] == COMMAND
    assert _accepted(server["config"]).tokenizer == "pt"
    by_name = {language["name"]: language for language in languages["language"]}
    assert "glassllm" in by_name["markdown"]["language-servers"]
    assert "glassllm" in by_name["text"]["language-servers"]
    assert by_name["text"]["file-types"] == ["txt"]
    config = tomllib.loads((EDITORS / "helix" / "config.toml").read_text(encoding="utf-8"))
    assert config["editor"]["lsp"]["display-inlay-hints"] is True


def test_zed():
    settings = json.loads((EDITORS / "zed" / "settings.json").read_text(encoding="utf-8"))
    assert settings["inlay_hints"]["enabled"] is True
    assert _accepted(settings["lsp"]["glassllm"]["settings"]).tokenizer == "pt"
    for language in ("Markdown", "Plain Text"):
        assert "glassllm" in settings["languages"][language]["language_servers"]
    extension = tomllib.loads((EDITORS / "zed" / "extension" / "extension.toml").read_text(encoding="utf-8"))
    assert set(extension["language_servers"]["glassllm"]["languages"]) == {"Markdown", "Plain Text"}
    cargo = tomllib.loads((EDITORS / "zed" / "extension" / "Cargo.toml").read_text(encoding="utf-8"))
    assert cargo["lib"]["crate-type"] == ["cdylib"]
    assert "zed_extension_api" in cargo["dependencies"]
    source = (EDITORS / "zed" / "extension" / "src" / "lib.rs").read_text(encoding="utf-8")
    assert f'worktree.which("{COMMAND}")' in source
    assert "zed::register_extension!" in source


def test_sublime_text():
    # LSP 2.10+ reads servers from LanguageServers.sublime-settings, one key per server.
    servers = json.loads((EDITORS / "sublime" / "LanguageServers.sublime-settings").read_text(encoding="utf-8"))
    client = servers["glassllm"]
    assert client["enabled"] is True
    assert client["command"] == [COMMAND]
    assert {scope.strip() for scope in client["selector"].split("|")} == {"text.plain", "text.html.markdown"}
    assert _accepted(client["settings"]).tokenizer == "pt"
    settings = json.loads((EDITORS / "sublime" / "LSP.sublime-settings").read_text(encoding="utf-8"))
    assert settings == {"show_inlay_hints": True, "semantic_highlighting": True}


def test_kate():
    settings = json.loads((EDITORS / "kate" / "lsp-client-settings.json").read_text(encoding="utf-8"))
    server = settings["servers"]["glassllm"]
    assert server["command"] == [COMMAND]
    modes = re.compile(server["highlightingModeRegex"])
    assert modes.match("Markdown") and modes.match("None") and modes.match("Normal")
    assert not modes.match("Python")
    assert _accepted(server["settings"]).tokenizer == "pt"
