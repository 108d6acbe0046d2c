"""The pygls edge: the protocol subclass, snapshots at arrival, errors, the stdio transport.

Only this package (with :mod:`glassllm_server.server` and ``features/``) imports pygls.
"""

from glassllm_server.protocol.arrival import documents_at_arrival
from glassllm_server.protocol.errors import RequestFailed
from glassllm_server.protocol.glass_protocol import GlassProtocol, RawJSON

__all__ = ["GlassProtocol", "RawJSON", "RequestFailed", "documents_at_arrival"]
