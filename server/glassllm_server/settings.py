"""The typed ``glassllm`` configuration section and how raw client settings become it.

Settings arrive three ways — ``initializationOptions``, ``workspace/configuration`` and
``workspace/didChangeConfiguration`` — as JSON objects, either the section itself or an
object holding it under ``"glassllm"``. Keys are camelCase as in an editor's settings
file; nested ``inlayHints`` and dotted keys (``"inlayHints.chunkBoundaries"``) both work.
An invalid value is reported (one problem per key) and that key keeps its default.
``budgets`` and ``maxTokens`` take the keys of the repository's budgets
(:mod:`glassllm.budgets`), checked by the library's own parser. No pygls here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from glassllm.budgets import Budget, parse_budgets

__all__ = ["SECTION", "Problem", "Settings", "parse_settings"]

SECTION = "glassllm"
LOCALES = ("pt", "en")


@dataclass(frozen=True)
class Settings:
    """What the user chose (defaults as documented in the README)."""

    tokenizer: str = "pt"  # "pt", "en", a tokenizer file's path or "hf:ORG/NAME"
    chunk_boundaries: bool = True
    space_markers: bool = True
    token_boundaries: bool = False
    semantic_tokens: bool = True
    diagnostics: bool = True
    locale: str | None = None  # None follows the client's locale
    # Tokenizers shown beside the one in use; None: the other packaged one.
    compare_with: tuple[str, ...] | None = None
    # A real model's special-token text in the user's text (``<|endoftext|>``): read as
    # the special token (as Hugging Face does by default) or, by default, as ordinary text.
    match_special_tokens: bool = False
    # A chat document's template: "auto" (the one beside the tokenizer), a file, or "none"
    # (chat documents are then plain text).
    chat_template: str = "auto"
    # Token budgets: per glob (relative to the workspace root), and for every document.
    budgets: tuple[Budget, ...] = ()
    max_tokens: int | None = None

    @property
    def hint_switches(self) -> tuple[bool, bool, bool]:
        """The inlay hint kinds that are on: (chunk boundaries, ▁ markers, token boundaries)."""
        return (self.chunk_boundaries, self.space_markers, self.token_boundaries)


@dataclass(frozen=True)
class Problem:
    """An invalid setting: its key as the user wrote it, the value, and what is expected."""

    key: str
    value: Any
    expected: str  # a message-catalogue key naming what the setting accepts
    # The library's error when it checked the value (budgets): says exactly what is wrong.
    error: ValueError | None = None


# JSON key → (Settings field, validator returning the value or None when invalid, expected).
def _boolean(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _tokenizer(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _tokenizers(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, list) and all(_tokenizer(item) is not None for item in value):
        return tuple(item.strip() for item in value)
    return None


def _locale(value: Any) -> str | None:
    if isinstance(value, str) and value.strip().lower()[:2] in LOCALES:
        return value.strip().lower()[:2]
    return None


def _max_tokens(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _budgets(value: Any) -> tuple[Budget, ...] | ValueError:
    """The budgets of ``glassllm.budgets``, or the library's error naming the wrong key.
    A tokenizer's relative path stays relative: the workspace root resolves it."""
    try:
        return parse_budgets({"budgets": value}, SECTION, Path(), f"{SECTION}.").budgets
    except ValueError as error:
        return error


_FIELDS: dict[str, tuple[str, Any, str]] = {
    "tokenizer": ("tokenizer", _tokenizer, "expected.tokenizer"),
    "inlayHints.chunkBoundaries": ("chunk_boundaries", _boolean, "expected.boolean"),
    "inlayHints.spaceMarkers": ("space_markers", _boolean, "expected.boolean"),
    "inlayHints.tokenBoundaries": ("token_boundaries", _boolean, "expected.boolean"),
    "semanticTokens": ("semantic_tokens", _boolean, "expected.boolean"),
    "diagnostics": ("diagnostics", _boolean, "expected.boolean"),
    "locale": ("locale", _locale, "expected.locale"),
    "compareWith": ("compare_with", _tokenizers, "expected.compare_with"),
    "matchSpecialTokens": ("match_special_tokens", _boolean, "expected.boolean"),
    "chatTemplate": ("chat_template", _tokenizer, "expected.chat_template"),
    "maxTokens": ("max_tokens", _max_tokens, "expected.max_tokens"),
    "budgets": ("budgets", _budgets, "expected.budgets"),
}


def _flatten(raw: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in raw.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and name not in _FIELDS:
            flat.update(_flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def parse_settings(raw: Any, base: Settings | None = None) -> tuple[Settings, list[Problem]]:
    """Apply the settings in ``raw`` on top of ``base`` (defaults when None).

    ``None`` or a missing key leaves the base value (``locale: null`` means "follow the
    client"); unknown keys are ignored, since editors send their own keys alongside.
    """
    settings = base or Settings()
    if raw is None:
        return settings, []
    if not isinstance(raw, Mapping):
        return settings, [Problem(SECTION, raw, "expected.object")]
    if isinstance(raw.get(SECTION), Mapping):
        raw = raw[SECTION]
    problems: list[Problem] = []
    changes: dict[str, Any] = {}
    for key, value in _flatten(raw).items():
        if key not in _FIELDS:
            continue
        field, validate, expected = _FIELDS[key]
        if value is None:
            if field in ("locale", "max_tokens"):
                changes[field] = None
            continue
        checked = validate(value)
        if checked is None or isinstance(checked, ValueError):
            error = checked if isinstance(checked, ValueError) else None
            problems.append(Problem(f"{SECTION}.{key}", value, expected, error))
            changes[field] = getattr(Settings, field)
        else:
            changes[field] = checked
    return replace(settings, **changes), problems
