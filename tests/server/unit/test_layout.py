"""The server's layout rules, read from its source: no import circle (type-only imports
included), features never import features, and the command names are the ones editors
bind. (No function longer than a screen: tests/test_static_checks.py, project-wide.)"""

from __future__ import annotations

import ast
import json
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

from glassllm_server.commands import Command

ROOT = Path(__file__).resolve().parents[3]
SERVER = ROOT / "server" / "glassllm_server"


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


def import_graph(package: Path) -> dict[str, set[str]]:
    """Each module of ``package`` (a folder) and the package's modules it imports,
    type-only imports included. Importing ``a.b.c`` runs the packages ``a`` and ``a.b``
    first: they count."""

    def name(path: Path) -> str:
        parts = path.relative_to(package.parent).with_suffix("").parts
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    modules = {name(path): path for path in package.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets = set()
        for imported in imported_modules(path):
            parts = imported.split(".")
            targets.update(".".join(parts[:end]) for end in range(1, len(parts) + 1))
        graph[module] = {target for target in targets if target in modules and target != module}
    return graph


def circle(graph: dict[str, set[str]]) -> list[str] | None:
    """An import circle of ``graph`` (its modules in order), None when there is none."""
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as error:
        return list(error.args[1])
    return None


def test_the_servers_import_graph_has_no_circle():
    graph = import_graph(SERVER)
    assert {"glassllm_server.session", "glassllm_server.client"} <= graph["glassllm_server.server"]
    assert circle(graph) is None


def test_a_type_only_import_closes_a_circle(tmp_path: Path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "a.py").write_text("from pkg.b import thing\n", encoding="utf-8")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import other\n", encoding="utf-8"
    )
    found = circle(import_graph(package))
    assert found is not None and {"pkg.a", "pkg.b"} <= set(found)


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


def code_words(path: Path) -> set[str]:
    """The names, attributes and string literals of ``path``'s code (docstrings and
    comments, which may cite a kind as an example, left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found.add(node.value)
    return found


def test_the_server_names_no_model_kind():
    # A model's kind reaches the server only through the tokenizer's interface (its
    # ``kind``, ``method`` and ``search``, worded by glassllm.shown.search): a new kind is
    # added in the library alone.
    kinds = ("WordPiece", "WordLevel", "Unigram", "SentencePiece", "Tekken", "ByteLevelBPE", "MetaspaceBPE")
    for path in sorted(SERVER.rglob("*.py")):
        named = {kind for word in code_words(path) for kind in kinds if kind.lower() in word.lower()}
        assert not named, f"{path.relative_to(SERVER)} names {sorted(named)} in its code"
    assert "WordPiece" in code_words(ROOT / "glassllm" / "shown" / "search.py")
