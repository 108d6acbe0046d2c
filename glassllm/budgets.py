"""Token budgets: how many tokens a file may have, read from the repository or from settings.

A budget names files by a glob and gives them a ``maxTokens``; it may name its own
``tokenizer`` and a ``severity`` (``"error"``, the default, or ``"warning"``). A plain
``maxTokens`` applies to every file no budget names. The same keys live in the
``[tool.glassllm]`` table of ``pyproject.toml`` or in a ``.glassllm.toml`` (at its top
level), so that the editor and CI can read one file; :func:`parse_budgets` takes them
from any mapping too (the editor's settings ``glassllm.budgets`` and
``glassllm.maxTokens``, once the language server reads them)::

    [tool.glassllm]
    tokenizer = "tests/fixtures/models/llama3/tokenizer.json"   # the default for every budget
    maxTokens = 8000                                             # any file no budget names

    [[tool.glassllm.budgets]]
    files = "docs/**/*.md"
    maxTokens = 4000
    severity = "warning"

Globs are matched gitignore-style against the path relative to the configuration's
folder, with ``/`` between folders: ``*`` and ``?`` never cross a ``/``, ``[abc]`` is a
class (``[!abc]`` its complement), ``**`` as a whole segment is any number of folders;
a glob without a ``/`` (but a trailing one) matches a name at any depth, one with a
``/`` is anchored at the configuration's folder (a leading ``/`` says so alone); a glob
that names a folder covers everything under it. When several budgets match a file, the
last one listed applies (so a general budget comes first, exceptions after it).

A bad configuration raises ``ValueError`` with one line naming the file and the key
(``pyproject.toml: tool.glassllm.budgets[1].maxTokens must be a positive integer``).
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from glassllm.formats.files import read_bounded_bytes
from glassllm.packaged import PACKAGED
from glassllm.shown.problems import problem

__all__ = [
    "CONFIG_NAMES",
    "Budget",
    "BudgetConfig",
    "Severity",
    "find_budgets",
    "glob_regex",
    "parse_budgets",
    "read_budgets",
]

Severity = Literal["warning", "error"]
SEVERITIES: tuple[Severity, ...] = ("warning", "error")
# Looked for in this order in each folder, from the current one up to the repository's root.
CONFIG_NAMES = (".glassllm.toml", "pyproject.toml")
_TOP_KEYS = ("tokenizer", "maxTokens", "budgets")
_BUDGET_KEYS = ("files", "maxTokens", "tokenizer", "severity")
# A configuration file is a few lines; this bound only keeps a wrong path from being read whole.
_MAX_CONFIG_BYTES = 1 << 20


@dataclass(frozen=True)
class Budget:
    """At most ``max_tokens`` tokens for the files ``files`` matches, counted with
    ``tokenizer`` (``None``: the default one)."""

    files: str
    max_tokens: int
    tokenizer: str | None = None
    severity: Severity = "error"

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return glob_regex(self.files)

    def matches(self, relative: str) -> bool:
        """Whether the budget names ``relative`` (a path with ``/`` between folders)."""
        return self.pattern.fullmatch(relative) is not None


@dataclass(frozen=True)
class BudgetConfig:
    """The budgets read from ``source`` (a file, or ``"settings"``), their globs relative
    to ``root``; ``max_tokens`` bounds every file no budget names."""

    budgets: tuple[Budget, ...] = ()
    max_tokens: int | None = None
    tokenizer: str | None = None
    root: Path = field(default_factory=Path)
    source: str = ""

    def budget_for(self, path: str | Path) -> Budget | None:
        """The budget that applies to ``path``: the last one whose glob matches it, else
        the plain ``maxTokens``, else none. A path outside ``root`` gets the plain one."""
        relative = os.path.relpath(os.path.abspath(path), os.path.abspath(self.root)).replace(os.sep, "/")
        if not relative.startswith("../") and relative != "..":
            for budget in reversed(self.budgets):
                if budget.matches(relative):
                    return budget
        return None if self.max_tokens is None else Budget("**", self.max_tokens)


def glob_regex(glob: str) -> re.Pattern[str]:
    """The regular expression of a budget's glob (see the module's rules)."""
    folder = glob.endswith("/")
    body = glob.rstrip("/")
    anchored = "/" in body
    segments = body.lstrip("/").split("/")
    parts = [] if anchored else ["(?:[^/]*/)*"]
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            parts.append(".*" if last else "(?:[^/]*/)*")
        else:
            parts.append(_segment_regex(segment) + ("" if last else "/"))
    # A glob that names a folder covers what is under it; one that ends in "/" only that.
    parts.append("/.*" if folder else "(?:/.*)?")
    return re.compile("".join(parts), re.DOTALL)


_GLOB_PART = re.compile(r"\*+|\?|\[!?\]?[^\]]*\]|[^*?\[]+|\[")


def _segment_regex(segment: str) -> str:
    out = []
    for part in _GLOB_PART.findall(segment):
        if part.startswith("*"):
            out.append("[^/]*")
        elif part == "?":
            out.append("[^/]")
        elif part.startswith("[") and len(part) > 1:
            inner = part[1:-1]
            negated = inner.startswith("!")
            inner = inner[1:] if negated else inner
            body = re.escape(inner).replace(r"\-", "-")
            out.append(f"[^/{body}]" if negated else f"[{body}]")
        else:
            out.append(re.escape(part))
    return "".join(out)


def parse_budgets(data: Mapping[str, Any], source: str, root: Path, prefix: str = "") -> BudgetConfig:
    """Validate budgets already parsed (a TOML table, the editor's settings as JSON).
    ``source`` names them in errors and ``prefix`` is their table's key there
    (``"tool.glassllm."``); a tokenizer's relative path is relative to ``root``."""
    _known(data, _TOP_KEYS, source, prefix.rstrip("."))
    tokenizer = _tokenizer(data, "tokenizer", source, prefix, root)
    max_tokens = _max_tokens(data, "maxTokens", source, prefix, required=False)
    listed = data.get("budgets", [])
    if not isinstance(listed, list):
        raise problem(ValueError, "budgets.list", path=source, key=f"{prefix}budgets", found=_kind(listed))
    budgets = tuple(_budget(entry, source, f"{prefix}budgets[{index}]", root) for index, entry in enumerate(listed))
    return BudgetConfig(budgets, max_tokens, tokenizer, root, source)


def _budget(entry: object, source: str, key: str, root: Path) -> Budget:
    if not isinstance(entry, Mapping):
        raise problem(ValueError, "budgets.not_table", path=source, key=key, found=_kind(entry))
    _known(entry, _BUDGET_KEYS, source, key)
    files = entry.get("files")
    if files is None:
        raise problem(ValueError, "budgets.missing", path=source, key=f"{key}.files")
    if not isinstance(files, str) or not files.strip("/"):
        raise problem(ValueError, "budgets.string", path=source, key=f"{key}.files", found=files)
    max_tokens = _max_tokens(entry, "maxTokens", source, f"{key}.", required=True)
    assert max_tokens is not None  # required: _max_tokens raised otherwise
    severity = entry.get("severity", "error")
    if severity not in SEVERITIES:
        raise problem(ValueError, "budgets.severity", path=source, key=f"{key}.severity", found=severity)
    return Budget(files, max_tokens, _tokenizer(entry, "tokenizer", source, f"{key}.", root), severity)


def _known(table: Mapping[str, Any], keys: tuple[str, ...], source: str, where: str) -> None:
    """Refuse a key that is not in ``keys`` (a typo would otherwise silently do nothing);
    ``where``: the table's key, empty at the top level."""
    for key in table:
        if key not in keys:
            code = "budgets.unknown_key" if where else "budgets.unknown_top_key"
            raise problem(ValueError, code, path=source, key=key, where=where, known=", ".join(keys))


def _max_tokens(table: Mapping[str, Any], key: str, source: str, prefix: str, *, required: bool) -> int | None:
    value = table.get(key)
    if value is None and not required:
        return None
    if value is None:
        raise problem(ValueError, "budgets.missing", path=source, key=f"{prefix}{key}")
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise problem(ValueError, "budgets.max_tokens", path=source, key=f"{prefix}{key}", found=value)
    return value


def _tokenizer(table: Mapping[str, Any], key: str, source: str, prefix: str, root: Path) -> str | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise problem(ValueError, "budgets.string", path=source, key=f"{prefix}{key}", found=value)
    if value in PACKAGED or value.startswith("hf:") or os.path.isabs(value):
        return value
    return str(root / value)


def _kind(value: object) -> str:
    return {dict: "a table", list: "a list", str: "a string", bool: "a boolean"}.get(type(value), type(value).__name__)


def read_budgets(path: str | Path) -> BudgetConfig | None:
    """The budgets of a ``.glassllm.toml`` or of a ``pyproject.toml``'s ``[tool.glassllm]``
    table (``None`` when a ``pyproject.toml`` has no such table)."""
    path = Path(path)
    raw = read_bounded_bytes(path, "configuration file", _MAX_CONFIG_BYTES)
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise problem(ValueError, "budgets.toml", path=path, reason=error) from None
    if path.name != "pyproject.toml":
        return parse_budgets(data, str(path), path.parent)
    table = data.get("tool", {}).get("glassllm") if isinstance(data.get("tool"), dict) else None
    if table is None:
        return None
    if not isinstance(table, dict):
        raise problem(ValueError, "budgets.not_table", path=path, key="tool.glassllm", found=_kind(table))
    return parse_budgets(table, str(path), path.parent, "tool.glassllm.")


def find_budgets(start: str | Path = ".") -> BudgetConfig | None:
    """The budgets that apply in ``start``: the first ``.glassllm.toml``, or
    ``pyproject.toml`` with a ``[tool.glassllm]`` table, in ``start`` or a folder above
    it, up to the repository's root (the folder that holds ``.git``)."""
    folder = Path(start).resolve()
    for here in (folder, *folder.parents):
        for name in CONFIG_NAMES:
            candidate = here / name
            if candidate.is_file():
                found = read_budgets(_shown(candidate))
                if found is not None:
                    return found
        if (here / ".git").exists():
            return None
    return None


def _shown(path: Path) -> Path:
    """``path`` as errors show it: relative to the current folder when it is under it."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else Path(relative)
