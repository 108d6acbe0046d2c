"""The pygls edge: the protocol subclass (:mod:`.glass_protocol`), snapshots at arrival
(:mod:`.arrival`), errors (:mod:`.errors`), message framing (:mod:`.framing`) and the
stdio and TCP transports (:mod:`.transport`).

Only this package, :mod:`glassllm_server.server`, :mod:`glassllm_server.client` and
``features/`` import pygls. Import from the modules themselves: this package imports
none of them, so that a module of the core can raise :class:`.errors.RequestFailed`
without importing the protocol.
"""
