"""glassllm.chat.mistral against mistral-common's ``encode_chat_completion``, the oracle:
exact IDs for Mistral v1, v2 and v7 (SentencePiece ``.model``) and Tekken (v3), on
conversations written here and hypothesis ones, with tools, tool calls and tool results
from v2 on (and the v3 ``.model`` too); each message's content text rebuilt from its
tokens' offsets; and what glassllm refuses (v1's tools, what mistral-common refuses)
named by line and field.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from itertools import groupby
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glassllm.chat import ChatEncoding, ChatFormat, conversation_from, encode_chat, load_chat_format
from glassllm.chat.mistral import AFTER_SYSTEM, ARGUMENTS, BOS, CALL_ID, CALLS_JSON, EOS, RESULT, RESULT_JSON, TOOLS
from tests.library.formats.fixtures import MODELS, model_file

FILES = {
    "v1": "mistral/tokenizer.model.v1",
    "v2": "mistral/mistral_instruct_tokenizer_240216.model.v2",
    "v7": "mistral/mistral_instruct_tokenizer_241114.model.v7",
    "tekken": "mistral/tekken_240911.json",
}
# Tools from v2 on: these, and the v3 .model beside Tekken's v3.
TOOL_FILES = {name: FILES[name] for name in ("v2", "v7", "tekken")} | {
    "v3": "mistral/mistral_instruct_tokenizer_240323.model.v3"
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
    for name in FILES | TOOL_FILES:
        path = MODELS / (FILES | TOOL_FILES)[name]
        if not path.is_file():
            model_file("mistral-v1")  # skips, naming the script that fetches them
        made[name] = (load_chat_format(path), tokenizers.MistralTokenizer.from_file(str(path)))
    yield made
    for chat, _ in made.values():
        chat.close()


def _oracle(mistral: Any, messages: list[dict[str, Any]], tools: list[Any] | None = None) -> list[int]:
    request = pytest.importorskip("mistral_common.protocol.instruct.request")
    return mistral.encode_chat_completion(request.ChatCompletionRequest(messages=messages, tools=tools)).tokens


def _check_sources(encoding: ChatEncoding, messages: list[dict[str, Any]], version: str) -> None:
    """Each message-sourced token holds its stretch of the content; every message's text
    is covered whole — a tool result whole or not at all (where the format rewrote it)."""
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
        expected = [set(range(len(text)))] + ([set()] if message["role"] == "tool" else [])
        assert covered.get(index, set()) in expected, (index, text)


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


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Météo actuelle 🌦",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
# No description (mistral-common writes it empty) and OpenAI's "strict" (left out).
CLOCK = {"type": "function", "function": {"name": "now", "parameters": {}, "strict": True}}


def _call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _result(call_id: str, content: Any, **more: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content, **more}


# (conversation, the versions that refuse it): each equal to mistral-common elsewhere.
TOOL_CONVERSATIONS: list[tuple[dict[str, Any], tuple[str, ...]]] = [
    (
        {
            "tools": [WEATHER, CLOCK],
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather in Paris?"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [_call("abc123XYZ", "get_weather", '{"city": "Paris"}')],
                },
                _result("abc123XYZ", '{"temp": 21, "sky": "ensoleillé"}', name="get_weather"),
                {"role": "assistant", "content": "21 °C, sunny.  "},
                {"role": "user", "content": "Thanks!"},
            ],
        },
        (),
    ),
    (  # two calls, then their results: arguments as an object and as non-canonical JSON
        {
            "tools": [WEATHER, CLOCK],
            "messages": [
                {"role": "user", "content": "Paris and Zürich, and the time?"},
                {
                    "role": "assistant",
                    "tool_calls": [
                        _call("aaaaaaaa1", "get_weather", {"city": "Zürich"}),
                        _call("bbbbbbbb2", "get_weather", '{"city":"Paris"}'),
                        _call("ccccccccc", "now", ""),
                    ],
                },
                _result("aaaaaaaa1", "sunny"),
                _result("bbbbbbbb2", 'rain, "heavy"\nwind'),
                _result("ccccccccc", [{"type": "text", "text": "12:00"}, {"type": "text", "text": "UTC"}]),
            ],
        },
        ("v2",),  # three results for one turn after the last user message
    ),
    (  # calls and results before the last user message (v2 leaves them out), and after it
        {
            "tools": [CLOCK],
            "messages": [
                {"role": "user", "content": "Time?"},
                {"role": "assistant", "content": "", "tool_calls": [_call("ddddddddd", "now", None)]},
                _result("ddddddddd", ""),
                {"role": "assistant", "content": "Noon."},
                {"role": "user", "content": "Again?"},
                {"role": "assistant", "tool_calls": [_call("eeeeeeeee", "now", "not json")]},
                _result("eeeeeeeee", "[1, 2.5, null]"),
            ],
        },
        (),
    ),
    (  # text and calls in one turn (v7 only), consecutive assistant messages gathered
        {
            "messages": [
                {"role": "user", "content": "Go"},
                {"role": "assistant", "content": "Calling. "},
                {"role": "assistant", "content": None, "tool_calls": [_call("fffffffff", "now", "{}")]},
                _result("fffffffff", "done"),
            ],
        },
        ("v2", "v3", "tekken"),
    ),
]


def _tool_encoding(formats: dict[str, tuple[ChatFormat, Any]], name: str, value: dict[str, Any]) -> ChatEncoding:
    return encode_chat(formats[name][0], conversation_from(value, "test"))


@pytest.mark.parametrize("number", range(len(TOOL_CONVERSATIONS)))
@pytest.mark.parametrize("name", TOOL_FILES)
def test_tool_conversations_equal_mistral_common(formats, name, number):
    value, refused = TOOL_CONVERSATIONS[number]
    if name in refused:
        with pytest.raises(ValueError, match=r"^test: messages\[\d+\]: "):
            _tool_encoding(formats, name, value)
        with pytest.raises(Exception):  # noqa: B017 (mistral-common's exceptions vary by case)
            _oracle(formats[name][1], value["messages"], value.get("tools"))
        return
    encoding = _tool_encoding(formats, name, value)
    assert encoding.ids == _oracle(formats[name][1], value["messages"], value.get("tools"))
    _check_sources(encoding, value["messages"], name)
    if name == "v7":  # v7 writes every tool result as given
        results = {token.source[0] for token in encoding.tokens if token.source is not None}
        tools = {index for index, message in enumerate(value["messages"]) if message["role"] == "tool"}
        assert {index for index in tools if conversation_from(value, "t").content(index)} <= results


def _check_names(encoding: ChatEncoding, written: str, inner: list[str], names: tuple[str, str]) -> None:
    """``written`` is in the prompt, and each of its template tokens is named ``names[0]``
    where its first character is in one of the ``inner`` stretches (in order), else
    ``names[1]`` (a token across a boundary, `` {"`` say, is named by its first character)."""
    start = encoding.rendered.index(written)
    spans, at = [], 0
    for text in inner:
        at = written.index(text, at)
        spans.append((start + at, start + at + len(text)))
        at += len(text)
    seen = 0
    for token, part in zip(encoding.tokens, encoding.parts, strict=True):
        if start <= token.start < start + len(written) and part is not None:
            inside = any(low <= token.start < high for low, high in spans)
            assert part.text == names[0 if inside else 1], (token, part)
            seen += 1
    assert seen


def test_each_tool_token_is_named_by_what_inserted_it(formats):
    encoding = _tool_encoding(formats, "tekken", TOOL_CONVERSATIONS[1][0])
    calls = (
        '[{"name": "get_weather", "arguments": {"city": "Zürich"}, "id": "aaaaaaaa1"}, '
        '{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "bbbbbbbb2"}, '
        '{"name": "now", "arguments": {}, "id": "ccccccccc"}]'
    )
    assert f"[/INST][TOOL_CALLS]{calls}</s>[TOOL_RESULTS]" in encoding.rendered
    _check_names(encoding, calls, ['{"city": "Zürich"}', '{"city": "Paris"}', "{}"], (ARGUMENTS, CALLS_JSON))
    # "sunny" is the message's own text between the format's quotes; text needing escapes
    # and text parts joined are rewritten as JSON strings.
    sunny = '{"content": "sunny", "call_id": "aaaaaaaa1"}'
    content = conversation_from(TOOL_CONVERSATIONS[1][0], "t").content(2)
    assert (
        "".join(content[t.source[1] : t.source[2]] for t in encoding.tokens if t.source and t.source[0] == 2) == content
    )
    _check_names(encoding, sunny, [], (RESULT, RESULT_JSON))
    rain = '{"content": "rain, \\"heavy\\"\\nwind", "call_id": "bbbbbbbb2"}'
    _check_names(encoding, rain, ['"rain, \\"heavy\\"\\nwind"'], (RESULT, RESULT_JSON))
    _check_names(encoding, '{"content": "12:00\\n\\nUTC", "call_id"', ['"12:00\\n\\nUTC"'], (RESULT, RESULT_JSON))
    names = [name for name, _ in groupby(part.text for part in encoding.parts if part is not None)]
    assert names[:4] == [BOS, "[AVAILABLE_TOOLS]", TOOLS, "[/AVAILABLE_TOOLS]"] and names[-1] == "[/TOOL_RESULTS]"
    v7 = _tool_encoding(formats, "v7", TOOL_CONVERSATIONS[0][0])
    tools = json.dumps(
        [WEATHER, {"type": "function", "function": {"name": "now", "description": "", "parameters": {}}}],
        ensure_ascii=False,
    )
    assert f"[AVAILABLE_TOOLS]{tools}[/AVAILABLE_TOOLS][INST]Thanks![/INST]" in v7.rendered
    _check_names(v7, tools, [], (TOOLS, TOOLS))
    assert "[TOOL_RESULTS]abc123XYZ[TOOL_CONTENT]" in v7.rendered
    _check_names(v7, "[TOOL_RESULTS]abc123XYZ", ["abc123XYZ"], (CALL_ID, "[TOOL_RESULTS]"))


def test_a_tool_result_is_the_message_s_text_where_the_format_writes_it_verbatim(formats):
    value = TOOL_CONVERSATIONS[0][0]
    for name in TOOL_FILES:
        encoding = _tool_encoding(formats, name, value)
        content = value["messages"][3]["content"]
        placed = "".join(content[t.source[1] : t.source[2]] for t in encoding.tokens if t.source and t.source[0] == 3)
        # JSON as json.dumps writes it (v2 drops the result: it comes before the last user message)
        assert placed == ("" if name == "v2" else content), name


def test_v1_has_no_tools_and_says_so(formats):
    chat, _ = formats["v1"]
    cases = [
        ({"messages": [{"role": "user", "content": "hi"}], "tools": [CLOCK]}, "tools"),
        ({"messages": [{"role": "user", "content": "hi"}, _result("abc123XYZ", "{}")]}, r"messages\[1\]"),
        (TOOL_CONVERSATIONS[0][0]["messages"], r"messages\[2\]"),
    ]
    for value, field in cases:
        with pytest.raises(ValueError, match=rf"^data.jsonl:3: {field}: Mistral's v1 format has no tools: "):
            encode_chat(chat, conversation_from(value, "data.jsonl:3"))
    # An empty list of tools is no tool: v1 encodes the conversation.
    assert encode_chat(chat, conversation_from({"messages": [{"role": "user", "content": "hi"}], "tools": []}, "t")).ids


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda v: v["messages"][2]["tool_calls"][0]["function"].update(arguments=3),
            r"messages\[2\]\.tool_calls\[0\]\.function\.arguments must be a string or an object, found a number",
        ),
        (
            lambda v: v["tools"][0]["function"].pop("parameters"),
            r"tools\[0\]\.function\.parameters must be an object, found null",
        ),
        (lambda v: v["messages"][3].pop("tool_call_id"), r"messages\[3\]\.tool_call_id must be a string, found null"),
        (
            lambda v: v["messages"][1].update(role="developer"),
            r"messages\[1\]\.role: Mistral's formats know the roles .* not 'developer'",
        ),
        (
            lambda v: v["messages"][4].update(content=None),
            r"messages\[4\]\.content: Mistral's formats need an assistant message",
        ),
    ],
)
def test_what_mistral_cannot_encode_is_one_line_naming_the_field(formats, change, message):
    value = copy.deepcopy(TOOL_CONVERSATIONS[0][0])
    change(value)
    with pytest.raises(ValueError, match=rf"^data.jsonl:3: {message}"):
        encode_chat(formats["v7"][0], conversation_from(value, "data.jsonl:3"))


def test_refusals_name_what_mistral_common_refuses(formats):
    with pytest.raises(ValueError, match=r"^test: messages\[3\]: Mistral's v2 format holds one tool result per"):
        _tool_encoding(formats, "v2", TOOL_CONVERSATIONS[1][0])
    with pytest.raises(ValueError, match=r"^t: messages\[1\]: before v7, Mistral's formats cannot hold"):
        encode_chat(formats["v3"][0], conversation_from(TOOL_CONVERSATIONS[3][0], "t"))


def test_hypothesis_tool_conversations_equal_mistral_common(formats):
    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.one_of(TEXT, st.dictionaries(TEXT, TEXT, max_size=2)), TEXT, TEXT, TEXT)
    def check(arguments, result, question, last):
        messages = [
            {"role": "user", "content": question},
            {"role": "assistant", "tool_calls": [_call("call00001", "get_weather", arguments)]},
            _result("call00001", result),
            {"role": "user", "content": last},
        ]
        for name in TOOL_FILES:
            chat, mistral = formats[name]
            encoding = encode_chat(chat, conversation_from({"messages": messages, "tools": [WEATHER]}, "test"))
            assert encoding.ids == _oracle(mistral, messages, [WEATHER]), name
            _check_sources(encoding, messages, name)

    check()
