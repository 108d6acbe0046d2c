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
  receive a :class:`DocumentSnapshot` (:mod:`.snapshot`);
- ``render/`` — the text a person reads (hover, code lens, hint labels, diagnostics,
  the explanation and comparison pages), in the user's language (:mod:`.messages`).

The rest never imports pygls: :mod:`positions` (points ⇄ LSP positions), :mod:`document`
(a document's tokens line by line), :mod:`settings`, :mod:`hints`, :mod:`bands`,
:mod:`unknown`, :mod:`explanation`, :mod:`compare`, :mod:`training`, :mod:`page_files`.
"""

from glassllm import __version__

__all__ = ["__version__"]
