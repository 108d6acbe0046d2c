"""Token budgets in the editor: which budget applies to an open document, and the units
(:mod:`glassllm_server.units`) it checks, for the diagnostics, the status bar and the
code lens.

A document's budget comes from the editor's settings (``glassllm.budgets``, whose globs
are relative to the workspace root, then ``glassllm.maxTokens``) when they give it one,
else from the repository's configuration, read by the library as ``glassllm tokens``
reads it (:func:`glassllm.budgets.find_budgets`: a ``.glassllm.toml`` or a
``pyproject.toml`` with a ``[tool.glassllm]`` table, from the document's folder up to the
repository's root). So the editor setting wins when both set one. A budget counts with
its own tokenizer, else its configuration's: the one in use for the settings, the file's
``tokenizer`` (else ``pt``, as the command) for the repository's. No pygls here.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from glassllm.budgets import CONFIG_NAMES, Budget, BudgetConfig, find_budgets
from glassllm.pipeline.any_tokenizer import AnyTokenizer
from glassllm.shown.problems import describe
from glassllm_server.chat_units import ChatUnit
from glassllm_server.client import Client
from glassllm_server.compare import ComparedTokenizer
from glassllm_server.confinement import inside
from glassllm_server.counted import CountedUnit
from glassllm_server.document import ReadOnlyDocument
from glassllm_server.messages import Messages
from glassllm_server.session import Session
from glassllm_server.tokenizers import Tokenizers
from glassllm_server.units import counted_units, units_with

__all__ = ["AppliedBudget", "BudgetCheck", "Budgets", "budget_json", "budget_use"]

# The tokenizer ``glassllm tokens`` counts with when neither -t nor the configuration names one.
_COMMAND_TOKENIZER = "pt"


@dataclass(frozen=True)
class AppliedBudget:
    """The budget that applies to a document, the tokenizer it counts with (as
    :meth:`Tokenizers.resolve` gives it) and where it came from (``"settings"`` or the
    configuration file's path)."""

    budget: Budget
    tokenizer: str
    source: str


@dataclass(frozen=True)
class BudgetCheck:
    """A document's units against its budget."""

    applied: AppliedBudget
    units: tuple[CountedUnit, ...]

    @property
    def limit(self) -> int:
        return self.applied.budget.max_tokens

    @property
    def largest(self) -> int:
        """The count of the largest unit (the document's, for a plain one)."""
        return max((unit.count for unit in self.units), default=0)

    def over(self) -> list[CountedUnit]:
        """The units past the budget, in document order."""
        return [unit for unit in self.units if unit.count > self.limit]


class Budgets:
    """The budgets of the open documents, for ``session``; ``tokenizers`` gives a budget's
    own tokenizer and ``client`` hears, once each, of a broken repository configuration."""

    def __init__(self, session: Session, tokenizers: Tokenizers, client: Client) -> None:
        self.session = session
        self.tokenizers = tokenizers
        self.client = client
        # Per folder: the configuration files' state when it was last read, and what was read.
        self._repository: dict[Path, tuple[tuple[object, ...], BudgetConfig | None]] = {}
        # Per document: the state the last check was made for, and the check.
        self._checks: dict[str, tuple[tuple[object, ...], BudgetCheck | None]] = {}
        # Per budget tokenizer (by name): what counts documents with it (see _compared).
        self._counting: dict[str, ComparedTokenizer] = {}

    def applied(self, uri: str) -> AppliedBudget | None:
        """The budget of the document ``uri``: the settings' when they give it one, else
        the repository's; None when neither does."""
        settings = self.session.settings
        path = _file_path(uri)
        root = self.session.root_path or (path.parent if path is not None else Path())
        own = BudgetConfig(settings.budgets, settings.max_tokens, None, root, "settings")
        budget = _budget_for(own, path)
        if budget is not None:
            tokenizer = self.tokenizers.resolve(budget.tokenizer) if budget.tokenizer else self.tokenizers.in_use.name
            return AppliedBudget(budget, tokenizer, "settings")
        repository = None if path is None else self.repository(path.parent)
        budget = None if repository is None else _budget_for(repository, path)
        if repository is None or budget is None:
            return None
        tokenizer = budget.tokenizer or repository.tokenizer or _COMMAND_TOKENIZER
        return AppliedBudget(budget, self.tokenizers.resolve(tokenizer), repository.source)

    def limit_in_use(self, uri: str) -> int | None:
        """The limit of the document ``uri``'s budget when it counts with the tokenizer in
        use, whose chat template a chat document's counts went through; else None."""
        applied = self.applied(uri)
        if applied is None or applied.tokenizer != self.tokenizers.in_use.name:
            return None
        return applied.budget.max_tokens

    async def check(self, document: ReadOnlyDocument, chats: Sequence[ChatUnit] | None = None) -> BudgetCheck | None:
        """``document``'s units against its budget (its tokens all there: see
        ``OpenDocuments.tokenized``; ``chats``: a chat document's conversations, see
        :func:`counted_units`); None without a budget, or while the tokenizer it names
        is loading (the views are refreshed once it is ready). A budget's own tokenizer
        counts a slice at a time, the event loop answering other requests in between."""
        applied = self.applied(document.uri)
        if applied is None:
            self._checks.pop(document.uri, None)
            return None
        in_use = self.tokenizers.in_use
        own = applied.tokenizer == in_use.name
        tokenizer = None if own else self.tokenizers.for_budget(applied.tokenizer)
        # The check holds the chat units it was made from, so their ids are not reused.
        chat_state = None if chats is None else tuple((id(unit.encoding), unit.first_line) for unit in chats)
        state = (document.revision, applied, in_use if own else tokenizer, chat_state)
        kept = self._checks.get(document.uri)
        if kept is not None and kept[0] == state:
            return kept[1]
        found = None
        if own:
            found = BudgetCheck(applied, tuple(counted_units(document, chats)))
        elif tokenizer is not None:
            found = BudgetCheck(
                applied, tuple(await units_with(document, self._compared(applied.tokenizer, tokenizer)))
            )
        self._checks[document.uri] = (state, found)
        return found

    def _compared(self, name: str, tokenizer: AnyTokenizer) -> ComparedTokenizer:
        """``tokenizer`` as budgets count with it, the same object while it is the same
        tokenizer: each document's per-line counts are kept under it."""
        found = self._counting.get(name)
        if found is None or found.tokenizer is not tokenizer:
            found = self._counting[name] = ComparedTokenizer(tokenizer, name)
        return found

    def forget(self, uri: str) -> None:
        """The document ``uri`` closed."""
        self._checks.pop(uri, None)

    def forget_repository(self) -> None:
        """A configuration file changed (the client said so): read them all again, even
        where its time and size stayed the same."""
        self._repository.clear()

    def repository(self, folder: Path) -> BudgetConfig | None:
        """The repository's budgets for the files of ``folder``, read again when a
        configuration file around it changes. A broken one is told once per state of
        its files, and gives no budget; over TCP, none outside the workspace folders."""
        confined = self.session.confined_to
        if confined is not None and not inside(folder, confined):
            return None
        files = _config_files(folder)
        kept = self._repository.get(folder)
        if kept is not None and kept[0] == files:
            return kept[1]
        try:
            found = find_budgets(folder)
        except (OSError, ValueError) as error:
            self.client.report_once(
                self.session.messages("budget.repository_broken", problem=describe(error, self.session.locale))
            )
            found = None
        self._repository[folder] = (files, found)
        return found


def _budget_for(config: BudgetConfig, path: Path | None) -> Budget | None:
    """``config``'s budget for the file ``path``; a document without a file (untitled)
    gets the plain ``maxTokens`` alone."""
    if path is not None:
        return config.budget_for(path)
    return None if config.max_tokens is None else Budget("**", config.max_tokens)


def _file_path(uri: str) -> Path | None:
    """The file a ``file:`` URI names; None for any other scheme (an untitled document)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def _config_files(folder: Path) -> tuple[object, ...]:
    """The state (path, time, size) of each configuration file ``find_budgets`` would
    look at from ``folder``: any change among them means reading them again."""
    state: list[object] = []
    for here in (folder, *folder.parents):
        for name in CONFIG_NAMES:
            try:
                stat = os.stat(here / name)
            except OSError:
                continue
            state.append((here / name, stat.st_mtime_ns, stat.st_size))
        if os.path.exists(here / ".git"):
            break
    return tuple(state)


def budget_use(tokens: int, limit: int, messages: Messages) -> str:
    """``3,900 / 4,096`` (``3.900 / 4.096`` in Portuguese)."""
    return messages("budget.use", tokens=messages.integer(tokens), limit=messages.integer(limit))


def budget_json(check: BudgetCheck, tokenizer: str, messages: Messages) -> dict[str, object]:
    """``glassllm/stats``' ``budget``: the largest unit's count (the document's, for a
    plain one) against the budget, how many units there are and how many are over, and
    the budget itself; ``text`` is what a status bar shows, ``tokenizer`` the one it
    counts with in words."""
    budget = check.applied.budget
    largest = check.largest
    return {
        "tokens": largest,
        "maxTokens": budget.max_tokens,
        "unitsOver": len(check.over()),
        "units": len(check.units),
        "severity": budget.severity,
        "files": budget.files,
        "tokenizer": tokenizer,
        "source": check.applied.source,
        "text": budget_use(largest, budget.max_tokens, messages),
        # Of ``tokens``, what a chat template added (0 for plain text): the status bar's share.
        "templateTokens": max(check.units, key=lambda unit: unit.count).template_count if check.units else 0,
    }
