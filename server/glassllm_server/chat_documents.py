"""Chat documents: the one place that decides a document is a conversation (or a dataset
of them) and gives its :class:`~glassllm_server.chat_units.ChatUnit` s to the features.

A document is a chat document when the tokenizer in use is a real model's, the
``glassllm.chatTemplate`` setting is not ``none``, and the document is a ``.json`` file
holding a conversation (a list of messages, or an object with ``messages``) or a
``.jsonl``/``.ndjson`` file (one conversation a line; a line that holds none is counted
as plain text). Every other document takes the plain road.

The chat template is someone else's code: it renders only in the library's sandboxed
worker process (:mod:`glassllm.chat.sandbox`, bounded in time, output and memory),
called from one worker thread here, so the event loop answers every other request
meanwhile. A template that fails is reported once, naming the file, and its documents
take the plain road until the settings change. Encodings are kept per conversation text,
so an edit re-renders only the conversation it changed, and a dataset's lines are
encoded as they are asked for (the visible ones first: code lenses resolve one by one).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlparse

from glassllm.chat import ChatEncoding, ChatFormat, Conversation, conversation_from, encode_chats, load_chat_format
from glassllm.chat.template import ChatTemplate
from glassllm.shown.problems import describe
from glassllm_server.chat_units import ChatUnit, MessageText, message_texts
from glassllm_server.client import Client
from glassllm_server.confinement import OutsideWorkspace, inside, quiet_problem
from glassllm_server.json_strings import JsonTextError, parse_json
from glassllm_server.positions import content_length
from glassllm_server.session import Session
from glassllm_server.snapshot import DocumentSnapshot
from glassllm_server.tokenizers import Tokenizers

__all__ = ["ChatDocuments", "ChatKind", "chat_kind"]

logger = logging.getLogger(__name__)

ChatKind = Literal["conversation", "dataset"]
_SUFFIXES: dict[str, ChatKind] = {".json": "conversation", ".jsonl": "dataset", ".ndjson": "dataset"}
# Conversations kept encoded (by their text), across documents and edits.
_KEPT = 20_000
# Dataset lines sent to the template's worker in one request.
_BATCH = 64
# Template failures after which the template is not used again (until the settings
# change): the template's own fault, whatever the conversation.
_FATAL = ("syntax", "timeout", "ended", "memory", "recursion", "too_large", "refused", "forbidden")


def chat_kind(uri: str) -> ChatKind | None:
    """What a document's name says it may hold: one conversation, a dataset, or neither."""
    return _SUFFIXES.get(Path(unquote(urlparse(uri).path)).suffix.lower())


# A text parsed as a conversation: its place in the batch, the conversation, its messages' strings.
_Parsed = tuple[int, Conversation, list[list[MessageText]]]


class ChatDocuments:
    """The chat format of the tokenizer in use, and the encoded conversations of chat
    documents, for the features (:meth:`units`, :meth:`unit`, :meth:`ready_unit`, :meth:`ready_units`)."""

    def __init__(self, session: Session, tokenizers: Tokenizers, client: Client) -> None:
        self.session, self.tokenizers, self.client = session, tokenizers, client
        # One thread: the template's worker process answers one request at a time.
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="glassllm-chat")
        self._format_key: tuple[str, str] | None = None
        self._format: asyncio.Future[ChatFormat | None] | None = None
        self._broken: tuple[str, str] | None = None  # the format whose template failed
        self._encoded: OrderedDict[str, ChatUnit | None] = OrderedDict()  # by text; None: no conversation
        self._busy: dict[str, asyncio.Future[None]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None  # where the chat thread reports
        session.open_documents.defer_to(self._working)

    def _working(self) -> bool:
        """Whether the chat thread encodes (or loads a format for) a request that waits."""
        return bool(self._busy) or (self._format is not None and not self._format.done())

    # The one decision

    def kind(self, snapshot: DocumentSnapshot) -> ChatKind | None:
        """Whether ``snapshot`` may be a chat document (its name, the tokenizer, the
        settings); None: the plain road."""
        key = self._wanted_format()
        if key is None or key == self._broken:
            return None
        return chat_kind(snapshot.uri)

    def _wanted_format(self) -> tuple[str, str] | None:
        setting = self.session.settings.chat_template
        tokenizer = self.tokenizers.in_use
        # Only a real model's tokenizer has a chat template (glassllm's own keep counts).
        if setting == "none" or tokenizer.facts.has_counts:
            return None
        return tokenizer.name, setting if setting == "auto" else self.tokenizers.resolve(setting)

    async def _chat_format(self) -> tuple[tuple[str, str], ChatFormat] | None:
        """The chat format the settings ask for, loaded off the event loop once, with the
        key it was loaded for (the settings may change while it loads); None when it
        cannot be had (told to the user once)."""
        key = self._wanted_format()
        if key is None:
            return None
        if key != self._format_key or self._format is None:
            self._close_format()
            self._format_key, self._encoded = key, OrderedDict()
            template = None if key[1] == "auto" else key[1]
            confined_to = self.session.confined_to
            loading = asyncio.get_running_loop().run_in_executor(self._thread, _load, key[0], template, confined_to)
            self._format = asyncio.ensure_future(self._loaded(key, loading))
        found = await asyncio.shield(self._format)
        return None if found is None else (key, found)

    async def _loaded(self, key: tuple[str, str], loading: asyncio.Future[ChatFormat]) -> ChatFormat | None:
        """The chat format ``key`` names, once loaded; a failure is that key's, whatever
        the settings ask for by then (they may have changed while it loaded)."""
        try:
            return await loading
        except Exception as error:  # any failure: told once, and chat documents are plain text
            if not isinstance(error, (OSError, ValueError)):
                logger.error("loading the chat format failed", exc_info=error)
            self._broken = key
            tokenizer, template = key
            path = tokenizer if template == "auto" else template
            problem = self._describe(error, key).rstrip(".")
            self.client.report_once(self.session.messages("chat.no_format", path=path, problem=problem))
            return None

    def _close_format(self) -> None:
        if self._format is not None and self._format.done() and not self._format.cancelled():
            found = self._format.result()
            if found is not None:
                self._thread.submit(found.close)

    def _describe(self, error: BaseException, key: tuple[str, str] | None) -> str:
        """What went wrong with the chat format ``key``, for the user; over TCP without
        quoting a file's content (a template's error may quote its source)."""
        if self.session.confined_to is None or not isinstance(error, Exception) or key is None:
            return describe(error, self.session.locale)
        tokenizer, template = key
        return quiet_problem(error, tokenizer if template == "auto" else template, self.session.locale)

    # Units

    async def units(self, snapshot: DocumentSnapshot, lines: range | None = None) -> list[ChatUnit] | None:
        """The conversations of ``snapshot`` (those starting on ``lines``, all when None),
        encoded; None when it is no chat document (the plain road)."""
        texts = self._texts(snapshot, lines)
        if texts is None:
            return None
        units: list[ChatUnit] = []
        for start in range(0, len(texts), _BATCH):
            units.extend(unit for unit in await self._encode(texts[start : start + _BATCH]) if unit is not None)
            if self.kind(snapshot) is None:  # the template failed meanwhile
                return None
        if not units and self.kind(snapshot) == "conversation":
            return None  # a .json file that holds no conversation is plain text
        return units

    async def unit(self, snapshot: DocumentSnapshot, line: int) -> ChatUnit | None:
        """The conversation holding line ``line``, encoded; None when there is none."""
        texts = self._texts(snapshot, range(line, line + 1))
        return None if not texts else (await self._encode(texts))[0]

    def ready_units(self, snapshot: DocumentSnapshot) -> list[tuple[int, ChatUnit | Literal[False] | None]] | None:
        """Each line a conversation may start on, with its unit as :meth:`ready_unit`
        gives it (asked once for a whole dataset, as its code lenses are); None for a
        document that is no chat document."""
        texts = self._texts(snapshot, None)
        if texts is None:
            return None
        if self._wanted_format() != self._format_key:
            return [(first, False) for first, _ in texts]
        encoded = self._encoded
        return [(first, self._moved(encoded[text], first) if text in encoded else False) for first, text in texts]

    def ready_unit(self, snapshot: DocumentSnapshot, line: int) -> ChatUnit | Literal[False] | None:
        """Like :meth:`unit` without waiting: False when it is not encoded yet (with the
        chat format the settings ask for now: the kept ones are the last format's until
        the next encoding asks for the new one)."""
        texts = self._texts(snapshot, range(line, line + 1))
        if not texts:
            return None
        first, text = texts[0]
        if self._wanted_format() != self._format_key or text not in self._encoded:
            return False
        return self._moved(self._encoded[text], first)

    def _texts(
        self, snapshot: DocumentSnapshot, lines: range | None, holding: bool = False
    ) -> list[tuple[int, str]] | None:
        """``(first line, text)`` of each conversation the document may hold on
        ``lines`` (its one text for a conversation document when ``holding`` or when
        ``lines`` has line 0); None for a document that is no chat document."""
        kind = self.kind(snapshot)
        if kind is None:
            return None
        document = snapshot.document
        all_lines = document.lines
        if kind == "conversation":
            return [(0, document.text)]  # the conversation holds every line
        chosen = range(len(all_lines)) if lines is None else range(max(lines.start, 0), min(lines.stop, len(all_lines)))
        return [
            (number, all_lines[number][: content_length(all_lines[number])])
            for number in chosen
            if all_lines[number].strip()
        ]

    async def _encode(self, texts: list[tuple[int, str]]) -> list[ChatUnit | None]:
        """The unit of each ``(first line, text)``, encoding those not kept yet."""
        loaded = await self._chat_format()
        if loaded is None:
            return [None] * len(texts)
        key, chat = loaded
        loop = self._loop = asyncio.get_running_loop()
        missing = [text for _, text in texts if text not in self._encoded and text not in self._busy]
        if missing:
            done = loop.create_future()
            for text in missing:
                self._busy[text] = done
            work = loop.run_in_executor(self._thread, self._encoded_now, key, chat, missing)
            work.add_done_callback(functools.partial(self._stored, key, missing, done))
            # A cancelled request leaves the work to finish and be kept for the next one.
            with contextlib.suppress(Exception):  # told by _stored
                await asyncio.shield(work)
        for _, text in texts:
            if text in self._busy:
                await asyncio.shield(self._busy[text])
        return [self._moved(self._encoded.get(text), first) for first, text in texts]

    def _stored(
        self, key: tuple[str, str] | None, texts: list[str], done: asyncio.Future[None], work: asyncio.Future[Any]
    ) -> None:
        """Keep what the chat thread encoded (unless the chat format changed meanwhile);
        a failure that is not the template's (a bug's) is logged, its texts left plain."""
        for text in texts:
            self._busy.pop(text, None)
        error = None if work.cancelled() else work.exception()
        if error is not None:
            logger.error("encoding %d conversations failed", len(texts), exc_info=error)
        if key == self._format_key and not work.cancelled():
            self._keep(dict(zip(texts, [None] * len(texts) if error is not None else work.result(), strict=True)))
        done.set_result(None)

    @staticmethod
    def _moved(unit: ChatUnit | None, first: int) -> ChatUnit | None:
        return None if unit is None else unit.moved(first)

    def _keep(self, found: dict[str, ChatUnit | None]) -> None:
        self._encoded.update(found)
        while len(self._encoded) > _KEPT:
            self._encoded.popitem(last=False)

    def _encoded_now(self, key: tuple[str, str], chat: ChatFormat, texts: list[str]) -> list[ChatUnit | None]:
        """In the chat thread: each text parsed, checked and encoded with the chat format
        ``key`` names (None: no conversation there, or a conversation the template
        refused, told once)."""
        units: list[ChatUnit | None] = [None] * len(texts)
        if key == self._broken:
            # Queued before its template failed: rendering again would wait out the
            # deadline once more, for every batch in the queue.
            return units
        parsed: list[_Parsed] = []
        for number, text in enumerate(texts):
            try:
                json_text = parse_json(text)
                conversation = conversation_from(json_text.value, "")
            except (JsonTextError, ValueError):
                continue
            parsed.append((number, conversation, message_texts(json_text, conversation)))
        if not parsed:
            return units
        try:
            encodings = list(encode_chats(chat, [conversation for _, conversation, _ in parsed]))
        except ValueError as error:
            return self._one_by_one(key, chat, parsed, units, error)
        for (number, conversation, texts_of), encoding in zip(parsed, encodings, strict=True):
            units[number] = _unit(chat, encoding, conversation, texts_of)
        return units

    def _one_by_one(
        self,
        key: tuple[str, str],
        chat: ChatFormat,
        parsed: list[_Parsed],
        units: list[ChatUnit | None],
        error: ValueError,
    ) -> list[ChatUnit | None]:
        """After a batch failed: a template-wide failure ends the template's use; else
        each conversation alone, the one(s) the template refuses left out."""
        kind = str(getattr(getattr(error, "problem", None), "code", "")).removeprefix("chat.template_")
        self._report(key, error)
        if kind in _FATAL:
            self._broken = key
        if kind in _FATAL or len(parsed) == 1:
            return units
        for number, conversation, texts_of in parsed:
            try:
                encoding = next(encode_chats(chat, [conversation]))
            except ValueError as single:
                self._report(key, single)
                continue
            units[number] = _unit(chat, encoding, conversation, texts_of)
        return units

    def _report(self, key: tuple[str, str], error: ValueError) -> None:
        """A template failure, told once (from the chat thread: on the event loop)."""
        message = self.session.messages("chat.template_failed", problem=self._describe(error, key).rstrip("."))
        loop = self._loop
        if loop is not None:
            loop.call_soon_threadsafe(self._told, message)

    def _told(self, message: str) -> None:
        self.client.report_once(message)
        self.tokenizers.refresh_views()  # its documents now take the plain road


def _unit(
    chat: ChatFormat, encoding: ChatEncoding, conversation: Conversation, texts: list[list[MessageText]]
) -> ChatUnit:
    """A conversation's unit, with what its encoding warns of (see ChatUnit)."""
    tokenizer, tokens = chat.tokenizer, encoding.tokens
    injected = tuple(
        number for number, token in enumerate(tokens) if token.source is not None and tokenizer.is_matched(token.id)
    )
    bos = tokenizer.around[0]
    # Only a template's rendering is tokenized without the post-processor: Mistral's
    # formats write their BOS the one time.
    twice = isinstance(chat.template, ChatTemplate) and bos and tuple(encoding.ids[: len(bos)]) == tuple(bos)
    roles = [str(message.get("role")) for message in conversation.messages]
    return ChatUnit(encoding, texts, roles, injected, " ".join(tokenizer.tokens(bos)) if twice else "")


def _load(tokenizer: str, template: str | None, confined_to: tuple[Path, ...] | None) -> ChatFormat:
    """The chat format; over TCP, a template file only inside the workspace folders
    (the tokenizer was checked when it loaded)."""
    if template is not None and confined_to is not None and not inside(Path(template), confined_to):
        raise OutsideWorkspace(template, confined_to)
    return load_chat_format(tokenizer, template=template)
