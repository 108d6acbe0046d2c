"""The glassllm language server (import package ``glassllm_server``).

Rooms, from the wire inward:

- :mod:`.protocol` — the pygls edge: the protocol subclass (malformed requests, raw JSON
  answers, document lifecycle), the one private override that snapshots the open
  documents as each request arrives (:mod:`.protocol.arrival`), the transports;
- :mod:`.server` — :class:`GlassServer`, pygls' server object and its main loop, holding
  the three parts every feature is given: :mod:`.session` (the one mutable state:
  documents, settings, what the client said), :mod:`.tokenizers` (loading them) and
  :mod:`.client` (talking back);
- :mod:`.workspace` — the open documents, their versions, background tokenizing, the
  snapshots requests read and the :class:`DocumentEvent` features subscribe to;
- ``features/`` — one module per LSP method or capability, one class each (:mod:`.feature`
  says what a feature is); handlers receive a read-only :class:`DocumentSnapshot`
  (:mod:`.snapshot`); a feature never imports another, and the command names are
  :mod:`.commands`';
- ``render/`` — the text a person reads (hover, code lens, hint labels, diagnostics,
  the explanation and comparison pages), in the user's language (:mod:`.messages`).

The rest never imports pygls: :mod:`positions` (points ⇄ LSP positions), :mod:`document`
(a document and its read-only view), :mod:`line_tokenizer` (the one road every
tokenizer takes through the server, and the shared caches), :mod:`line_tokens` (a
line's tokens), :mod:`blocks`, :mod:`settings`, :mod:`hints`,
:mod:`bands`, :mod:`unknown`, :mod:`explanation`, :mod:`compare`, :mod:`compare_counts`,
:mod:`training`, :mod:`page_files`, :mod:`confinement`.
"""

from glassllm import __version__

__all__ = ["__version__"]
