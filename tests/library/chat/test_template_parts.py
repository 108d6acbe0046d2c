"""Which part of a chat template wrote each of its tokens (glassllm.chat's ``parts``).

A template written here has each line write a marker holding its own line number
(``[3]`` from line 3, as text or from a ``{{ … }}``), so the rendering itself says
which line wrote each character: the template part of every template token must be
that line, and its text the tag or the line of text that holds it. Llama 3's own
template (one tag writes the whole conversation, another the generation prompt) and a
``{% block %}`` (a generator of its own) too; the IDs stay transformers'.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from glassllm.chat import (
    ChatEncoding,
    ChatFormat,
    TemplatePart,
    conversation_from,
    encode_chat,
    encode_chats,
    load_chat_format,
)
from tests.library.chat.test_encoding import CONVERSATIONS, _oracle, _transformers
from tests.library.formats.fixtures import model_file

# Line N writes [N]: as text, from a string expression, around a role (an expression's
# text too), in a text line of its own, in a {% block %} and after {% generation %}.
MARKED_TEMPLATE = """\
{%- for message in messages %}
[2]{{ message['role'] }}[2]
{{ '[3]' }}{{ message['content'] if message['content'] is string else '' }}{{ "[3]" }}
[4] plain text
{%- if loop.last %}[5]{% endif %}
{% endfor %}
{%- if add_generation_prompt %}{{ '[7]' + '\\n' }}
[8]{% endif %}
{% block tail %}[9]
[10]{% endblock %}"""

MARKER = re.compile(r"\[(\d+)\]")


def _marked_lines(rendered: str) -> list[int]:
    """For each character of a rendering of MARKED_TEMPLATE, the line whose marker it
    follows: what that line wrote (messages' contents here hold no brackets)."""
    lines = [0] * len(rendered)
    line = 0
    starts = {found.start(): int(found.group(1)) for found in MARKER.finditer(rendered)}
    for at in range(len(rendered)):
        line = starts.get(at, line)
        lines[at] = line
    return lines


@pytest.fixture(scope="module")
def marked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ChatFormat, Any, str]]:
    path = tmp_path_factory.mktemp("parts") / "marked.jinja"
    path.write_text(MARKED_TEMPLATE, encoding="utf-8")
    tokenizer = model_file("gpt4o")
    chat = load_chat_format(tokenizer, template=path)
    yield chat, _transformers(tokenizer.parent), MARKED_TEMPLATE
    chat.close()


def _template_parts(encoding: ChatEncoding) -> list[tuple[Any, TemplatePart]]:
    assert len(encoding.parts) == len(encoding.tokens)
    found = []
    for token, part in zip(encoding.tokens, encoding.parts, strict=True):
        assert (part is None) == (token.source is not None), (token, part)
        if part is not None:
            found.append((token, part))
    return found


@pytest.mark.parametrize("prompt", [False, True])
@pytest.mark.parametrize("number", [0, 1, 2, 5, 7])
def test_each_template_token_names_the_line_that_wrote_it(marked, number, prompt):
    chat, hf, source = marked
    value = CONVERSATIONS[number]
    encoding = encode_chat(chat, conversation_from(value, "test"), generation_prompt=prompt)
    assert encoding.ids == _oracle(hf, value, prompt, source)
    lines = _marked_lines(encoding.rendered)
    source_lines = source.split("\n")
    parts = _template_parts(encoding)
    assert parts
    for token, part in parts:
        assert part.line is not None and part.line == lines[token.start], (token, part)
        assert part.text.rstrip("\n") in source_lines[part.line - 1], (token, part)
    written = {part.line for _, part in parts}
    assert written >= {2, 3, 4, 9, 10} | ({7, 8} if prompt else set())


def test_the_parts_are_the_tags_and_text_lines_themselves(marked):
    chat, _, _ = marked
    encoding = encode_chat(chat, conversation_from([{"role": "user", "content": "Hi"}], "test"))
    texts = {part.text for _, part in _template_parts(encoding)}
    assert {"{{ '[3]' }}", '{{ "[3]" }}', "{{ message['role'] }}", "[4] plain text", "[9]\n", "[10]"} <= texts


def test_llama3_own_template_names_its_two_writing_tags(tmp_path):
    path = model_file("llama3")
    chat = load_chat_format(path)
    try:
        encoding = encode_chat(chat, conversation_from(CONVERSATIONS[1], "test"), generation_prompt=True)
    finally:
        chat.close()
    source = chat.template.sources["default"]  # type: ignore[union-attr]
    prompt = "{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}"

    def line_of(text: str) -> int:
        return source.count("\n", 0, source.index(text)) + 1

    # {{ content }} writes each message with its markup (built by the {% set %} before
    # it); the last tag writes the generation prompt.
    header = len(encoding.tokens) - 4  # <|start_header_id|> assistant <|end_header_id|> \n\n
    for number, (token, part) in enumerate(_template_parts(encoding)):
        content = (line_of("{{ content }}"), "{{ content }}")
        expected = (line_of(prompt), prompt) if token.start >= encoding.tokens[header].start else content
        assert (part.line, part.text) == expected, (number, token)


def test_only_counting_traces_no_parts(marked):
    chat, _, _ = marked
    [encoding] = encode_chats(chat, [conversation_from(CONVERSATIONS[0], "test")], sources=False)
    assert encoding.parts == [] and encoding.count > 0
