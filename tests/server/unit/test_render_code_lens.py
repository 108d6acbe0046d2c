"""The code lens title in both languages."""

from __future__ import annotations

from glassllm_server.document import Stats
from glassllm_server.messages import Messages
from glassllm_server.render.code_lens import lens_title


def test_lens_title_in_both_languages():
    stats = Stats(tokens=1234, chunks=900, characters=4813, unknown=0)
    assert lens_title(stats, Messages("en")) == "1,234 tokens · 3.9 chars/token"
    assert lens_title(stats, Messages("pt")) == "1.234 tokens · 3,9 caracteres/token"
    assert lens_title(Stats(1, 1, 5, 0), Messages("en")) == "1 token · 5.0 chars/token"
    assert lens_title(Stats(0, 0, 0, 0), Messages("pt")) == "0 tokens"
