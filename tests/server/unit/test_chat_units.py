"""A conversation's tokens placed on its JSON document: every message token covers exactly
the source of its text (escapes whole, across a content's text parts), every template
token sits where the template inserts it, and a point finds the token holding it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from glassllm.chat import ChatFormat, conversation_from, encode_chat, load_chat_format
from glassllm_server.chat_units import ChatUnit, message_texts
from glassllm_server.json_strings import parse_json
from glassllm_server.messages import Messages
from glassllm_server.positions import Point, split_lines
from glassllm_server.render.chat import template_hint
from tests.library.formats.fixtures import model_file

# Text parts joined, as transformers' templates for multi-part content write them.
TEMPLATE = (
    "{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n"
    "{% if m.content is string %}{{ m.content }}{% else %}{% for p in m.content %}{{ p.text }}{% endfor %}{% endif %}"
    "<|eot_id|>{% endfor %}"
)
CONVERSATION = {
    "messages": [
        {"role": "system", "content": "Short answers.\nAlways."},
        {
            "role": "user",
            "content": [{"type": "text", "text": "Olá, "}, {"type": "image"}, {"type": "text", "text": "café 😀!"}],
        },
        {"role": "assistant", "content": None, "tool_calls": []},
        {"role": "user", "content": 'quote " and \\ end'},
    ]
}


@pytest.fixture(scope="module")
def chat(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChatFormat]:
    template = Path(tmp_path_factory.mktemp("template")) / "parts.jinja"
    template.write_text(TEMPLATE, encoding="utf-8")
    found = load_chat_format(model_file("llama3"), template=template)
    yield found
    found.close()


@pytest.mark.parametrize("ascii_only", [True, False])
def test_each_token_covers_exactly_its_source_and_a_point_finds_it(chat: ChatFormat, ascii_only: bool):
    document = "\n" + json.dumps(CONVERSATION, indent=2, ensure_ascii=ascii_only)
    parsed = parse_json(document)
    conversation = conversation_from(parsed.value, "doc")
    encoding = encode_chat(chat, conversation)
    unit = ChatUnit(encoding, message_texts(parsed, conversation), [m["role"] for m in conversation.messages])
    lines = split_lines(document)
    assert unit.count == encoding.count and unit.template_count == encoding.template_count > 0
    for number, token in enumerate(encoding.tokens):
        start, end = unit.token_range(number)
        if token.source is None:
            assert start == end
            continue
        message, first, last = token.source
        text = conversation.content(message)[first:last]
        if start.line == end.line:  # within one JSON string: its source decodes to the text
            assert json.loads(f'"{lines[start.line][start.column : end.column]}"') == text
            for column in range(start.column, end.column):
                assert unit.token_at(Point(start.line, column)) == number
        else:  # across two text parts of one message
            assert text.startswith(json.loads(f'"{lines[start.line][start.column :].split(chr(34))[0]}"'))
    # Each run of template tokens sits before the next message's text, the last after
    # the last message's.
    runs = unit.template_runs(0, len(lines))
    assert [unit.template_text(run) for run in runs][:2] == [
        "<|start_header_id|>system<|end_header_id|>\n\n",
        "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n",
    ]
    assert runs[1].at == unit.text_point(1, 0)
    assert runs[-1].at == unit.text_point(3, len(conversation.content(3)), end=True)
    # Off the messages' text, nothing.
    assert unit.token_at(Point(1, 0)) is None


def test_a_unit_moved_to_a_line_places_everything_there(chat: ChatFormat):
    line = json.dumps(CONVERSATION)
    parsed = parse_json(line)
    conversation = conversation_from(parsed.value, "doc")
    unit = ChatUnit(encode_chat(chat, conversation), message_texts(parsed, conversation), [])
    moved = unit.moved(41)
    assert all(
        moved.token_range(number)[0] == Point(41, unit.token_range(number)[0].column) for number in range(unit.count)
    )
    column = line.index('\\"') + 1  # inside the escaped quote
    assert moved.token_at(Point(41, column)) == unit.token_at(Point(0, column)) is not None


def test_a_point_in_either_text_part_finds_the_token_over_both(chat: ChatFormat):
    parts = [{"type": "text", "text": "Hel"}, {"type": "text", "text": "lo world"}]
    document = json.dumps({"messages": [{"role": "user", "content": parts}]})
    parsed = parse_json(document)
    conversation = conversation_from(parsed.value, "doc")
    encoding = encode_chat(chat, conversation)
    unit = ChatUnit(encoding, message_texts(parsed, conversation), ["user"])
    [hello] = [number for number, token in enumerate(encoding.tokens) if token.piece == "Hello"]
    for character in ("Hel", "lo world"):  # each part's first character
        assert unit.token_at(Point(0, document.index(character))) == hello
    # Its range: from the first part's start to the end of "lo" in the second.
    assert unit.token_range(hello) == (Point(0, document.index("Hel")), Point(0, document.index("lo world") + 2))


def test_a_template_hint_names_the_parts_that_wrote_its_tokens(chat: ChatFormat):
    """The inlay hint's tooltip (render/chat.py): the template's tokens, then each part
    of the template that wrote them, with its line; Mistral's by what inserted them."""
    document = json.dumps(CONVERSATION)
    parsed = parse_json(document)
    conversation = conversation_from(parsed.value, "doc")
    unit = ChatUnit(encode_chat(chat, conversation), message_texts(parsed, conversation), ["system", "user"] * 2)
    first = unit.template_runs(0, 0)[0]
    _, tooltip = template_hint(unit, first, str, Messages("en"))
    # <|start_header_id|>, from the tag's text, then "system" from {{ m.role }}, then the rest.
    assert tooltip.endswith(
        "\n\n- line 1 of the template, `<|start_header_id|>`: 1 token\n"
        "- line 1 of the template, `{{ m.role }}`: 1 token\n"
        "- line 1 of the template, `<|end_header_id|>\\n`: 2 tokens"
    ), tooltip
    mistral = load_chat_format(model_file("mistral-v7"))
    try:
        value = [{"role": "user", "content": "Olá"}]
        texts = message_texts(parse_json(json.dumps(value)), conversation_from(value, "doc"))
        unit = ChatUnit(encode_chat(mistral, conversation_from(value, "doc")), texts, ["user"])
    finally:
        mistral.close()
    _, tooltip = template_hint(unit, unit.template_runs(0, 0)[0], str, Messages("pt"))
    assert tooltip.endswith("- inserido pelo formato, `<s> (BOS)`: 1 token\n- inserido pelo formato, `[INST]`: 1 token")
