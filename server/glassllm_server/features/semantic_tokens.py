"""Semantic tokens: every token of the document as alternating colored bands (full,
range and delta), from :mod:`glassllm_server.bands`."""

from __future__ import annotations

import asyncio
import itertools
import time

from lsprotocol import types

from glassllm_server.bands import BAND_LIMIT, TOKEN_TYPES, Band, delta_edits, encode_bands, line_bands, window_bands
from glassllm_server.document import LONG_LINE, Document
from glassllm_server.server import GlassServer

__all__ = ["LEGEND", "register"]

LEGEND = types.SemanticTokensLegend(token_types=TOKEN_TYPES, token_modifiers=[])

# Encoding gives the event loop back after this long (checked every few lines), so a
# large document's bands never hold up other requests, and a cancelled request stops.
_SLICE_SECONDS = 0.004
_CHECK_LINES = 32
_CACHE_LIMIT = 1 << 17


def register(server: GlassServer) -> None:
    # The last full answer per document, for delta requests: (result id, data).
    last_result: dict[str, tuple[str, list[int]]] = {}
    result_ids = itertools.count(1)

    async def full_data(ls: GlassServer, uri: str) -> list[int]:
        document = ls.get_document(uri)
        if not ls.settings.semantic_tokens:
            return []
        return encode_bands(await bands_of(ls, document, 0, len(document.lines) - 1))

    def remember(uri: str, data: list[int]) -> str:
        result_id = str(next(result_ids))
        last_result[uri] = (result_id, data)
        return result_id

    # Bands by line text, for the tokenizer and encoding in use: an edit recomputes only
    # the lines it touched.
    cache: dict[str, list[Band]] = {}
    cache_owner: list[object] = [None]

    async def bands_of(ls: GlassServer, document: Document, first: int, last: int) -> list[tuple[int, list[Band]]]:
        """The bands of lines ``first..last``, stopping once past :data:`BAND_LIMIT`."""
        encoding = ls.encoding
        if cache_owner[0] != (document.tokenizer, encoding):
            cache.clear()
            cache_owner[0] = (document.tokenizer, encoding)
        bands = []
        count = 0
        deadline = time.perf_counter() + _SLICE_SECONDS
        for line in range(first, last + 1):
            text = document.lines[line]
            found = cache.get(text)
            if found is None:
                found = line_bands(text, document.line_spans(line), encoding)
                if len(cache) >= _CACHE_LIMIT:
                    cache.clear()
                cache[text] = found
            bands.append((line, found))
            count += len(found)
            if count > BAND_LIMIT:
                break
            if line % _CHECK_LINES == 0 and time.perf_counter() > deadline:
                await asyncio.sleep(0)
                deadline = time.perf_counter() + _SLICE_SECONDS
        return bands

    def forget(uri: str) -> None:
        if uri not in server.live_documents:
            last_result.pop(uri, None)

    server.document_listeners.append(forget)

    @server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, LEGEND)
    async def full(ls: GlassServer, params: types.SemanticTokensParams) -> types.SemanticTokens:
        uri = params.text_document.uri
        data = await full_data(ls, uri)
        return types.SemanticTokens(data=data, result_id=remember(uri, data))

    @server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA, LEGEND)
    async def delta(
        ls: GlassServer, params: types.SemanticTokensDeltaParams
    ) -> types.SemanticTokens | types.SemanticTokensDelta:
        uri = params.text_document.uri
        data = await full_data(ls, uri)
        previous = last_result.get(uri)
        result_id = remember(uri, data)
        if previous is None or previous[0] != params.previous_result_id:
            return types.SemanticTokens(data=data, result_id=result_id)
        edits = [
            types.SemanticTokensEdit(start=start, delete_count=count, data=inserted)
            for start, count, inserted in delta_edits(previous[1], data)
        ]
        return types.SemanticTokensDelta(edits=edits, result_id=result_id)

    @server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE, LEGEND)
    async def in_range(ls: GlassServer, params: types.SemanticTokensRangeParams) -> types.SemanticTokens:
        document = ls.get_document(params.text_document.uri)
        if not ls.settings.semantic_tokens:
            return types.SemanticTokens(data=[])
        start = ls.point(document, params.range.start)
        end = ls.point(document, params.range.end)
        if end < start:
            start, end = end, start
        if start.line == end.line and len(document.lines[start.line]) > LONG_LINE:
            # A visible part of a very long line: its bands, not the line's.
            tokens = document.line_tokens(start.line)
            if tokens.origin is None:
                found = window_bands(document.lines[start.line], tokens, start.column, end.column, ls.encoding)
                low = document.index.point_position(start, ls.encoding)[1]
                high = document.index.point_position(end, ls.encoding)[1]
                found = [band for band in found if band[0] + band[1] > low and band[0] < high]
                return types.SemanticTokens(data=encode_bands([(start.line, found)]))
        bands = list(await bands_of(ls, document, start.line, end.line))
        low = document.index.point_position(start, ls.encoding)[1]
        high = document.index.point_position(end, ls.encoding)[1]
        # Bands of the first and last lines that lie wholly outside the range are left out
        # (each band keeps its type, so colors match the full answer).
        if bands:
            bands[0] = (start.line, [band for band in bands[0][1] if band[0] + band[1] > low])
        if bands and bands[-1][0] == end.line:
            bands[-1] = (end.line, [band for band in bands[-1][1] if band[0] < high])
        return types.SemanticTokens(data=encode_bands(bands))
