"""The glassllm language server object: the state every feature shares.

:class:`GlassServer` holds the open documents (:mod:`workspace`), the settings, the
tokenizer in use and the compared ones, the locale and the negotiated position encoding,
and reports problems to the user once. The pygls edge it speaks through is
:mod:`glassllm_server.protocol`; the handlers are the features (``features/``), which
receive a :class:`DocumentSnapshot` from :meth:`GlassServer.snapshot`.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from glassllm import PACKAGED, load_tokenizer, packaged
from glassllm.models.hub import PREFIX
from glassllm.packaged import load_problem
from glassllm_server import __version__
from glassllm_server.compare import AnyCompared, CompareSet, default_compare_with
from glassllm_server.document import Document, LineTokenizer
from glassllm_server.messages import Locale, Messages, choose_locale
from glassllm_server.positions import Encoding
from glassllm_server.protocol import GlassProtocol, RequestFailed, documents_at_arrival
from glassllm_server.protocol.transport import serve_stdio
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
        # Over TCP any local user can connect: commands then stay inside the workspace.
        self.confined = False
        # The tokenizer in use and the setting value it came from ("pt", "en" or a path).
        self.tokenizer = LineTokenizer(packaged("pt"), "pt")
        # A tokenizer the user switched to from the editor (after training one), and the
        # tokenizer setting it replaced: it stays until that setting changes.
        self.switched_tokenizer: tuple[str, str] | None = None
        # The tokenizers of glassllm.compareWith, loaded once each (see compared()).
        self.compare_set = CompareSet()
        self._reported: set[str] = set()
        self._notification_error_reported = False
        self.exit_status = 0

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve over stdio (see :mod:`glassllm_server.protocol.transport`); the exit
        status LSP asks for is kept in :attr:`exit_status`."""
        self.exit_status = serve_stdio(self, stdin, stdout)

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

    def snapshot_of(self, document: Document) -> DocumentSnapshot:
        """``document`` as it is now, with the client's encoding."""
        return DocumentSnapshot(document if document.frozen else document.snapshot(), self.encoding)

    # Settings and the tokenizer

    def configure(self, *raw: Any) -> bool:
        """Settings from the defaults and each raw source in turn (later ones win).

        Invalid values are reported once each; True when the tokenizer changed.
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
            changed = self.use_tokenizer(self.switched_tokenizer[1])
        else:
            self.switched_tokenizer = None
            changed = self.use_tokenizer(settings.tokenizer)
        self.compare_set.forget_failures()
        self.compared()  # tells the user now about compared tokenizers that do not load
        return changed

    def _problem_text(self, problem: Problem) -> str:
        messages = self.messages
        return messages(
            "settings.invalid", key=problem.key, value=repr(problem.value), expected=messages(problem.expected)
        )

    def use_tokenizer(self, name: str) -> bool:
        """Switch to tokenizer ``name``; on failure tell the user once and keep the old one."""
        name = self.resolve_tokenizer(name)
        match_specials = self.settings.match_special_tokens
        if name == self.tokenizer.name and (
            name in PACKAGED or match_specials == self.tokenizer.tokenizer.match_specials
        ):
            return False
        try:
            tokenizer = load_tokenizer(name, match_specials=match_specials)
        except (OSError, KeyError, ValueError) as error:
            self.report_once(
                self.messages(
                    "tokenizer.broken",
                    path=name,
                    problem=load_problem(error, self.locale),
                    previous=self.tokenizer_label(),
                )
            )
            return False
        self.tokenizer = LineTokenizer(tokenizer, name)
        self.open_documents.set_tokenizer(self.tokenizer)
        return True

    def resolve_tokenizer(self, name: str) -> str:
        """A tokenizer setting's value as loaded: "pt", "en", "hf:ORG/NAME", or an absolute
        path (a relative one is taken from the workspace root)."""
        if name in PACKAGED or name.startswith(PREFIX):
            return name
        path = Path(name).expanduser()
        if not path.is_absolute() and self.root_path is not None:
            path = self.root_path / path
        return str(path)

    def compared(self) -> list[AnyCompared]:
        """The tokenizers to compare with (``glassllm.compareWith``), loaded; one that
        does not load is left out and reported once."""
        names = self.settings.compare_with
        wanted = default_compare_with(self.tokenizer.name) if names is None else map(self.resolve_tokenizer, names)
        compared, failures = self.compare_set.get(
            list(wanted), self.tokenizer.name, self.locale, self.settings.match_special_tokens
        )
        for name, problem in failures:
            self.report_once(self.messages("compare.broken", path=name, problem=problem))
        return compared

    def refresh_views(self) -> None:
        """Ask the client to re-request what depends on the tokens, where it can."""
        self.open_documents.announce_all()
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
