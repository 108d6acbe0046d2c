"""The cases every editor's end-to-end tests show in their own editor, defined once so that
each editor is tested on the same ones: a tokenizer file that loads slowly, and a chat
document with the library's own reading of it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

from glassllm.chat import ChatEncoding, ChatToken, conversation_from, encode_chat, load_chat_format
from glassllm.packaged import packaged_path
from tests.library.formats.fixtures import model_file
from tests.slow_pipe import slow_pipe

__all__ = ["CHAT", "CHAT_TEXT", "SLOW_SECONDS", "accented_token", "chat_count_pt", "chat_encoding", "slow_english"]

# A tokenizer file whose load outlasts the moment requests wait for it: a FIFO the test
# writes en.json into over SLOW_SECONDS from the moment the server starts reading it
# (tests/slow_pipe.py). The first count is Portuguese's; the server's
# glassllm/tokenizersChanged, once English is in use, has the count asked again, without
# an edit.
SLOW_SECONDS = 6.0

# A chat document: a conversation in JSON with Llama 3's tokenizer and its own chat
# template; "é" is the character each editor hovers, written as an escape.
CHAT = {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Olá, café!\nTudo bem?"}]}
CHAT_TEXT = json.dumps(CHAT, indent=1) + "\n"


@contextmanager
def slow_english(folder: Path) -> Iterator[Path]:
    """``folder/english.json``, a FIFO that gives the packaged ``en`` over SLOW_SECONDS
    once the server reads it; its writer is joined when the block ends."""
    fifo = folder / "english.json"
    writer = slow_pipe(fifo, packaged_path("en").read_bytes(), SLOW_SECONDS)
    try:
        yield fifo
    finally:
        writer.join()


@cache
def chat_encoding() -> ChatEncoding:
    """CHAT as Llama 3 receives it, by the library's ``encode_chat`` (itself checked
    against transformers in tests/library/chat): the editors' expected values."""
    chat = load_chat_format(model_file("llama3"))
    try:
        return encode_chat(chat, conversation_from(CHAT, "chat.json"))
    finally:
        chat.close()


def accented_token() -> tuple[int, ChatToken]:
    """The number and token of the prompt's token that holds the user message's "é"."""
    offset = CHAT["messages"][1]["content"].index("é")
    return next(
        (number, token)
        for number, token in enumerate(chat_encoding().tokens)
        if token.source is not None and token.source.message == 1 and token.source.start <= offset < token.source.end
    )


def chat_count_pt() -> str:
    """The prompt's count as the editors show it in Portuguese."""
    encoding = chat_encoding()
    return f"{encoding.count} tokens ({encoding.template_count} do modelo de chat)"
