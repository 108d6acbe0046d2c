"""Document sync: open, incremental change and close, into :class:`GlassServer.live_documents`."""

from __future__ import annotations

from lsprotocol import types

from glassllm_server.server import GlassServer

__all__ = ["register"]


def register(server: GlassServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: GlassServer, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        ls.open_document(item.uri, item.text, item.version)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: GlassServer, params: types.DidChangeTextDocumentParams) -> None:
        document = ls.live_documents.get(params.text_document.uri)
        if document is None:
            # A change to a document that was never opened: nothing to apply it to.
            return
        for change in params.content_changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                start = ls.point(document, change.range.start)
                end = ls.point(document, change.range.end)
                document.apply_change(start, end, change.text)
                document.focus_line = start.line
            else:
                document.replace_text(change.text)
        document.version = params.text_document.version
        ls.schedule_tokenizing(document)
        ls.document_changed(document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: GlassServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.close_document(params.text_document.uri)
