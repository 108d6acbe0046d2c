"""The open documents: their text and versions, background tokenizing, and the event
features subscribe to when a document opens, changes or closes.

The client's notifications edit the live documents here; requests read snapshots of them
(see :mod:`glassllm_server.protocol.arrival`). Tokenizing runs in the background a short
slice at a time, giving the event loop back in between, and whoever needs a document's
tokens waits for it with :meth:`OpenDocuments.tokenized`. No pygls here.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
from collections.abc import Callable, Sequence

from lsprotocol import types

from glassllm_server.document import Document, ReadOnlyDocument
from glassllm_server.line_tokenizer import LineTokenizer
from glassllm_server.positions import Encoding

__all__ = ["DocumentEvent", "OpenDocuments", "documents_at_arrival"]

# Background tokenizing gives the event loop back after this long, so requests that
# arrive meanwhile wait at most about that much.
SLICE_SECONDS = 0.002
# A message takes a few turns of the event loop (the pipe's callback, the reader, the
# handler's task): all pass between two slices, so a request waits for one slice.
_TURNS = 4
# How long background tokenizing pauses after a slice while a thread's work comes first.
_DEFERRED_SECONDS = 0.01
# A background pass that leaves at least this many new objects (a large document just
# opened: a few per line and per new chunk) freezes them (``gc.freeze()``), out of the
# collector's way: a collection walks 50,000 objects in some 7 ms here. An edit's few
# lines are frozen with the next edit (see :meth:`OpenDocuments.apply_changes`).
FREEZE_OBJECTS = 50_000

# The open documents as the request being handled found them (see OpenDocuments.arrive);
# unset outside requests: notifications and background work see the live documents.
_AT_ARRIVAL: contextvars.ContextVar[dict[str, ReadOnlyDocument]] = contextvars.ContextVar("documents_at_arrival")


def documents_at_arrival() -> dict[str, ReadOnlyDocument] | None:
    """The open documents as the request being handled found them (None outside a request)."""
    return _AT_ARRIVAL.get(None)


class DocumentEvent:
    """Something happened to one document: it opened, changed, closed or was tokenized
    afresh (another tokenizer), or its views must be recomputed (the settings changed).

    Subscribers are called with the document's URI, in the order they subscribed.
    """

    def __init__(self) -> None:
        self._subscribers: list[Callable[[str], None]] = []

    def subscribe(self, subscriber: Callable[[str], None]) -> None:
        self._subscribers.append(subscriber)

    def emit(self, uri: str) -> None:
        for subscriber in self._subscribers:
            subscriber(uri)


class OpenDocuments:
    """The documents the client has open, as its notifications left them."""

    def __init__(self) -> None:
        self.live: dict[str, Document] = {}
        self.changed = DocumentEvent()
        self._tokenizing: dict[str, asyncio.Task[None]] = {}
        # Per document, resolved after each slice of background tokenizing.
        self._progress: dict[str, asyncio.Future[None]] = {}
        self._tokenizing_now = 0  # background tokenizing tasks running
        self._young_before = 0  # the collector's young objects when they started
        self._foreground: list[Callable[[], bool]] = []  # see defer_to

    def defer_to(self, working: Callable[[], bool]) -> None:
        """Background tokenizing pauses between its slices while ``working()`` says a
        thread does what a user waits for (a chat dataset's visible conversations): the
        loop's slices would otherwise hold the GIL nearly all the time, and a thread that
        waits on a pipe gets it back only after them (a 10,000-conversation dataset's
        first lens took 7 s instead of 1 s beside its 13 MB being tokenized)."""
        self._foreground.append(working)

    def get(self, uri: str) -> Document | None:
        """The live document ``uri``, None when it is not open."""
        return self.live.get(uri)

    def __contains__(self, uri: str) -> bool:
        return uri in self.live

    def uris(self) -> list[str]:
        return list(self.live)

    def snapshots(self) -> dict[str, ReadOnlyDocument]:
        """Every open document as it is now (what a request arriving now sees)."""
        return {uri: document.snapshot() for uri, document in self.live.items()}

    def arrive(self) -> None:
        """A request arrives: it will read the open documents as they are now
        (:func:`documents_at_arrival`, in the context it runs in), whatever edits come
        before it runs. Called in that context (see :mod:`glassllm_server.protocol.arrival`)."""
        _AT_ARRIVAL.set(self.snapshots())

    # The client's notifications

    def open(self, uri: str, text: str, version: int | None, tokenizer: LineTokenizer) -> Document:
        document = Document(uri, text, version, tokenizer)
        self.live[uri] = document
        self._schedule(document)
        self.changed.emit(uri)
        return document

    def apply_changes(
        self,
        uri: str,
        version: int | None,
        changes: Sequence[types.TextDocumentContentChangeEvent],
        encoding: Encoding,
    ) -> None:
        """Apply a ``didChange``'s edits in order; a document never opened is left alone."""
        document = self.live.get(uri)
        if document is None:
            return
        # An edit copies the document's per-line lists when a request's snapshot holds
        # the old version (its lines, their tokens, each compared tokenizer's counts:
        # 30,000 entries each in the 7 MB corpus), and a collection that finds them young
        # walks every entry: 7.5 ms of CPU time an edit there. So the collector frees the
        # garbage made since the last edit now, while it is all there is to walk (the
        # requests' cycles: nothing alive is lost), and what is alive after the edit, its
        # new lists with it, is frozen at once, never walked; reference counting still
        # frees it when the next edit replaces it.
        # While a large document is being tokenized, its many new objects would all be
        # walked: they are frozen now uncollected, with what little garbage came meanwhile.
        if gc.get_count()[0] < FREEZE_OBJECTS:
            gc.collect()
        for change in changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                start = document.index.clamp(change.range.start.line, change.range.start.character, encoding)
                end = document.index.clamp(change.range.end.line, change.range.end.character, encoding)
                document.apply_change(start, end, change.text)
                document.focus(start.line)
            else:
                document.replace_text(change.text)
        document.set_version(version)
        gc.freeze()
        self._young_before = 0  # gc.freeze() starts the young count afresh
        self._schedule(document)
        self.changed.emit(uri)

    def close(self, uri: str) -> None:
        self.live.pop(uri, None)
        task = self._tokenizing.pop(uri, None)
        if task is not None:
            task.cancel()
        progress = self._progress.pop(uri, None)
        if progress is not None and not progress.done():
            progress.set_result(None)
        self.changed.emit(uri)

    def set_tokenizer(self, tokenizer: LineTokenizer) -> None:
        """Tokenize every open document afresh with ``tokenizer``."""
        for document in self.live.values():
            document.set_tokenizer(tokenizer)
            self._schedule(document)
            self.changed.emit(document.uri)

    def announce_all(self) -> None:
        """Tell the subscribers that every open document's views must be recomputed."""
        for uri in list(self.live):
            self.changed.emit(uri)

    # Background tokenizing

    def _schedule(self, document: Document) -> None:
        """Tokenize the rest of ``document`` in the background, a slice at a time."""
        task = self._tokenizing.get(document.uri)
        if task is not None and not task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # unit tests drive the server without one: lazily later
            return
        self._tokenizing[document.uri] = loop.create_task(self._tokenize(document))

    async def _tokenize(self, document: Document) -> None:
        """The one task that tokenizes ``document``: short slices, then the event loop
        serves whatever arrived meanwhile, and whoever waits is told of the progress."""
        # Tokenizing a large document allocates objects that all survive: with the cyclic
        # garbage collector on, its passes over the growing heap cost more than the
        # tokenizing. None of these objects form cycles.
        if not self._tokenizing_now:
            gc.disable()
            self._young_before = gc.get_count()[0]
        self._tokenizing_now += 1
        tokenizer = document.tokenizer
        tokenizer.begin_pass()
        try:
            while not document.complete:
                document.tokenize_for(SLICE_SECONDS)
                progress = self._progress.pop(document.uri, None)
                if progress is not None and not progress.done():
                    progress.set_result(None)
                for _ in range(_TURNS):
                    await asyncio.sleep(0)
                if any(working() for working in self._foreground):
                    await asyncio.sleep(_DEFERRED_SECONDS)
        finally:
            tokenizer.end_pass()
            self._tokenizing_now -= 1
            if not self._tokenizing_now:
                if gc.get_count()[0] - self._young_before >= FREEZE_OBJECTS:
                    # Later passes skip everything alive now (the tokens above all);
                    # reference counting still frees them when their lines change or
                    # the document closes.
                    gc.freeze()
                gc.enable()

    async def tokenized(self, document: ReadOnlyDocument, through_line: int | None = None) -> None:
        """Wait until lines ``0..through_line`` (all, when None) have their tokens.

        The background task does the work; a ``$/cancelRequest`` cancels only the wait.
        A snapshot of a document that changed (or closed) since is tokenized here, a
        slice at a time; lines it shares with the new text are then cached for it.
        """
        last = len(document.lines) - 1 if through_line is None else min(through_line, len(document.lines) - 1)
        while not document.tokenized_through(last):
            live = self.live.get(document.uri)
            if live is None or not live.same_text(document):
                document.tokenize_for(SLICE_SECONDS)
                await asyncio.sleep(0)
                continue
            self._schedule(live)
            progress = self._progress.get(document.uri)
            if progress is None:
                progress = self._progress[document.uri] = asyncio.get_running_loop().create_future()
            await asyncio.shield(progress)
