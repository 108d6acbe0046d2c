"""The server's features, one module each; every module has ``register(server)``.

To add a feature, write its module and add it to :data:`FEATURES`.
"""

from __future__ import annotations

from glassllm_server.features import (
    compare,
    configuration,
    diagnostics,
    documents,
    explain,
    highlight,
    hover,
    inlay_hints,
    semantic_tokens,
    stats,
    train,
)
from glassllm_server.server import GlassServer

__all__ = ["FEATURES", "create_server"]

FEATURES = [
    documents,
    configuration,
    hover,
    inlay_hints,
    stats,
    semantic_tokens,
    diagnostics,
    highlight,
    explain,
    compare,
    train,
]


def create_server() -> GlassServer:
    """A server with every feature registered."""
    server = GlassServer()
    for feature in FEATURES:
        feature.register(server)
    return server
