"""The unit tests' shared fixture: the Portuguese tokenizer as the server holds it."""

import pytest

from glassllm import packaged
from glassllm_server.line_tokenizer import LineTokenizer


@pytest.fixture(scope="module")
def tokenizer() -> LineTokenizer:
    return LineTokenizer(packaged("pt"), "pt")
