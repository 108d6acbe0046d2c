"""The glassllm language server object: the state every feature shares.

:class:`GlassServer` holds the open documents (:mod:`workspace`), the settings, the
tokenizer in use and the compared ones, the locale and the negotiated position encoding,
and reports problems to the user once. The pygls edge it speaks through is
:mod:`glassllm_server.protocol`; the handlers are the features (``features/``), which
receive a :class:`DocumentSnapshot` from :meth:`GlassServer.snapshot`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from pathlib import Path
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from glassllm import PACKAGED, AnyTokenizer, load_tokenizer, packaged
from glassllm.models.hub import PREFIX
from glassllm.packaged import load_problem
from glassllm_server import __version__
from glassllm_server.commands import TOKENIZERS_CHANGED
from glassllm_server.compare import AnyCompared, CompareSet, default_compare_with
from glassllm_server.confinement import OutsideWorkspace, inside, quiet_problem
from glassllm_server.document import Document, ReadOnlyDocument
from glassllm_server.line_tokenizer import LineTokenizer
from glassllm_server.loads import Loads
from glassllm_server.messages import Locale, Messages, choose_locale
from glassllm_server.positions import Encoding
from glassllm_server.protocol import GlassProtocol, RequestFailed, documents_at_arrival
from glassllm_server.protocol.transport import serve_stdio, serve_tcp
from glassllm_server.settings import Problem, Settings, parse_settings
from glassllm_server.snapshot import DocumentSnapshot
from glassllm_server.workspace import OpenDocuments

__all__ = ["GlassServer"]

logger = logging.getLogger(__name__)


class GlassServer(LanguageServer):
    """The language server: state shared by every feature."""

    protocol: GlassProtocol

    def __init__(self) -> None:
        super().__init__(
            "glassllm-lsp",
            __version__,
            protocol_cls=GlassProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.open_documents = OpenDocuments()
        self.settings = Settings()
        self.initialization_options: Any = None  # the client's, kept for every reload
        self.client_locale: str | None = None
        self.root_path: Path | None = None
        # Over TCP any local user can connect: the server then reads and writes only inside
        # these folders, fixed when it started (see confinement.py). None over stdio.
        self.confined_to: tuple[Path, ...] | None = None
        # The tokenizer in use and the setting value it came from ("pt", "en" or a path),
        # and the one the settings ask for (being loaded while they differ).
        self.tokenizer = LineTokenizer(packaged("pt"), "pt")
        self.wanted_tokenizer = ("pt", False)
        self.loads: Loads[tuple[str, bool], AnyTokenizer] = Loads(self.load_tokenizer)
        # A tokenizer the user switched to from the editor (after training one), and the
        # tokenizer setting it replaced: it stays until that setting changes.
        self.switched_tokenizer: tuple[str, str] | None = None
        # The tokenizers of glassllm.compareWith, loaded once each (see compared()).
        self.compare_set = CompareSet()
        self._compare_loading: set[tuple[str, bool]] = set()
        # The tokenizers glassllm/stats counted with when the client last learned of them
        # (the first settings, then each TOKENIZERS_CHANGED), by identity.
        self._announced: tuple[object, ...] | None = None
        self._reported: set[str] = set()
        self._notification_error_reported = False
        self.exit_status = 0

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve over stdio (see :mod:`glassllm_server.protocol.transport`); the exit
        status LSP asks for is kept in :attr:`exit_status`."""
        self.exit_status = serve_stdio(self, stdin, stdout)

    def start_tcp(self, host: str, port: int) -> None:
        """Serve one client on a TCP port, confined to :attr:`confined_to` (see
        :mod:`glassllm_server.protocol.transport`); the exit status as for stdio."""
        self.exit_status = serve_tcp(self, host, port)

    # Position encoding and locale

    @property
    def encoding(self) -> Encoding:
        """The position encoding negotiated at initialize (UTF-16 until then)."""
        try:
            encoding = self.workspace.position_encoding
        except RuntimeError:
            return "utf-16"
        return str(getattr(encoding, "value", encoding) or "utf-16")  # type: ignore[return-value]

    @property
    def locale(self) -> Locale:
        return choose_locale(self.client_locale, self.settings.locale)

    @property
    def messages(self) -> Messages:
        return Messages(self.locale)

    def tokenizer_name(self, name: str | None = None) -> str:
        """A tokenizer (the current one by default) in words: "Portuguese", "file x.json"."""
        name = self.tokenizer.name if name is None else name
        if name in PACKAGED:
            return self.messages(f"tokenizer.{name}")
        if name.startswith(PREFIX):
            return name
        return self.messages("tokenizer.file", name=Path(name).name)

    def tokenizer_label(self, name: str | None = None) -> str:
        """The name with the packaged tokenizer's code: "Portuguese (pt)", "file x.json"."""
        name = self.tokenizer.name if name is None else name
        return f"{self.tokenizer_name(name)} ({name})" if name in PACKAGED else self.tokenizer_name(name)

    # Snapshots

    def find_snapshot(self, uri: str) -> DocumentSnapshot | None:
        """The open document ``uri`` as the request being handled found it (outside a
        request, as it is now); None when it is not open."""
        arrived = documents_at_arrival()
        document = self.open_documents.get(uri) if arrived is None else arrived.get(uri)
        return None if document is None else self.snapshot_of(document)

    def snapshot(self, uri: str) -> DocumentSnapshot:
        """Like :meth:`find_snapshot`, with a clear JSON-RPC error when ``uri`` is not open."""
        found = self.find_snapshot(uri)
        if found is None:
            raise RequestFailed(self.messages("error.unknown_document", uri=uri))
        return found

    def snapshot_of(self, document: ReadOnlyDocument) -> DocumentSnapshot:
        """``document`` as it is now (a snapshot of a live one), with the client's encoding."""
        return DocumentSnapshot(document.snapshot() if isinstance(document, Document) else document, self.encoding)

    def focus(self, uri: str, line: int) -> None:
        """Make ``line`` the one the user last looked at in the open document ``uri``
        (views that cannot cover a large document whole look there)."""
        document = self.open_documents.get(uri)
        if document is not None:
            document.focus(line)

    # Settings and the tokenizer

    def configure(self, *raw: Any) -> None:
        """Settings from the defaults and each raw source in turn (later ones win).

        Invalid values are reported once each. The tokenizer and the compared ones the
        settings name are switched to now when packaged, else loaded off the event loop
        (see :mod:`glassllm_server.loads`) and used once they are ready.
        """
        settings = Settings()
        problems: list[Problem] = []
        for source in raw:
            settings, found = parse_settings(source, settings)
            problems.extend(found)
        self.settings = settings
        for problem in problems:
            self.report_once(self._problem_text(problem))
        if self.switched_tokenizer is not None and self.switched_tokenizer[0] == settings.tokenizer:
            self.use_tokenizer(self.switched_tokenizer[1])
        else:
            self.switched_tokenizer = None
            self.use_tokenizer(settings.tokenizer)
        self.compare_set.forget_failures()
        self.compared()  # starts loading the compared tokenizers, to tell the user now of those that fail
        if self._announced is None:  # the first settings: the client's first counts use these
            self._announced = (self.tokenizer, *self.compared())

    def _problem_text(self, problem: Problem) -> str:
        messages = self.messages
        return messages(
            "settings.invalid", key=problem.key, value=repr(problem.value), expected=messages(problem.expected)
        )

    def load_tokenizer(self, key: tuple[str, bool]) -> AnyTokenizer:
        """The tokenizer ``key`` names: its setting's value, resolved ("pt", "en", "hf:…"
        or an absolute path), and whether a real model reads special-token text as its
        special tokens; read within the library's bounds, and over TCP a file only inside
        the workspace folders (the Hugging Face cache is not one). Every tokenizer a
        setting names is loaded here, in a worker thread for a file."""
        name, match_specials = key
        if name in PACKAGED:
            return packaged(name)
        if self.confined_to is not None and (name.startswith(PREFIX) or not inside(Path(name), self.confined_to)):
            raise OutsideWorkspace(name, self.confined_to)
        return load_tokenizer(name, match_specials=match_specials)

    def load_failure(self, error: Exception, name: str) -> str:
        """Why ``name`` did not load, for the user (over TCP, without the file's content).
        A broken file is the user's routine mistake; any other failure is logged whole."""
        if not isinstance(error, (OSError, KeyError, ValueError)):
            logger.error("loading the tokenizer %s failed", name, exc_info=error)
        if self.confined_to is not None:
            return quiet_problem(error, name, self.locale)
        return load_problem(error, self.locale)

    def use_tokenizer(self, name: str) -> asyncio.Future[bool]:
        """Switch to tokenizer ``name`` (as a setting gives it): a packaged one now, a file
        once it is loaded, unless the settings asked for another meanwhile. On failure
        the user is told once and the tokenizer in use stays. The future is True when
        the tokenizer changed."""
        name = self.resolve_tokenizer(name)
        match_specials = self.settings.match_special_tokens
        self.wanted_tokenizer = (name, match_specials)
        switched: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        if self._in_use(name, match_specials):
            switched.set_result(False)
        elif name in PACKAGED:
            self._switch(LineTokenizer(packaged(name), name))
            switched.set_result(True)
        else:
            load = self.loads.start((name, match_specials))
            load.add_done_callback(functools.partial(self._tokenizer_loaded, name, match_specials, switched))
        return switched

    def _in_use(self, name: str, match_specials: bool) -> bool:
        """Whether the tokenizer in use is ``name`` read with ``match_specials`` (which
        only real models' tokenizers heed)."""
        return name == self.tokenizer.name and (
            name in PACKAGED or match_specials == self.tokenizer.tokenizer.match_specials
        )

    def _tokenizer_loaded(
        self, name: str, match_specials: bool, switched: asyncio.Future[bool], load: asyncio.Future[AnyTokenizer]
    ) -> None:
        changed = False
        if load.cancelled() or self.wanted_tokenizer != (name, match_specials) or self._in_use(name, match_specials):
            pass  # the server stops, the settings moved on, or an earlier wait for this load switched
        elif isinstance(error := load.exception(), Exception):
            previous = self.tokenizer_label()
            problem = self.load_failure(error, name)
            self.report_once(self.messages("tokenizer.broken", path=name, problem=problem, previous=previous))
        else:
            self._switch(LineTokenizer(load.result(), name))
            self.refresh_views()
            changed = True
        if not switched.done():  # its waiter may have been cancelled
            switched.set_result(changed)

    def _switch(self, tokenizer: LineTokenizer) -> None:
        self.tokenizer = tokenizer
        self.open_documents.set_tokenizer(tokenizer)

    def resolve_tokenizer(self, name: str) -> str:
        """A tokenizer setting's value as loaded: "pt", "en", "hf:ORG/NAME", or an absolute
        path (a relative one is taken from the workspace root)."""
        if name in PACKAGED or name.startswith(PREFIX):
            return name
        try:
            path = Path(name).expanduser()
        except RuntimeError:  # ~user of no user: the path as written, which will not load
            path = Path(name)
        if not path.is_absolute() and self.root_path is not None:
            path = self.root_path / path
        return str(path)

    def compared(self) -> list[AnyCompared]:
        """The tokenizers to compare with (``glassllm.compareWith``) that are ready. A file
        not loaded yet starts loading (off the event loop) and is left out until it is
        ready; one that fails is reported once and left out until the settings change."""
        return self.compare_set.get(
            self._compare_names(), self.tokenizer.name, self._compared_now, self.settings.match_special_tokens
        )

    def _compare_names(self) -> list[str]:
        names = self.settings.compare_with
        if names is None:
            return default_compare_with(self.tokenizer.name)
        return [self.resolve_tokenizer(name) for name in names]

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
            self.announce_tokenizers()  # its counts now join glassllm/stats' compare list
            return
        self.compare_set.fail(name)
        if name in self._compare_names():
            self.report_once(self.messages("compare.broken", path=name, problem=self.load_failure(error, name)))

    def refresh_views(self) -> None:
        """Ask the client to re-request what depends on the tokens, where it can, and its
        counts if the tokenizers changed (:meth:`announce_tokenizers`)."""
        self.open_documents.announce_all()
        self.announce_tokenizers()
        workspace = self.client_capabilities.workspace
        if workspace is None:
            return
        if workspace.diagnostics is not None and workspace.diagnostics.refresh_support:
            self.workspace_diagnostic_refresh(None)
        if workspace.inlay_hint is not None and workspace.inlay_hint.refresh_support:
            self.workspace_inlay_hint_refresh(None)
        if workspace.code_lens is not None and workspace.code_lens.refresh_support:
            self.workspace_code_lens_refresh(None)
        if workspace.semantic_tokens is not None and workspace.semantic_tokens.refresh_support:
            self.workspace_semantic_tokens_refresh(None)

    def announce_tokenizers(self) -> None:
        """Send :data:`TOKENIZERS_CHANGED` if glassllm/stats counts with other tokenizers
        than when the client last learned of them: clients ask for their counts again on
        edits, and a tokenizer may switch later, once its file has loaded. Nothing is sent
        while the same tokenizers are in use, so never on an edit."""
        tokenizer, compared = self.tokenizer, self.compared()
        counting = (tokenizer, *compared)
        announced = self._announced
        if (
            announced is not None
            and len(announced) == len(counting)
            and all(before is now for before, now in zip(announced, counting, strict=True))
        ):
            return
        self._announced = counting
        self.protocol.notify(
            TOKENIZERS_CHANGED,
            {
                "tokenizer": tokenizer.name,
                "label": self.tokenizer_label(),
                "compare": [each.name for each in compared],
            },
        )

    # Reporting

    def report_once(self, message: str, kind: types.MessageType = types.MessageType.Error) -> None:
        """Show ``message`` to the user unless it was already shown this session."""
        logger.warning("%s", message)
        if message in self._reported:
            return
        self._reported.add(message)
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log every error; show the first one out of a notification, then only log."""
        if getattr(source, "__name__", "") == "FeatureRequestError":
            # Already answered to the client as a JSON-RPC error.
            logger.info("request failed: %s", error)
            return
        logger.error("%s: %s", getattr(source, "__name__", source), error, exc_info=error)
        if self._notification_error_reported:
            return
        self._notification_error_reported = True
        self.window_show_message(
            types.ShowMessageParams(
                type=types.MessageType.Error,
                message=self.messages("error.notification", error=error),
            )
        )
