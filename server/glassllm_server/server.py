"""The glassllm language server: its state and the fixes it needs over stock pygls.

:class:`GlassServer` holds the open documents, the settings, the tokenizer, the locale
and the negotiated position encoding; the features (``features/``) are thin handlers
over it. :class:`GlassProtocol` fixes what pygls 2.1 gets wrong for us:

- a request whose params do not deserialize gets a -32602 answer (pygls sends none);
- open documents live in :attr:`GlassServer.live_documents`, edited line by line,
  instead of pygls' workspace, which rebuilds the whole text on every keystroke;
- every request sees the documents as they were when it arrived. pygls creates each
  request's handler as a task when the request is read, but the handler runs later,
  after the ``didChange`` notifications read meanwhile are applied; so snapshots of the
  open documents (cheap: see :meth:`Document.snapshot`) are put in a context variable
  just before pygls creates the task, which copies the context, and
  :attr:`GlassServer.documents` (so :meth:`GlassServer.get_document`) reads them
  from there, whatever the handler;
- an exception in a notification handler is logged, and reported to the user once;
- routine error answers (a closed document, a cancelled request) and cancels of
  requests already answered are not logged as problems.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import inspect
import json
import logging
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.io_ import StdinAsyncReader, StdoutWriter, run_async
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method

from glassllm import PACKAGED, load_tokenizer, packaged
from glassllm.packaged import load_problem
from glassllm_server import __version__
from glassllm_server.compare import ComparedTokenizer, CompareSet, default_compare_with
from glassllm_server.document import Document, LineTokenizer
from glassllm_server.messages import Messages, choose_locale
from glassllm_server.positions import Encoding, Point
from glassllm_server.settings import Problem, Settings, parse_settings

__all__ = ["GlassProtocol", "GlassServer", "RawJSON", "RequestFailed"]

logger = logging.getLogger(__name__)
# pygls logs every outgoing message at INFO: a 7 MB document would be logged whole.
logging.getLogger("pygls.protocol.json_rpc").setLevel(logging.WARNING)

# Background tokenizing gives the event loop back after this long, so requests that
# arrive meanwhile wait at most about that much.
_SLICE_SECONDS = 0.002
_TURNS = 4

# The open documents as they were when the request being handled arrived (unset outside
# requests: notifications and background work see the live documents).
_REQUEST_DOCUMENTS: contextvars.ContextVar[dict[str, Document]] = contextvars.ContextVar("request_documents")


class RequestFailed(JsonRpcException):
    """LSP's RequestFailed: the request was well formed but cannot be answered."""

    CODE = -32803
    MESSAGE = "Request failed"


class _Answered:
    """Stands for a message already answered while it was being read."""


class RawJSON:
    """A result already serialized: JSON text, spliced into the response as it is.

    For answers with thousands of items built from per-line caches (inlay hints), where
    even ``json.dumps`` of plain dicts would cost more than everything else.
    """

    def __init__(self, text: str) -> None:
        self.text = text


class GlassProtocol(LanguageServerProtocol):
    """pygls' protocol with our documents and with answers for malformed requests."""

    _server: GlassServer

    def structure_message(self, data: dict[str, Any]) -> Any:
        missing = "jsonrpc" in data and "method" in data and "params" not in data
        if missing:
            # Custom methods cannot even be read without the member; null is the same.
            data = {**data, "params": None}
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            method = data.get("method", "?")
            messages = self._server.messages
            if missing or data.get("params") is None:
                detail = messages("error.missing_params", method=method)
            else:
                detail = messages("error.invalid_params", method=method, detail=_describe(error.__cause__))
            if "id" in data and "method" in data:
                self._send_response(
                    data["id"], error=types.ResponseError(code=JsonRpcInvalidParams.CODE, message=detail)
                )
            else:
                logger.warning("%s", detail)
            return _Answered()

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if error is None and isinstance(result, RawJSON):
            self._result_types.pop(msg_id, None)
            self._send_body(f'{{"jsonrpc": "{self.VERSION}", "id": {json.dumps(msg_id)}, "result": {result.text}}}')
            return
        super()._send_response(msg_id, result, error)

    def _send_body(self, body: str) -> None:
        """Frame and write a JSON body, as pygls' ``_send_data`` does after ``json.dumps``."""
        if self.writer is None:
            logger.error("Unable to send data, no available transport!")
            return
        data = body.encode(self.CHARSET)
        header = f"Content-Length: {len(data)}\r\nContent-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
        written = self.writer.write(header.encode(self.CHARSET) + data)
        if inspect.isawaitable(written):
            asyncio.ensure_future(written)

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Answered):
            return
        super().handle_message(message)

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        # pygls runs this inside a copy of the context made for this message and creates
        # the handler's task from it: the task sees these snapshots, whatever is applied
        # before it runs.
        _REQUEST_DOCUMENTS.set({uri: document.snapshot() for uri, document in self._server.live_documents.items()})
        super()._handle_request(msg_id, method_name, params)

    def _send_handler_result(self, future: Any, *, msg_id: Any) -> None:
        # pygls logs a traceback for every error answer; one the handler raised on purpose
        # (a closed document, a cancelled wait) is routine work, not a problem.
        if not future.cancelled() and isinstance(error := future.exception(), JsonRpcException):
            self._request_futures.pop(msg_id, None)
            logger.info("request %s answered with error %s: %s", msg_id, error.code, error.message)
            self._send_response(msg_id, error=error.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        # Clients cancel requests already answered all the time (VS Code its code actions).
        future = self._request_futures.pop(msg_id, None)
        if future is None:
            logger.debug("cancel for request %s, already answered", msg_id)
        elif future.cancel():
            logger.debug("request %s cancelled", msg_id)

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None


def _describe(error: BaseException | None) -> str:
    """A short, readable account of a cattrs validation error."""
    if error is None:
        return "malformed"
    parts = [str(error)]
    for inner in getattr(error, "exceptions", []) or []:
        notes = getattr(inner, "__notes__", None)
        parts.append(f"{notes[0] if notes else ''} {inner}".strip())
    return "; ".join(parts)


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
        # The open documents as the client's notifications left them. Requests read
        # :attr:`documents`, which in a request is the snapshot taken when it arrived.
        self.live_documents: dict[str, Document] = {}
        self.settings = Settings()
        self.initialization_options: Any = None  # the client's, kept for every reload
        self.client_locale: str | None = None
        self.root_path: Path | None = None
        # Over TCP any local user can connect: commands then stay inside the workspace.
        self.confined = False
        # The tokenizer in use and the setting value it came from ("pt", "en" or a path).
        self.tokenizer = LineTokenizer(packaged("pt"), "pt")
        self._tokenizing: dict[str, asyncio.Task[None]] = {}
        # Per document, resolved after each slice of background tokenizing.
        self._progress: dict[str, asyncio.Future[None]] = {}
        self._tokenizing_now = 0  # background tokenizing tasks running
        self._reported: set[str] = set()
        self._notification_error_reported = False
        # A tokenizer the user switched to from the editor (after training one), and the
        # tokenizer setting it replaced: it stays until that setting changes.
        self.switched_tokenizer: tuple[str, str] | None = None
        # Called with a URI when that document opened, changed, closed or was re-tokenized,
        # or when settings changed (push diagnostics follow documents this way).
        self.document_listeners: list[Callable[[str], None]] = []
        # The tokenizers of glassllm.compareWith, loaded once each (see compared()).
        self.compare_set = CompareSet()

    # Transport

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve over stdio, reading with the event loop itself.

        pygls reads stdin on a worker thread, one ``run_in_executor`` per header line and
        body: while the event loop is busy tokenizing, every message then waits for the
        GIL several times (~100 ms). A pipe read by the loop waits at most one slice.
        """
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(self._serve_io(stdin or sys.stdin.buffer))
        except BrokenPipeError:
            logger.error("The connection to the client is lost: shutting down.")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    async def _serve_io(self, stdin: BinaryIO) -> None:
        loop = asyncio.get_running_loop()
        reader: Any = asyncio.StreamReader()
        try:
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
        except (OSError, ValueError):
            # Not a pipe or a socket (a regular file, say): pygls' threaded reader.
            reader = StdinAsyncReader(stdin, self.thread_pool)
        try:
            await run_async(
                stop_event=self._stop_event,
                reader=reader,
                protocol=self.protocol,
                logger=logger,
                error_handler=self.report_server_error,
            )
        except asyncio.IncompleteReadError:
            logger.error("The client closed the connection in the middle of a message.")

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
    def locale(self) -> str:
        return choose_locale(self.client_locale, self.settings.locale)

    @property
    def messages(self) -> Messages:
        return Messages(self.locale)  # type: ignore[arg-type]

    def tokenizer_name(self, name: str | None = None) -> str:
        """A tokenizer (the current one by default) in words: "Portuguese", "file x.json"."""
        name = self.tokenizer.name if name is None else name
        if name in PACKAGED:
            return self.messages(f"tokenizer.{name}")
        return self.messages("tokenizer.file", name=Path(name).name)

    def tokenizer_label(self, name: str | None = None) -> str:
        """The name with the packaged tokenizer's code: "Portuguese (pt)", "file x.json"."""
        name = self.tokenizer.name if name is None else name
        return f"{self.tokenizer_name(name)} ({name})" if name in PACKAGED else self.tokenizer_name(name)

    # Documents

    @property
    def documents(self) -> dict[str, Document]:
        """The open documents: inside a request, as they were when it arrived (snapshots,
        which no edit changes; do not modify the mapping), elsewhere the live ones."""
        return _REQUEST_DOCUMENTS.get(self.live_documents)

    def find_document(self, uri: str) -> Document | None:
        """Like :meth:`get_document`, None when ``uri`` is not open."""
        return self.documents.get(uri)

    def get_document(self, uri: str) -> Document:
        """The open document ``uri``, or a clear JSON-RPC error for the client.

        Inside a request: the document as it was when the request arrived (a snapshot),
        so that the answer describes the text the client asked about.
        """
        document = self.find_document(uri)
        if document is None:
            raise RequestFailed(self.messages("error.unknown_document", uri=uri))
        return document

    def point(self, document: Document, position: types.Position) -> Point:
        """The document point an LSP position denotes (clamped as the spec says)."""
        return document.index.clamp(position.line, position.character, self.encoding)

    def position(self, document: Document, point: Point) -> types.Position:
        line, character = document.index.point_position(point, self.encoding)
        return types.Position(line=line, character=character)

    def range(self, document: Document, start: Point, end: Point) -> types.Range:
        return types.Range(start=self.position(document, start), end=self.position(document, end))

    def open_document(self, uri: str, text: str, version: int | None) -> Document:
        document = Document(uri, text, version, self.tokenizer)
        self.live_documents[uri] = document
        self.schedule_tokenizing(document)
        self.document_changed(uri)
        return document

    def document_changed(self, uri: str) -> None:
        """Tell the :attr:`document_listeners` that document ``uri`` changed in some way."""
        for listener in self.document_listeners:
            listener(uri)

    def close_document(self, uri: str) -> None:
        self.live_documents.pop(uri, None)
        task = self._tokenizing.pop(uri, None)
        if task is not None:
            task.cancel()
        progress = self._progress.pop(uri, None)
        if progress is not None and not progress.done():
            progress.set_result(None)
        self.document_changed(uri)

    def schedule_tokenizing(self, document: Document) -> None:
        """Tokenize the rest of ``document`` in the background, a slice at a time."""
        task = self._tokenizing.get(document.uri)
        if task is not None and not task.done():
            return
        try:
            self._tokenizing[document.uri] = asyncio.ensure_future(self._tokenize(document))
        except RuntimeError:
            # No running event loop (unit tests drive the server directly): lazily later.
            pass

    async def _tokenize(self, document: Document) -> None:
        """The one task that tokenizes ``document``: short slices, then the event loop
        serves whatever arrived meanwhile, and whoever waits is told of the progress."""
        # Tokenizing a large document allocates millions of objects that all survive:
        # with the cyclic garbage collector on, its passes over the growing heap cost
        # more than the tokenizing. None of these objects form cycles.
        self._tokenizing_now += 1
        gc.disable()
        try:
            while not document.complete:
                document.tokenize_for(_SLICE_SECONDS)
                progress = self._progress.pop(document.uri, None)
                if progress is not None and not progress.done():
                    progress.set_result(None)
                # A message takes a few turns of the event loop (the pipe's callback,
                # the reader, the handler's task): let them all pass before the next
                # slice, so that a request waits for one slice, not one per turn.
                for _ in range(_TURNS):
                    await asyncio.sleep(0)
        finally:
            self._tokenizing_now -= 1
            if not self._tokenizing_now:
                gc.enable()
                # Later passes skip everything alive now (the tokens above all);
                # reference counting still frees them when a document closes.
                gc.freeze()

    async def tokenized(self, document: Document, through_line: int | None = None) -> None:
        """Wait until lines ``0..through_line`` (all, when None) have their tokens.

        The background task does the work; a ``$/cancelRequest`` cancels only the wait.
        A snapshot of a document that changed (or closed) since is tokenized here, a
        slice at a time; lines it shares with the new text are then cached for it.
        """
        last = len(document.lines) - 1 if through_line is None else min(through_line, len(document.lines) - 1)
        while not document.tokenized_through(last):
            live = self.live_documents.get(document.uri)
            if live is None or not live.same_text(document):
                document.tokenize_for(_SLICE_SECONDS)
                await asyncio.sleep(0)
                continue
            self.schedule_tokenizing(live)
            progress = self._progress.get(document.uri)
            if progress is None:
                progress = self._progress[document.uri] = asyncio.get_running_loop().create_future()
            await asyncio.shield(progress)

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
        if name == self.tokenizer.name:
            return False
        try:
            tokenizer = load_tokenizer(name)
        except (OSError, KeyError, ValueError) as error:
            self.report_once(
                self.messages(
                    "tokenizer.broken", path=name, problem=load_problem(error), previous=self.tokenizer_label()
                )
            )
            return False
        self.tokenizer = LineTokenizer(tokenizer, name)
        for document in self.live_documents.values():
            document.set_tokenizer(self.tokenizer)
            self.schedule_tokenizing(document)
            self.document_changed(document.uri)
        return True

    def resolve_tokenizer(self, name: str) -> str:
        """A tokenizer setting's value as loaded: "pt", "en", or an absolute path (a
        relative one is taken from the workspace root)."""
        if name in PACKAGED:
            return name
        path = Path(name).expanduser()
        if not path.is_absolute() and self.root_path is not None:
            path = self.root_path / path
        return str(path)

    def compared(self) -> list[ComparedTokenizer]:
        """The tokenizers to compare with (``glassllm.compareWith``), loaded; one that
        does not load is left out and reported once."""
        names = self.settings.compare_with
        wanted = default_compare_with(self.tokenizer.name) if names is None else map(self.resolve_tokenizer, names)
        compared, failures = self.compare_set.get(list(wanted), self.tokenizer.name)
        for name, problem in failures:
            self.report_once(self.messages("compare.broken", path=name, problem=problem))
        return compared

    def refresh_views(self) -> None:
        """Ask the client to re-request what depends on the tokens, where it can."""
        for uri in list(self.live_documents):
            self.document_changed(uri)
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
