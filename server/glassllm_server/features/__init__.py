"""The server's features: one module per LSP method or capability, one class each.

Where to look: ``document_sync`` (didOpen/didChange/didClose), ``configuration``
(initialize, settings), ``hover``, ``inlay_hints`` (and resolve), ``stats`` (the
``glassllm/stats`` request, code lens, ``glassllm.showStats``), ``semantic_tokens``,
``diagnostics`` (pull and push), ``highlight``, ``explain`` (``glassllm.explainMerges``
and the code action), ``compare`` (``glassllm.compareTokenizers``), ``train``
(``glassllm.trainTokenizer``). :mod:`.feature` says what a feature is; to add one,
write its class and add it to :data:`FEATURES`.
"""

from __future__ import annotations

from glassllm_server.features.compare import CompareTokenizers
from glassllm_server.features.configuration import Configuration
from glassllm_server.features.diagnostics import Diagnostics
from glassllm_server.features.document_sync import DocumentSync
from glassllm_server.features.explain import ExplainMerges
from glassllm_server.features.feature import Feature
from glassllm_server.features.highlight import Highlight
from glassllm_server.features.hover import Hover
from glassllm_server.features.inlay_hints import InlayHints
from glassllm_server.features.semantic_tokens import SemanticTokens
from glassllm_server.features.stats import TokenCount
from glassllm_server.features.train import TrainTokenizer
from glassllm_server.server import GlassServer

__all__ = ["FEATURES", "create_server"]

FEATURES: list[type[Feature]] = [
    DocumentSync,
    Configuration,
    Hover,
    InlayHints,
    TokenCount,
    SemanticTokens,
    Diagnostics,
    Highlight,
    ExplainMerges,
    CompareTokenizers,
    TrainTokenizer,
]


def create_server() -> GlassServer:
    """A server with every feature registered."""
    server = GlassServer()
    for feature in FEATURES:
        feature(server).register()
    return server
