"""The server tests' fixtures: real clients over stdio (helpers in
:mod:`tests.server.session`, documents and the position oracle in :mod:`tests.server.oracle`).

- ``client``: a :class:`~tests.server.session.GlassClient` talking to
  ``python -m glassllm_server`` over stdio, initialized with the capabilities of each
  preset in :data:`~tests.server.session.PRESETS` (so each test runs under UTF-8, UTF-16
  and UTF-32) and English locale;
- ``client_pt``: the same, with the client locale ``pt-BR``.

Both have module scope; mark the test module with ``pytestmark = LOOP``.
"""

from __future__ import annotations

from tests.server.session import session_fixture

client = session_fixture()
client_pt = session_fixture(locale="pt-BR")
