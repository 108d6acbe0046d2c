"""Semantic tokens: every token of the document as alternating colored bands (full,
range and delta), from :mod:`glassllm_server.bands`. On a chat document, the tokens of
the messages' text as the model receives them (see :mod:`glassllm_server.chat_documents`)."""

from __future__ import annotations

import asyncio
import itertools
import time

from lsprotocol import types

from glassllm.caches import LruCache
from glassllm.pipeline.tokens import TokenSpan
from glassllm_server.bands import BAND_LIMIT, TOKEN_TYPES, Band, delta_edits, encode_bands, line_bands, window_bands
from glassllm_server.document import ReadOnlyDocument
from glassllm_server.feature import Feature, on_document
from glassllm_server.line_tokens import LONG_LINE
from glassllm_server.positions import Encoding, Point
from glassllm_server.server import GlassServer
from glassllm_server.snapshot import DocumentSnapshot

__all__ = ["LEGEND", "SemanticTokens"]

LEGEND = types.SemanticTokensLegend(token_types=TOKEN_TYPES, token_modifiers=[])

# Encoding gives the event loop back after this long (checked every few lines), so a
# large document's bands never hold up other requests, and a cancelled request stops.
_SLICE_SECONDS = 0.004
_CHECK_LINES = 32
# Bands by line text, bounded by the lines' characters like the document's line cache
# (docs/server.md, "Memory").
BAND_CACHE_CHARACTERS = 1 << 20


class SemanticTokens(Feature):
    def __init__(self, server: GlassServer) -> None:
        super().__init__(server)
        # The last full answer per document, for delta requests: (result id, data).
        self.last_result: dict[str, tuple[str, list[int]]] = {}
        self.result_ids = itertools.count(1)
        # Bands by line text, for the tokenizer and encoding in use: an edit recomputes
        # only the lines it touched.
        self.cache: LruCache[str, list[Band]] = LruCache(BAND_CACHE_CHARACTERS, len)
        self.cache_owner: object = None
        self.session.open_documents.changed.subscribe(self.forget_closed)

    def forget_closed(self, uri: str) -> None:
        if uri not in self.session.open_documents:
            self.last_result.pop(uri, None)

    @on_document(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, LEGEND)
    async def full(self, snapshot: DocumentSnapshot, params: types.SemanticTokensParams) -> types.SemanticTokens:
        data = await self.full_data(snapshot)
        return types.SemanticTokens(data=data, result_id=self.remember(snapshot.uri, data))

    @on_document(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA, LEGEND)
    async def delta(
        self, snapshot: DocumentSnapshot, params: types.SemanticTokensDeltaParams
    ) -> types.SemanticTokens | types.SemanticTokensDelta:
        data = await self.full_data(snapshot)
        previous = self.last_result.get(snapshot.uri)
        result_id = self.remember(snapshot.uri, data)
        if previous is None or previous[0] != params.previous_result_id:
            return types.SemanticTokens(data=data, result_id=result_id)
        edits = [
            types.SemanticTokensEdit(start=start, delete_count=count, data=inserted)
            for start, count, inserted in delta_edits(previous[1], data)
        ]
        return types.SemanticTokensDelta(edits=edits, result_id=result_id)

    @on_document(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE, LEGEND)
    async def in_range(
        self, snapshot: DocumentSnapshot, params: types.SemanticTokensRangeParams
    ) -> types.SemanticTokens:
        document, encoding = snapshot.document, snapshot.encoding
        if not self.session.settings.semantic_tokens:
            return types.SemanticTokens(data=[])
        start, end = snapshot.points(params.range)
        chat = await self.chat_bands(snapshot, start.line, end.line)
        if chat is not None:
            return types.SemanticTokens(data=encode_bands(chat))
        low = document.index.point_position(start, encoding)[1]
        high = document.index.point_position(end, encoding)[1]
        if start.line == end.line and len(document.lines[start.line]) > LONG_LINE:
            # A visible part of a very long line: its bands, not the line's.
            found = _long_line_window(document, start, end, encoding)
            if found is not None:
                found = [band for band in found if band[0] + band[1] > low and band[0] < high]
                return types.SemanticTokens(data=encode_bands([(start.line, found)]))
        bands = await self.bands_of(document, start.line, end.line, encoding)
        # Bands of the first and last lines that lie wholly outside the range are left out
        # (each band keeps its type, so colors match the full answer).
        if bands:
            bands[0] = (start.line, [band for band in bands[0][1] if band[0] + band[1] > low])
        if bands and bands[-1][0] == end.line:
            bands[-1] = (end.line, [band for band in bands[-1][1] if band[0] < high])
        return types.SemanticTokens(data=encode_bands(bands))

    async def full_data(self, snapshot: DocumentSnapshot) -> list[int]:
        if not self.session.settings.semantic_tokens:
            return []
        document = snapshot.document
        last = len(document.lines) - 1
        chat = await self.chat_bands(snapshot, 0, last)
        return encode_bands(chat if chat is not None else await self.bands_of(document, 0, last, snapshot.encoding))

    async def chat_bands(
        self, snapshot: DocumentSnapshot, first: int, last: int
    ) -> list[tuple[int, list[Band]]] | None:
        """On a chat document, the bands of its message tokens on lines ``first..last``;
        None: the plain road."""
        units = await self.chats.units(snapshot, range(first, last + 1))
        if units is None:
            return None
        spans: dict[int, list[TokenSpan]] = {}
        for unit in units:
            for line, found in unit.line_spans(first, last).items():
                spans.setdefault(line, []).extend(found)
        lines = snapshot.document.lines
        return [
            (line, line_bands(lines[line], sorted(found, key=lambda span: span.start), snapshot.encoding))
            for line, found in sorted(spans.items())
        ]

    def remember(self, uri: str, data: list[int]) -> str:
        result_id = str(next(self.result_ids))
        self.last_result[uri] = (result_id, data)
        return result_id

    async def bands_of(
        self, document: ReadOnlyDocument, first: int, last: int, encoding: Encoding
    ) -> list[tuple[int, list[Band]]]:
        """The bands of lines ``first..last``, stopping once past :data:`BAND_LIMIT`."""
        if self.cache_owner != (document.tokenizer, encoding):
            self.cache.clear()
            self.cache_owner = (document.tokenizer, encoding)
        # A line tokenized with others in a block has bands that are not its text's alone.
        cache = self.cache if document.tokenizer.lines_alone else None
        bands = []
        count = 0
        deadline = time.perf_counter() + _SLICE_SECONDS
        for line in range(first, last + 1):
            text = document.lines[line]
            found = None if cache is None else cache.get(text)
            if found is None:
                found = line_bands(text, document.line_spans(line), encoding)
                if cache is not None:
                    cache.put(text, found)
            bands.append((line, found))
            count += len(found)
            if count > BAND_LIMIT:
                break
            if line % _CHECK_LINES == 0 and time.perf_counter() > deadline:
                await asyncio.sleep(0)
                deadline = time.perf_counter() + _SLICE_SECONDS
        return bands


def _long_line_window(document: ReadOnlyDocument, start: Point, end: Point, encoding: Encoding) -> list[Band] | None:
    """The bands of columns ``start..end`` of one very long line, None where NFC changed
    the line (its bands then come from the whole line)."""
    tokens = document.line_tokens(start.line)
    if tokens.origin is not None:
        return None
    return window_bands(document.lines[start.line], tokens, start.column, end.column, encoding)
