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

import pytest
import pytest_lsp

from tests.server.session import PRESETS, GlassClient, server_config, start_session


@pytest_lsp.fixture(config=server_config(), params=PRESETS, scope="module")
async def client(request: pytest.FixtureRequest, lsp_client: GlassClient):
    await start_session(lsp_client, request.param)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=server_config(), params=PRESETS, scope="module")
async def client_pt(request: pytest.FixtureRequest, lsp_client: GlassClient):
    await start_session(lsp_client, request.param, locale="pt-BR")
    yield
    await lsp_client.shutdown_session()
