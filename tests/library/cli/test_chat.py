"""``glassllm chat`` (glassllm/cli/chat.py) and the conversations it reads
(glassllm/chat/conversation.py): the JSON it prints for a conversation and for a
dataset with its summary, the prompt with the template's text marked apart, and one line
naming the file, the line and the field for every kind of bad input, in both languages.
"""

from __future__ import annotations

import json
import os

import pytest

from glassllm.cli.__main__ import main
from tests.library.formats.fixtures import model_file

HELLO = [{"role": "user", "content": "Hello!"}]


def _run(capsys, *args: str) -> tuple[int, str, str]:
    status = main(["chat", *args, "-t", str(model_file("llama3"))])
    found = capsys.readouterr()
    return status, found.out, found.err


def test_json_of_a_conversation(tmp_path, capsys):
    path = tmp_path / "hello.json"
    path.write_text(json.dumps({"messages": HELLO}), encoding="utf-8")
    status, out, _ = _run(capsys, str(path), "--json")
    found = json.loads(out)
    assert status == 0
    assert set(found) == {"ids", "count", "template_count", "tokens", "warnings"}
    assert found["count"] == len(found["ids"]) == len(found["tokens"]) == 12
    assert found["template_count"] == 10
    assert [token["id"] for token in found["tokens"]] == found["ids"]
    sources = [token["source"] for token in found["tokens"]]
    assert sources[4:8] == [
        "template",
        {"message": 0, "start": 0, "end": 5},
        {"message": 0, "start": 5, "end": 6},
        "template",
    ]
    assert found["warnings"] == []
    # Each template token also says which part of the template wrote it: Llama 3's one
    # {{ content }} (on the template's third line: its string literals hold newlines),
    # then the tag of the assistant's header it always writes.
    parts = [token.get("template_part") for token in found["tokens"]]
    content = {"line": 3, "text": "{{ content }}"}
    header = {"line": 3, "text": "{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}"}
    assert parts == [content] * 5 + [None, None, content] + [header] * 4


def test_the_prompt_shows_the_template_apart(tmp_path, capsys):
    path = tmp_path / "hello.json"
    path.write_text(json.dumps(HELLO), encoding="utf-8")
    status, out, _ = _run(capsys, str(path))
    assert status == 0
    assert out.startswith("⟦<|begin_of_text|><|start_header_id|>user<|end_header_id|>⏎\n⏎\n⟧Hello!⟦<|eot_id|>")
    assert "1 message · 12 tokens: 10 from the template, 2 from the messages (message 0: 2)" in out
    header = "{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
    assert f"template parts:\n  line 3 {{{{ content }}}}: 6 tokens\n  line 3 {header}: 4 tokens\n" in out


def test_warnings_follow_the_locale_and_json_keeps_english(tmp_path, capsys, monkeypatch):
    path = tmp_path / "typed.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi <|eot_id|> there"}]), encoding="utf-8")
    for key in [key for key in os.environ if key.startswith("LC_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("LANG", "pt_BR.UTF-8")
    _, out, _ = _run(capsys, str(path))
    injected = "<|eot_id|> na posição 3, que a tokenização do modelo de chat lê como o token especial"
    assert f"aviso: mensagem 0: o conteúdo dela contém {injected}" in out
    _, out, _ = _run(capsys, str(path), "--json")
    [warning] = json.loads(out)["warnings"]
    assert warning.startswith("message 0: its content holds <|eot_id|> at offset 3") and "prompt injection" in warning
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    _, out, _ = _run(capsys, str(path))
    assert f"warning: {warning}\n" in out


def test_a_dataset_gets_one_object_a_line_and_a_summary(tmp_path, capsys):
    path = tmp_path / "data.jsonl"
    lines = [HELLO, [{"role": "user", "content": "Hello! " * 20}], {"messages": HELLO}]
    path.write_text("\n".join(map(json.dumps, lines[:2])) + "\n\n" + json.dumps(lines[2]) + "\n", encoding="utf-8")
    status, out, _ = _run(capsys, str(path), "--json", "--max-tokens", "20")
    rows = [json.loads(line) for line in out.splitlines()]
    assert status == 0
    assert [row.get("line") for row in rows[:3]] == [1, 2, 4]
    counts = [row["count"] for row in rows[:3]]
    assert counts[0] == counts[2] == 12 and counts[1] > 20
    assert rows[3] == {
        "summary": {
            "examples": 3,
            "total": sum(counts),
            "max": counts[1],
            "p50": 12,
            "p95": counts[1],
            "max_tokens": 20,
            "over": [2],
        }
    }
    status, out, _ = _run(capsys, str(path), "--max-tokens", "20")
    summary = f"3 conversations · {sum(counts)} tokens · max {counts[1]} · p50 12 · p95 {counts[1]}\n"
    assert out == summary + "1 over 20 tokens (lines): 2\n"


def test_the_generation_prompt_is_the_templates_to_add(tmp_path, capsys):
    template = tmp_path / "chatml.jinja"
    template.write_text(
        "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
        "{% if add_generation_prompt %}assistant:{% endif %}",
        encoding="utf-8",
    )
    path = tmp_path / "hello.json"
    path.write_text(json.dumps(HELLO), encoding="utf-8")
    counts = []
    for extra in ((), ("--generation-prompt",)):
        status, out, _ = _run(capsys, str(path), "--json", "--template", str(template), *extra)
        assert status == 0
        counts.append(json.loads(out)["template_count"])
    assert counts[1] > counts[0]


BAD = [
    ("{", "bad.json:1: not valid JSON (Expecting property name enclosed in double quotes, column 2)"),
    (
        "[]",
        "bad.json: expected a conversation (a non-empty list of messages, or an object with 'messages'), "
        "found an empty list",
    ),
    ('{"conversation": []}', "bad.json: a conversation object needs a 'messages' field"),
    ('[{"content": "hi"}]', "bad.json: messages[0].role must be a string, found null"),
    (
        '[{"role": "user", "content": 5}]',
        "bad.json: messages[0].content must be a string or a list of parts, found a number",
    ),
    (
        '[{"role": "user", "content": [{"type": "text", "text": null}]}]',
        "bad.json: messages[0].content[0].text must be a string, found null",
    ),
    ('[{"role": "user", "content": ["hi"]}]', "bad.json: messages[0].content[0] must be an object, found a string"),
    ('{"messages": [{"role": "user"}], "tools": {}}', "bad.json: tools must be a list, found an object"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_conversations_name_the_file_and_the_field(text, message, tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    status, out, err = _run(capsys, str(path))
    assert (status, out) == (1, "")
    assert err == f"glassllm chat: {tmp_path}/{message}\n"


def test_bad_dataset_lines_name_the_line(tmp_path, capsys, monkeypatch):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(json.dumps(HELLO).encode() + b"\n" + b'[{"role": "user", "content": 5}]\n')
    status, _, err = _run(capsys, str(path))
    assert (status, err) == (
        1,
        f"glassllm chat: {path}:2: messages[0].content must be a string or a list of parts, found a number\n",
    )
    monkeypatch.setenv("LC_ALL", "pt_BR.UTF-8")
    status, _, err = _run(capsys, str(path))
    portuguese = "messages[0].content deve ser uma string ou uma lista de partes, encontrou um número"
    assert err == f"glassllm chat: {path}:2: {portuguese}\n"
    path.write_bytes(json.dumps(HELLO).encode() + b"\n\xff\n")
    monkeypatch.delenv("LC_ALL")
    status, _, err = _run(capsys, str(path))
    assert (status, err) == (1, f"glassllm chat: {path}:2: not UTF-8 text (byte 0 of the line)\n")


def test_a_tokenizer_without_a_template_is_told_to_name_one(tmp_path, capsys):
    path = tmp_path / "hello.json"
    path.write_text(json.dumps(HELLO), encoding="utf-8")
    status = main(["chat", str(path), "-t", str(model_file("gpt4o"))])
    err = capsys.readouterr().err
    assert status == 1 and err.startswith(f"glassllm chat: {model_file('gpt4o')}: no chat template beside it")
    assert err.endswith("name one with --template\n")
