"""The server's layout rules, read from its source: features never import features, no
function is longer than a screen, and the command names are the ones editors bind."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from glassllm_server.commands import Command

ROOT = Path(__file__).resolve().parents[3]
SERVER = ROOT / "server" / "glassllm_server"
# A function longer than this (its def to its last line) is split along its seams.
MAX_FUNCTION_LINES = 60


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, at run time or for type checking alone (an
    ``if TYPE_CHECKING:`` block is walked like the rest); ``from a import b`` names
    ``a.b`` too, which is the module when ``b`` is one."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_imported_modules_sees_type_only_imports(tmp_path: Path):
    module = tmp_path / "m.py"
    module.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from a.b import c\n", encoding="utf-8")
    assert {"a.b", "a.b.c"} <= imported_modules(module)


def test_no_feature_imports_another_feature():
    features = sorted((SERVER / "features").glob("*.py"))
    assert len(features) > 10
    for path in features:
        if path.name == "__init__.py":
            continue  # the registry of every feature
        imported = {name for name in imported_modules(path) if name.startswith("glassllm_server.features")}
        assert not imported, f"features/{path.name} imports {sorted(imported)}"


def test_the_commands_are_the_ones_the_vs_code_extension_contributes():
    manifest = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text(encoding="utf-8"))
    contributed = {entry["command"] for entry in manifest["contributes"]["commands"]}
    assert {command.value for command in Command} <= contributed
    # The extension's own (choosing a tokenizer) is the only one the server does not run.
    assert contributed - {command.value for command in Command} == {"glassllm.chooseTokenizer"}


def test_no_function_is_longer_than_sixty_lines():
    long = [
        f"{path.relative_to(SERVER)}: {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for path in sorted(SERVER.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long
