"""The snippets for Helix, Emacs, Zed, Sublime Text and Kate: each one parses, starts
`glassllm-lsp` for plain text and Markdown, and hands the server settings it accepts.

No such editor is installed here, so each file is read with a parser for its syntax
(tomllib, json, and a small reader of Emacs Lisp s-expressions) and checked against what
the editor's documentation says it reads.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from glassllm_server.settings import Settings, parse_settings

EDITORS = Path(__file__).resolve().parents[2] / "editors"
COMMAND = "glassllm-lsp"


def _accepted(section: Any) -> Settings:
    """The server's reading of a settings object a snippet sends; no setting may be refused."""
    settings, problems = parse_settings(section)
    assert problems == [], f"the server refuses {problems}"
    return settings


class Symbol(str):
    """An Emacs Lisp symbol (strings stay plain ``str``)."""


def read_elisp(text: str) -> list[Any]:
    """The forms of an Emacs Lisp file: lists, strings, symbols; 'x reads as (quote x),
    #'f as (function f), and a dotted pair whose tail is a list as the joined list.

    Enough of the reader for configuration snippets; an unbalanced parenthesis or an
    unterminated string raises ValueError.
    """
    pattern = re.compile(
        r"""\s+|;[^\n]*|(?P<open>\()|(?P<close>\))|(?P<quote>#?')|"(?P<string>(?:[^"\\]|\\.)*)"|(?P<atom>[^\s()'";]+)""",
        re.S,
    )
    stack: list[list[Any]] = [[]]
    quotes: list[tuple[int, str]] = []
    position = 0
    while position < len(text):
        match = pattern.match(text, position)
        if match is None:
            raise ValueError(f"cannot read at offset {position}: {text[position : position + 20]!r}")
        position = match.end()
        if match["open"]:
            stack.append([])
            continue
        if match["close"]:
            if len(stack) == 1:
                raise ValueError(f"unbalanced ')' at offset {match.start()}")
            value: Any = stack.pop()
            if len(value) >= 2 and value[-2] == "." and isinstance(value[-1], list):
                value = value[:-2] + value[-1]  # (a . (b c)) is (a b c)
        elif match["quote"]:
            quotes.append((len(stack), "function" if match["quote"] == "#'" else "quote"))
            continue
        elif match["string"] is not None:
            value = re.sub(r"\\(.)", r"\1", match["string"])
        elif match["atom"]:
            value = Symbol(match["atom"])
        else:
            continue
        while quotes and quotes[-1][0] == len(stack):
            value = [Symbol(quotes.pop()[1]), value]
        stack[-1].append(value)
    if len(stack) != 1 or quotes:
        raise ValueError("unbalanced '(' or a dangling quote at the end of the file")
    return stack[0]


def plist_to_json(value: Any) -> Any:
    """eglot's JSON convention: a plist is an object, t is true, :json-false is false."""
    if isinstance(value, list) and value and all(isinstance(key, Symbol) and key.startswith(":") for key in value[::2]):
        return {key[1:]: plist_to_json(item) for key, item in zip(value[::2], value[1::2], strict=False)}
    if value == Symbol("t"):
        return True
    if value == Symbol(":json-false"):
        return False
    return value


def test_the_elisp_reader_reads_and_rejects():
    assert read_elisp("((x) . (y z))") == [[["x"], "y", "z"]]
    assert read_elisp('(a \'b #\'c "d \\" e") ; note\n(f)') == [
        ["a", ["quote", "b"], ["function", "c"], 'd " e'],
        ["f"],
    ]
    with pytest.raises(ValueError):
        read_elisp("(a (b)")
    with pytest.raises(ValueError):
        read_elisp("(a))")
    assert plist_to_json(read_elisp('(:a t :b :json-false :c (:d "x"))')[0]) == {"a": True, "b": False, "c": {"d": "x"}}


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


def test_emacs_eglot():
    """The file that test_emacs.py also runs in a real Emacs: here, its declarations."""
    forms = read_elisp((EDITORS / "emacs" / "glassllm.el").read_text(encoding="utf-8"))
    defaults = {form[1]: form[2] for form in forms if form[:1] == ["defcustom"]}
    assert defaults["glassllm-server-command"] == ["quote", [COMMAND]]
    assert {"text-mode", "markdown-mode"} <= set(defaults["glassllm-modes"][1])
    programs = next(form for form in forms if form[:2] == ["add-to-list", ["quote", "eglot-server-programs"]])
    assert "glassllm-modes" in str(programs) and "glassllm-server-command" in str(programs)
    configuration = next(form for form in forms if form[:2] == ["setq-default", "eglot-workspace-configuration"])
    assert _accepted(plist_to_json(configuration[2][1])).tokenizer == "pt"
    assert ["add-hook", ["quote", "text-mode-hook"], ["function", "glassllm-ensure"]] in forms
    keymap = next(form for form in forms if form[:2] == ["defvar", "glassllm-mode-map"])
    assert ["define-key", "map", ["kbd", "C-c g e"], ["function", "glassllm-explain"]] in keymap[2][2:]


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
