"""glassllm.chat.sandbox: hostile chat templates (loops without end, recursion, gigabytes
of output, Python's internals, raise_exception, bad syntax) each get one clear message
naming the template's file, from the library and from ``glassllm chat``; and the worker
renders again after one was stopped.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from glassllm.chat import conversation_from, encode_chat, encode_chats, load_chat_format, sandbox
from glassllm.chat.sandbox import Renderer, RenderFailure, Traced
from glassllm.cli.__main__ import main
from tests.library.formats.fixtures import model_file

HOSTILE: dict[str, tuple[str, str | tuple[str, ...]]] = {
    "endless": (
        "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}",
        "ran longer than 1 s",
    ),
    "output": ('{% for i in range(99999) %}{{ "x" * 99999 }}{% endfor %}', "renders too much"),
    "repeat": ('{{ "x" * 10 ** 9 }}', "renders too much"),
    "doubling": (
        '{% set ns = namespace(s="xx") %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}',
        # The memory cap or the deadline, whichever it meets first.
        ("takes more memory", "ran longer than 1 s"),
    ),
    "recursion": ("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "recurses too deeply"),
    "internals": ("{{ messages.__class__.__mro__ }}", "the sandbox forbids"),
    "printed": ("{{ ''.__class__ }}", "the sandbox forbids"),
    "namespace": ("{% set ns = namespace(_secret=1) %}", "the sandbox forbids"),
    "refusal": ("{{ raise_exception('only user and assistant roles') }}", "refuses this conversation"),
    "syntax": ("{% for %}", "not valid Jinja"),
    "undefined": ("{{ nothing.here }}", "fails on this conversation"),
}


@pytest.fixture(autouse=True)
def _one_second(monkeypatch):
    monkeypatch.setattr(sandbox, "RENDER_SECONDS", 1.0)


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_templates_get_one_message_naming_the_file(name, tmp_path, capsys):
    source, words = HOSTILE[name]
    template = tmp_path / f"{name}.jinja"
    template.write_text(source, encoding="utf-8")
    conversation = tmp_path / "conversation.json"
    conversation.write_text(json.dumps([{"role": "user", "content": "hi"}]), encoding="utf-8")
    started = time.monotonic()
    status = main(["chat", str(conversation), "-t", str(model_file("llama3")), "--template", str(template)])
    assert time.monotonic() - started < 30
    error = capsys.readouterr().err
    assert status == 1
    assert error.count("\n") == 1 and error.startswith(f"glassllm chat: {template}: "), error
    assert any(found in error for found in ((words,) if isinstance(words, str) else words)), error


@pytest.mark.parametrize("name", ["endless", "output", "repeat", "recursion", "internals"])
def test_a_traced_rendering_keeps_the_bounds(name):
    """Saying which part wrote what drives the template's generator by hand, in the same
    worker, under the same deadline and output bound."""
    source, _ = HOSTILE[name]
    kinds = {"endless": "timeout", "output": "too_large", "repeat": "too_large", "recursion": "recursion"}
    renderer = Renderer(seconds=1.0)
    try:
        (found,) = renderer.render([(source, {"messages": []}, True)])
        assert isinstance(found, RenderFailure) and found.kind == kinds.get(name, "forbidden"), found
        (traced,) = renderer.render([("{{ a }}\nb", {"a": "x"}, True)])
        assert traced == Traced("x\nb", [(1, 1, "{{ a }}"), (2, 1, "\n"), (3, 2, "b")])
    finally:
        renderer.close()


def test_the_worker_renders_again_after_a_stopped_template():
    renderer = Renderer(seconds=1.0)
    try:
        endless = HOSTILE["endless"][0]
        (stopped,) = renderer.render([(endless, {})])
        assert isinstance(stopped, RenderFailure) and stopped.kind == "timeout"
        assert renderer.render([("{{ a }}-{{ b | tojson }}", {"a": "ok", "b": ["é"]})]) == ['ok-["é"]']
        # What is not plain data reaches a template as its type's name, as in transformers.
        assert renderer.render([("{{ a }}", {"a": object()})]) == ["<object>"]
    finally:
        renderer.close()


def test_a_worker_slow_to_start_is_not_blamed_on_the_template():
    # A new interpreter importing Jinja2 takes far longer than this deadline (more on a
    # busy machine): the deadline is the render's, counted once the worker is ready.
    renderer = Renderer(seconds=0.05)
    try:
        assert renderer.render([("{{ a }}", {"a": "ok"})]) == ["ok"]
    finally:
        renderer.close()


def test_a_library_caller_gets_a_value_error_naming_the_file(tmp_path):
    template = tmp_path / "refuses.jinja"
    template.write_text("{{ raise_exception('no') }}", encoding="utf-8")
    chat = load_chat_format(model_file("llama3"), template=template)
    try:
        refused = f"^{template}: the chat template refuses this conversation \\(data.jsonl:7\\): no$"
        with pytest.raises(ValueError, match=refused):
            encode_chat(chat, conversation_from([{"role": "user", "content": "hi"}], "data.jsonl:7"))
    finally:
        chat.close()


def test_a_dataset_names_the_line_the_template_refuses(tmp_path, capsys):
    template = tmp_path / "no-tools.jinja"
    template.write_text(
        "{% for m in messages %}{% if m.role == 'tool' %}{{ raise_exception('no tools') }}{% endif %}"
        "{{ m.content }}{% endfor %}",
        encoding="utf-8",
    )
    dataset = tmp_path / "data.jsonl"
    lines = [[{"role": "user", "content": "hi"}]] * 70 + [[{"role": "tool", "content": "{}"}]]
    dataset.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    status = main(["chat", str(dataset), "-t", str(model_file("llama3")), "--template", str(template)])
    error = capsys.readouterr().err
    assert status == 1
    assert error == f"glassllm chat: {template}: the chat template refuses this conversation ({dataset}:71): no tools\n"


def test_a_caller_that_stops_early_leaves_no_answer_behind(tmp_path):
    template = tmp_path / "echo.jinja"
    template.write_text("{{ messages[0].content }}", encoding="utf-8")
    chat = load_chat_format(model_file("llama3"), template=template)
    try:
        many = [conversation_from([{"role": "user", "content": f"number {n}"}], "test") for n in range(200)]
        found = encode_chats(chat, many)
        assert next(found).rendered == "number 0"
        found.close()  # two batches were sent; the second's answer is never read
        again = encode_chat(chat, conversation_from([{"role": "user", "content": "afresh"}], "test"))
        assert again.rendered == "afresh"
    finally:
        chat.close()


def test_a_script_without_a_main_guard_can_encode(tmp_path):
    # multiprocessing's spawn would run such a script again in its child; the worker
    # is a plain new interpreter, so the script, read from standard input too, runs once.
    code = (
        "from glassllm.chat import conversation_from, encode_chat, load_chat_format\n"
        f"chat = load_chat_format({str(model_file('llama3'))!r})\n"
        "print(encode_chat(chat, conversation_from([{'role': 'user', 'content': 'hi'}], 'x')).count)\n"
    )
    found = subprocess.run([sys.executable, "-"], input=code, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert (found.returncode, found.stdout) == (0, "11\n"), found.stderr
