"""The unit tests' shared fixture: the Portuguese tokenizer as the server holds it."""

import pytest

from glassllm import packaged
from glassllm_server.line_tokenizer import OwnLineTokenizer


@pytest.fixture(scope="module")
def tokenizer() -> OwnLineTokenizer:
    return OwnLineTokenizer(packaged("pt"), "pt")
