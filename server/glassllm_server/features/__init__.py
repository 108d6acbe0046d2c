"""The server's features: one module per LSP method or capability, one class each.

Where to look: ``document_sync`` (didOpen/didChange/didClose), ``configuration``
(initialize, initialized, didChangeConfiguration), ``hover``, ``inlay_hints`` (and
resolve), ``code_lens``, ``code_actions``, ``semantic_tokens`` (full, delta, range),
``diagnostics`` (pull and push), ``highlight``, and the glassllm requests and commands:
``stats`` (``glassllm/stats``, ``glassllm.showStats``), ``explain``
(``glassllm.explainMerges``), ``compare`` (``glassllm.compareTokenizers``), ``browser``
(``glassllm.openInBrowser``), ``train`` (``glassllm.trainTokenizer``), ``token_map``
(``glassllm.tokenMap``).
:mod:`glassllm_server.feature` says what a feature is; to add one, write its class and
add it to :data:`FEATURES`. A feature never imports another: what several of them build
lives in the core (``compare_counts``, ``explanation``, ``pages``) or in ``render/``, and
the command names in :mod:`glassllm_server.commands`.
"""

from __future__ import annotations

from glassllm_server.feature import Feature
from glassllm_server.features.browser import OpenInBrowser
from glassllm_server.features.code_actions import CodeActions
from glassllm_server.features.code_lens import TokenCountLens
from glassllm_server.features.compare import CompareTokenizers
from glassllm_server.features.configuration import Configuration
from glassllm_server.features.diagnostics import Diagnostics
from glassllm_server.features.document_sync import DocumentSync
from glassllm_server.features.explain import ExplainMerges
from glassllm_server.features.highlight import Highlight
from glassllm_server.features.hover import Hover
from glassllm_server.features.inlay_hints import InlayHints
from glassllm_server.features.semantic_tokens import SemanticTokens
from glassllm_server.features.stats import TokenCount
from glassllm_server.features.token_map import TokenMap
from glassllm_server.features.train import TrainTokenizer
from glassllm_server.server import GlassServer

__all__ = ["FEATURES", "create_server"]

FEATURES: list[type[Feature]] = [
    DocumentSync,
    Configuration,
    Hover,
    InlayHints,
    TokenCount,
    TokenCountLens,
    SemanticTokens,
    Diagnostics,
    Highlight,
    ExplainMerges,
    CodeActions,
    CompareTokenizers,
    OpenInBrowser,
    TrainTokenizer,
    TokenMap,
]


def create_server() -> GlassServer:
    """A server with every feature registered."""
    server = GlassServer()
    for feature in FEATURES:
        feature(server).register()
    return server
