"""Document sync: ``didOpen``, incremental ``didChange`` and ``didClose``, handed to the
server's open documents (:mod:`glassllm_server.workspace`)."""

from __future__ import annotations

from lsprotocol import types

from glassllm_server.feature import Feature, on_message

__all__ = ["DocumentSync"]


class DocumentSync(Feature):
    @on_message(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        self.session.open_documents.open(item.uri, item.text, item.version, self.tokenizers.in_use)

    @on_message(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        document = params.text_document
        self.session.open_documents.apply_changes(
            document.uri, document.version, params.content_changes, self.session.encoding
        )

    @on_message(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self.session.open_documents.close(params.text_document.uri)
