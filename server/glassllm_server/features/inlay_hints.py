"""Inlay hints for the requested range, resolved lazily to the piece and ID.

On a chat document, the hints are the chat template's text, where the template inserts
it (see :mod:`glassllm_server.chat_documents`): the document's own characters are not
what the model receives between the messages.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from lsprotocol import types

from glassllm_server.feature import Feature, on_document, on_message
from glassllm_server.hints import HintCache, hint_window, hints_json
from glassllm_server.positions import Point
from glassllm_server.protocol.glass_protocol import RawJSON
from glassllm_server.render.chat import template_hint
from glassllm_server.render.hints import hint_tooltip
from glassllm_server.server import GlassServer
from glassllm_server.snapshot import DocumentSnapshot

__all__ = ["HINT_LINES", "InlayHints"]

# At most this many lines get hints in one answer: Neovim asks for the whole document,
# and 150 lines of dense prose are already some 12,000 hints (about 0.1 s).
HINT_LINES = 150
_BLOCK_LINES = 20


class InlayHints(Feature):
    def __init__(self, server: GlassServer) -> None:
        super().__init__(server)
        self.cache = HintCache()

    @on_document(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=True))
    async def inlay_hint(self, snapshot: DocumentSnapshot, params: types.InlayHintParams) -> RawJSON:
        document, settings = snapshot.document, self.session.settings
        start, end = hint_window(
            document, snapshot.point(params.range.start), snapshot.point(params.range.end), HINT_LINES
        )
        chat = await self._chat_hints(snapshot, start, end)
        if chat is not None:
            return RawJSON(json.dumps(chat, ensure_ascii=False))
        parts: list[str] = []
        # A block of lines at a time, giving the event loop back in between: other
        # requests go on, and a $/cancelRequest (Neovim cancels hints on every edit)
        # stops the work.
        for first in range(start.line, end.line + 1, _BLOCK_LINES):
            last = min(first + _BLOCK_LINES - 1, end.line)
            block_start = start if first == start.line else Point(first, 0)
            block_end = end if last == end.line else Point(last, len(document.lines[last]))
            parts += hints_json(document, block_start, block_end, settings, snapshot.encoding, self.cache)
            if last < end.line:
                await asyncio.sleep(0)
        return RawJSON(f"[{','.join(parts)}]")

    async def _chat_hints(self, snapshot: DocumentSnapshot, start: Point, end: Point) -> list[dict[str, Any]] | None:
        """On a chat document, the template's text where it inserts it between
        ``start`` and ``end``; None: the plain road."""
        units = await self.chats.units(snapshot, range(start.line, end.line + 1))
        if units is None:
            return None
        show = snapshot.document.tokenizer.tokenizer.readable
        hints = []
        for unit in units:
            for run in unit.template_runs(start.line, end.line):
                if not start <= run.at <= end:
                    continue
                label, tooltip = template_hint(unit, run, show, self.session.messages)
                hints.append(
                    {
                        "position": snapshot.position_json(*run.at),
                        "label": label,
                        "paddingLeft": False,
                        "paddingRight": False,
                        "tooltip": {"kind": "markdown", "value": tooltip},
                    }
                )
        return hints

    @on_message(types.INLAY_HINT_RESOLVE)
    def resolve(self, hint: types.InlayHint) -> types.InlayHint:
        data: Any = hint.data
        if not (isinstance(data, (list, tuple)) and len(data) == 4):
            return hint
        uri, version, line, column = data
        snapshot = self.session.find_snapshot(uri) if isinstance(uri, str) else None
        document = None if snapshot is None else snapshot.document
        if (
            document is None
            or document.version != version
            or not isinstance(line, int)
            or not isinstance(column, int)
            or not 0 <= line < len(document.lines)
        ):
            # A stale or foreign hint comes back as it was.
            return hint
        found = document.span_at(Point(line, column))
        if found is None:
            return hint
        span = found[1]
        tooltip = hint_tooltip(document.tokenizer.tokenizer.readable(span.piece), span.id, self.session.messages)
        hint.tooltip = types.MarkupContent(kind=types.MarkupKind.Markdown, value=tooltip)
        return hint
