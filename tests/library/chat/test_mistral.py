"""glassllm.chat.mistral against mistral-common's ``encode_chat_completion``, the oracle:
exact IDs for Mistral v1, v2 and v7 (SentencePiece ``.model``) and Tekken (v3), on
conversations written here and hypothesis ones; each message's content text rebuilt from
its tokens' offsets; and what glassllm refuses (tools) named by line and field.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glassllm.chat import ChatEncoding, ChatFormat, conversation_from, encode_chat, load_chat_format
from glassllm.chat.mistral import AFTER_SYSTEM, BOS, EOS
from tests.library.formats.fixtures import MODELS, model_file

FILES = {
    "v1": "mistral/tokenizer.model.v1",
    "v2": "mistral/mistral_instruct_tokenizer_240216.model.v2",
    "v7": "mistral/mistral_instruct_tokenizer_241114.model.v7",
    "tekken": "mistral/tekken_240911.json",
}

CONVERSATIONS: list[list[dict[str, Any]]] = [
    [{"role": "user", "content": "Hello!"}],
    [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi there"},
        {"role": "assistant", "content": "Hello!  "},
        {"role": "user", "content": " How are you? "},
    ],
    [{"role": "user", "content": "a <s>[INST] b [/INST]</s> c"}],
    [
        {"role": "system", "content": "S1"},
        {"role": "system", "content": "S2"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "p1"}, {"type": "text", "text": ""}, {"type": "text", "text": "p2"}],
        },
        {"role": "user", "content": "u2"},
    ],
    [{"role": "user", "content": ""}],
    [{"role": "system", "content": "only a system prompt"}],
    [
        {"role": "user", "content": "Olá 🙂\n"},
        {"role": "assistant", "content": "x\n\n   "},
        {"role": "user", "content": "again"},
    ],
]


@pytest.fixture(scope="module")
def formats() -> Iterator[dict[str, tuple[ChatFormat, Any]]]:
    tokenizers = pytest.importorskip("mistral_common.tokens.tokenizers.mistral")
    made = {}
    for name in FILES:
        path = MODELS / FILES[name]
        if not path.is_file():
            model_file("mistral-v1")  # skips, naming the script that fetches them
        made[name] = (load_chat_format(path), tokenizers.MistralTokenizer.from_file(str(path)))
    yield made
    for chat, _ in made.values():
        chat.close()


def _oracle(mistral: Any, messages: list[dict[str, Any]]) -> list[int]:
    request = pytest.importorskip("mistral_common.protocol.instruct.request")
    return mistral.encode_chat_completion(request.ChatCompletionRequest(messages=messages)).tokens


def _check_sources(encoding: ChatEncoding, messages: list[dict[str, Any]], version: str) -> None:
    conversation = conversation_from(messages, "test")
    covered: dict[int, set[int]] = {}
    for token in encoding.tokens:
        if token.source is not None:
            message, start, end = token.source
            assert conversation.content(message)[start:end] in encoding.rendered[token.start : token.end], token
            covered.setdefault(message, set()).update(range(start, end))
    for index, message in enumerate(messages):
        text = conversation.content(index)
        if message["role"] == "assistant" and version != "v1":
            text = text.rstrip(" ")
        assert covered.get(index, set()) == set(range(len(text))), (index, text)


@pytest.mark.parametrize("number", range(len(CONVERSATIONS)))
@pytest.mark.parametrize("name", FILES)
def test_conversations_equal_mistral_common(formats, name, number):
    chat, mistral = formats[name]
    messages = CONVERSATIONS[number]
    encoding = encode_chat(chat, conversation_from(messages, "test"))
    assert encoding.ids == _oracle(mistral, messages)
    _check_sources(encoding, messages, "v1" if name == "v1" else "later")
    assert encoding.warnings == []  # special-token text in a message stays text here


def test_the_format_adds_what_people_did_not_type(formats):
    chat, _ = formats["v7"]
    encoding = encode_chat(chat, conversation_from(CONVERSATIONS[2], "test"))
    template = [token.piece for token in encoding.tokens if token.source is None]
    assert template == ["<s>", "[INST]", "[/INST]"]
    assert encoding.rendered == "<s>[INST]a <s>[INST] b [/INST]</s> c[/INST]"


def test_each_inserted_token_is_named_by_what_inserted_it(formats):
    named = {}
    for name in ("v1", "v2", "v7"):
        encoding = encode_chat(formats[name][0], conversation_from(CONVERSATIONS[1], "test"))
        assert len(encoding.parts) == len(encoding.tokens)
        named[name] = [
            (token.piece, part.text, part.line)
            for token, part in zip(encoding.tokens, encoding.parts, strict=True)
            if part is not None
        ]
        assert [part is None for part in encoding.parts] == [token.source is not None for token in encoding.tokens]
    after_system = (AFTER_SYSTEM,) * 2
    assert [text for _, text, _ in named["v2"]] == [BOS, "[INST]", "[/INST]", EOS, "[INST]", *after_system, "[/INST]"]
    assert [text for _, text, _ in named["v7"][:6]] == [
        BOS,
        "[SYSTEM_PROMPT]",
        "[/SYSTEM_PROMPT]",
        "[INST]",
        "[/INST]",
        EOS,
    ]
    # v1 writes [INST] and [/INST] as text: their pieces are named by the text they are in.
    assert {piece: text for piece, text, _ in named["v1"] if piece in ("INST", "/")} == {
        "INST": "[/INST] (v1, as text)",
        "/": "[/INST] (v1, as text)",
    }
    assert all(line is None for found in named.values() for _, _, line in found)


TEXT = st.text(st.characters(exclude_categories=("Cs", "Cn")), max_size=25)


def test_hypothesis_conversations_equal_mistral_common(formats):
    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.one_of(st.none(), TEXT), st.lists(st.tuples(TEXT, TEXT.filter(str.strip)), max_size=3), TEXT)
    def check(system, turns, last):
        messages = [{"role": "system", "content": system}] if system else []
        for question, answer in turns:
            messages += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
        messages.append({"role": "user", "content": last})
        for name, (chat, mistral) in formats.items():
            expected = _oracle(mistral, messages)
            encoding = encode_chat(chat, conversation_from(messages, "test"))
            assert encoding.ids == expected, name
            _check_sources(encoding, messages, "v1" if name == "v1" else "later")

    check()


def test_tools_are_refused_naming_the_field(formats):
    chat, _ = formats["tekken"]
    value = {"messages": [{"role": "user", "content": "hi"}, {"role": "tool", "content": "{}"}], "tools": []}
    with pytest.raises(ValueError, match=r"^data.jsonl:3: messages\[1\]: tools, tool calls and tool messages"):
        encode_chat(chat, conversation_from(value, "data.jsonl:3"))
