"""The tokenizers the session uses: the one the settings (or the user, after training)
chose, and those to compare with; loaded off the event loop and switched to when ready.

A packaged tokenizer is there at once; a file (or a Hugging Face model) loads in a worker
thread (:mod:`glassllm_server.loads`), and is used once loaded unless the settings asked
for another meanwhile. A load that fails is told to the user once, and the tokenizer in
use stays. Over TCP a file is read only inside the workspace folders
(:mod:`glassllm_server.confinement`). When what ``glassllm/stats`` counts with changes,
the client is told (:data:`~glassllm_server.commands.TOKENIZERS_CHANGED`) and asked to
refresh its views.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from pathlib import Path

from lsprotocol import types

from glassllm import PACKAGED, AnyTokenizer, load_tokenizer, packaged
from glassllm.formats.hub import PREFIX
from glassllm.packaged import load_problem
from glassllm_server.client import Client
from glassllm_server.commands import TOKENIZERS_CHANGED
from glassllm_server.compare import ComparedTokenizer, CompareSet, default_compare_with
from glassllm_server.compare_process import CountingChild
from glassllm_server.confinement import OutsideWorkspace, inside, quiet_problem
from glassllm_server.line_tokenizer import LineTokenizer, line_tokenizer
from glassllm_server.loads import Loads
from glassllm_server.session import Session

__all__ = ["Tokenizers"]

logger = logging.getLogger(__name__)


class Tokenizers:
    """The tokenizer in use and the compared ones, for ``session``; ``client`` hears of
    failures and of changes."""

    def __init__(self, session: Session, client: Client) -> None:
        self.session = session
        self.client = client
        # The tokenizer in use and the setting value it came from ("pt", "en" or a path),
        # and the one the settings ask for (being loaded while they differ).
        self.in_use = line_tokenizer(packaged("pt"), "pt")
        self.wanted = ("pt", False)
        self.loads: Loads[tuple[str, bool], AnyTokenizer] = Loads(self.load)
        # A tokenizer the user switched to from the editor (after training one), and the
        # tokenizer setting it replaced: it stays until that setting changes.
        self.switched: tuple[str, str] | None = None
        # The tokenizers of glassllm.compareWith, loaded once each (see compared()).
        # Each counts a large part of a document in a child process (see compare_process).
        self.compare_set = CompareSet(
            lambda name, match_specials: CountingChild(name, match_specials, self._child_failed)
        )
        self._compare_loading: set[tuple[str, bool]] = set()
        # The tokenizers budgets name apart from the one in use (see for_budget): loaded
        # ones, and those that failed (told once, left out until the settings change).
        self._budget_tokenizers: dict[tuple[str, bool], AnyTokenizer | Exception] = {}
        self._budget_loading: set[tuple[str, bool]] = set()
        # The tokenizers glassllm/stats counted with when the client last learned of them
        # (the first settings, then each TOKENIZERS_CHANGED), by identity.
        self._announced: tuple[object, ...] | None = None

    # In words

    def name(self, name: str | None = None) -> str:
        """A tokenizer (the current one by default) in words: "Portuguese", "file x.json"."""
        name = self.in_use.name if name is None else name
        if name in PACKAGED:
            return self.session.messages(f"tokenizer.{name}")
        if name.startswith(PREFIX):
            return name
        return self.session.messages("tokenizer.file", name=Path(name).name)

    def label(self, name: str | None = None) -> str:
        """The name with the packaged tokenizer's code: "Portuguese (pt)", "file x.json"."""
        name = self.in_use.name if name is None else name
        return f"{self.name(name)} ({name})" if name in PACKAGED else self.name(name)

    # Following the settings

    def follow_settings(self) -> None:
        """Switch to the tokenizer and the compared ones the session's settings name: a
        packaged one now, a file once loaded (off the event loop, see
        :mod:`glassllm_server.loads`)."""
        settings = self.session.settings
        if self.switched is not None and self.switched[0] == settings.tokenizer:
            self.use(self.switched[1])
        else:
            self.switched = None
            self.use(settings.tokenizer)
        self.compare_set.forget_failures()
        self._budget_tokenizers = {
            key: found for key, found in self._budget_tokenizers.items() if not isinstance(found, Exception)
        }
        self.compared()  # starts loading the compared tokenizers, to tell the user now of those that fail
        if self._announced is None:  # the first settings: the client's first counts use these
            self._announced = (self.in_use, *self.compared())

    def load(self, key: tuple[str, bool]) -> AnyTokenizer:
        """The tokenizer ``key`` names: its setting's value, resolved ("pt", "en", "hf:…"
        or an absolute path), and whether a real model reads special-token text as its
        special tokens; read within the library's bounds, and over TCP a file only inside
        the workspace folders (the Hugging Face cache is not one). Every tokenizer a
        setting names is loaded here, in a worker thread for a file."""
        name, match_specials = key
        if name in PACKAGED:
            return packaged(name)
        confined_to = self.session.confined_to
        if confined_to is not None and (name.startswith(PREFIX) or not inside(Path(name), confined_to)):
            raise OutsideWorkspace(name, confined_to)
        return load_tokenizer(name, match_specials=match_specials)

    def load_failure(self, error: Exception, name: str) -> str:
        """Why ``name`` did not load, for the user (over TCP, without the file's content).
        A broken file is the user's routine mistake; any other failure is logged whole."""
        if not isinstance(error, (OSError, KeyError, ValueError)):
            logger.error("loading the tokenizer %s failed", name, exc_info=error)
        if self.session.confined_to is not None:
            return quiet_problem(error, name, self.session.locale)
        return load_problem(error, self.session.locale)

    def use(self, name: str) -> asyncio.Future[bool]:
        """Switch to tokenizer ``name`` (as a setting gives it): a packaged one now, a file
        once it is loaded, unless the settings asked for another meanwhile. On failure
        the user is told once and the tokenizer in use stays. The future is True when
        the tokenizer changed."""
        name = self.resolve(name)
        match_specials = self.session.settings.match_special_tokens
        self.wanted = (name, match_specials)
        switched: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        if self._in_use(name, match_specials):
            switched.set_result(False)
        elif name in PACKAGED:
            self._switch(line_tokenizer(packaged(name), name))
            switched.set_result(True)
        else:
            load = self.loads.start((name, match_specials))
            load.add_done_callback(functools.partial(self._loaded, name, match_specials, switched))
        return switched

    def _in_use(self, name: str, match_specials: bool) -> bool:
        """Whether the tokenizer in use is ``name`` read with ``match_specials`` (which
        only real models' tokenizers heed)."""
        return name == self.in_use.name and (name in PACKAGED or match_specials == self.in_use.tokenizer.match_specials)

    def _loaded(
        self, name: str, match_specials: bool, switched: asyncio.Future[bool], load: asyncio.Future[AnyTokenizer]
    ) -> None:
        changed = False
        if load.cancelled() or self.wanted != (name, match_specials) or self._in_use(name, match_specials):
            pass  # the server stops, the settings moved on, or an earlier wait for this load switched
        elif isinstance(error := load.exception(), Exception):
            previous = self.label()
            problem = self.load_failure(error, name)
            self.client.report_once(
                self.session.messages("tokenizer.broken", path=name, problem=problem, previous=previous)
            )
        else:
            self._switch(line_tokenizer(load.result(), name))
            self.refresh_views()
            changed = True
        if not switched.done():  # its waiter may have been cancelled
            switched.set_result(changed)

    def _switch(self, tokenizer: LineTokenizer) -> None:
        self.in_use = tokenizer
        self.session.open_documents.set_tokenizer(tokenizer)

    def resolve(self, name: str) -> str:
        """A tokenizer setting's value as loaded: "pt", "en", "hf:ORG/NAME", or an absolute
        path (a relative one is taken from the workspace root)."""
        if name in PACKAGED or name.startswith(PREFIX):
            return name
        try:
            path = Path(name).expanduser()
        except RuntimeError:  # ~user of no user: the path as written, which will not load
            path = Path(name)
        root = self.session.root_path
        if not path.is_absolute() and root is not None:
            path = root / path
        return str(path)

    # The compared tokenizers

    def compared(self) -> list[ComparedTokenizer]:
        """The tokenizers to compare with (``glassllm.compareWith``) that are ready. A file
        not loaded yet starts loading (off the event loop) and is left out until it is
        ready; one that fails is reported once and left out until the settings change."""
        return self.compare_set.get(
            self._compare_names(), self.in_use.name, self._compared_now, self.session.settings.match_special_tokens
        )

    def _compare_names(self) -> list[str]:
        names = self.session.settings.compare_with
        if names is None:
            return default_compare_with(self.in_use.name)
        return [self.resolve(name) for name in names]

    def _compared_now(self, name: str, match_specials: bool) -> AnyTokenizer | None:
        """A compared tokenizer if it can be had at once (a packaged one); else its load
        is started (once) and None returned."""
        if name in PACKAGED:
            return packaged(name)
        key = (name, match_specials)
        if key not in self._compare_loading:
            self._compare_loading.add(key)
            self.loads.start(key).add_done_callback(functools.partial(self._compared_loaded, key))
        return None

    def _compared_loaded(self, key: tuple[str, bool], load: asyncio.Future[AnyTokenizer]) -> None:
        self._compare_loading.discard(key)
        if load.cancelled():  # the server stops
            return
        name = key[0]
        error = load.exception()
        if not isinstance(error, Exception):
            self.compare_set.add(name, load.result(), key[1])
            self.announce()  # its counts now join glassllm/stats' compare list
            return
        self.compare_set.fail(name)
        if name in self._compare_names():
            problem = self.load_failure(error, name)
            self.client.report_once(self.session.messages("compare.broken", path=name, problem=problem))

    def _child_failed(self, name: str, detail: str) -> None:
        message = self.session.messages("compare.child_failed", tokenizer=self.label(name), problem=detail)
        self.client.report_once(message, types.MessageType.Warning)

    def close(self) -> None:
        """Stop the compared tokenizers' child processes (the server stops)."""
        self.compare_set.close()

    # The tokenizers budgets count with

    def for_budget(self, name: str) -> AnyTokenizer | None:
        """The tokenizer ``name`` (resolved, see :meth:`resolve`) a budget counts with, if
        it can be had now: a packaged one, or a file loaded already. A file starts
        loading (off the event loop) and the views are refreshed once it is ready; one
        that fails is told once and gives None until the settings change."""
        if name in PACKAGED:
            return packaged(name)
        key = (name, self.session.settings.match_special_tokens)
        found = self._budget_tokenizers.get(key)
        if found is None and key not in self._budget_loading:
            self._budget_loading.add(key)
            self.loads.start(key).add_done_callback(functools.partial(self._budget_loaded, key))
        return None if found is None or isinstance(found, Exception) else found

    def _budget_loaded(self, key: tuple[str, bool], load: asyncio.Future[AnyTokenizer]) -> None:
        self._budget_loading.discard(key)
        if load.cancelled():  # the server stops
            return
        error = load.exception()
        if isinstance(error, Exception):
            self._budget_tokenizers[key] = error
            problem = self.load_failure(error, key[0])
            self.client.report_once(self.session.messages("budget.tokenizer_broken", path=key[0], problem=problem))
            return
        self._budget_tokenizers[key] = load.result()
        self.refresh_views()

    # Telling the client

    def refresh_views(self) -> None:
        """Ask the client to re-request what depends on the tokens, where it can, and its
        counts if the tokenizers changed (:meth:`announce`)."""
        self.session.open_documents.announce_all()
        self.announce()
        self.client.refresh()

    def announce(self) -> None:
        """Send :data:`TOKENIZERS_CHANGED` if glassllm/stats counts with other tokenizers
        than when the client last learned of them: clients ask for their counts again on
        edits, and a tokenizer may switch later, once its file has loaded. Nothing is sent
        while the same tokenizers are in use, so never on an edit."""
        tokenizer, compared = self.in_use, self.compared()
        counting = (tokenizer, *compared)
        announced = self._announced
        if (
            announced is not None
            and len(announced) == len(counting)
            and all(before is now for before, now in zip(announced, counting, strict=True))
        ):
            return
        self._announced = counting
        self.client.notify(
            TOKENIZERS_CHANGED,
            {"tokenizer": tokenizer.name, "label": self.label(), "compare": [each.name for each in compared]},
        )
