"""Token count: the ``glassllm/stats`` request, the first-line code lens and the
``glassllm.showStats`` command the lens runs."""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from glassllm_server.describe import lens_title
from glassllm_server.document import Document, Stats
from glassllm_server.features.compare import compare_stats, compared_summary
from glassllm_server.server import GlassServer

__all__ = ["SHOW_STATS_COMMAND", "STATS_REQUEST", "register"]

STATS_REQUEST = "glassllm/stats"
SHOW_STATS_COMMAND = "glassllm.showStats"


def _field(params: Any, name: str) -> Any:
    if isinstance(params, dict):
        return params.get(name)
    return getattr(params, name, None)


def _position(value: Any) -> types.Position | None:
    line, character = _field(value, "line"), _field(value, "character")
    if isinstance(line, int) and isinstance(character, int) and line >= 0 and character >= 0:
        return types.Position(line=line, character=character)
    return None


def register(server: GlassServer) -> None:
    async def answer(ls: GlassServer, document: Document, lsp_range: types.Range | None) -> dict[str, Any]:
        span = None
        if lsp_range is None:
            await ls.tokenized(document)
            stats = document.stats()
        else:
            start, end = ls.point(document, lsp_range.start), ls.point(document, lsp_range.end)
            span = (start, end) if start <= end else (end, start)
            stats = document.stats(start, end)
        compare = await compare_stats(ls, document, span, stats.chunks)
        return {**stats._asdict(), "tokenizer": document.tokenizer.name, "compare": compare}

    @server.feature(STATS_REQUEST)
    async def stats_request(ls: GlassServer, params: Any) -> dict[str, Any]:
        expected = '{"textDocument": {"uri": string}, "range"?: Range}'
        uri = _field(_field(params, "textDocument"), "uri")
        if not isinstance(uri, str):
            raise JsonRpcInvalidParams(ls.messages("error.invalid_params", method=STATS_REQUEST, detail=expected))
        raw_range = _field(params, "range")
        lsp_range = None
        if raw_range is not None:
            start, end = _position(_field(raw_range, "start")), _position(_field(raw_range, "end"))
            if start is None or end is None:
                raise JsonRpcInvalidParams(ls.messages("error.invalid_params", method=STATS_REQUEST, detail=expected))
            lsp_range = types.Range(start=start, end=end)
        return await answer(ls, ls.get_document(uri), lsp_range)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    async def code_lens(ls: GlassServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        document = ls.get_document(params.text_document.uri)
        await ls.tokenized(document)
        title = lens_title(document.stats(), ls.messages)
        origin = types.Position(line=0, character=0)
        return [
            types.CodeLens(
                range=types.Range(start=origin, end=origin),
                command=types.Command(title=title, command=SHOW_STATS_COMMAND, arguments=[document.uri]),
            )
        ]

    @server.command(SHOW_STATS_COMMAND)
    async def show_stats(ls: GlassServer, uri: str) -> dict[str, Any]:
        document = ls.get_document(uri)
        result = await answer(ls, document, None)
        messages = ls.messages
        counts = Stats(*(result[name] for name in Stats._fields))
        ls.window_show_message(
            types.ShowMessageParams(
                type=types.MessageType.Info,
                message=messages(
                    "stats.message",
                    tokens=messages.integer(counts.tokens),
                    chunks=messages.integer(counts.chunks),
                    characters=messages.integer(counts.characters),
                    unknown=messages.integer(counts.unknown),
                    tokenizer=ls.tokenizer_label(),
                )
                + compared_summary(ls, result["compare"]),
            )
        )
        return result
