"""The glassllm language server (import package ``glassllm_server``).

Layers, from the wire inward:

- :mod:`.protocol` — the pygls edge: the protocol subclass (malformed requests, raw JSON
  answers, document lifecycle), the one private override that snapshots the open
  documents as each request arrives (:mod:`.protocol.arrival`), the stdio transport;
- :mod:`.server` — :class:`GlassServer`, the state every feature shares (settings,
  tokenizer, locale, reporting once) and :meth:`GlassServer.snapshot`;
- :mod:`.workspace` — the open documents, their versions, background tokenizing and
  the :class:`DocumentEvent` features subscribe to;
- ``features/`` — one module per LSP method or capability, one class each; handlers
  receive a :class:`DocumentSnapshot` (:mod:`.snapshot`).

Pure modules — :mod:`positions`, :mod:`document`, :mod:`settings`, :mod:`messages`,
:mod:`hints`, :mod:`bands` and the text the user reads — never import pygls.
"""

__version__ = "0.1.0"
