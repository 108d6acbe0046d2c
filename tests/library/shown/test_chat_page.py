"""The page of ``glassllm chat --html`` (glassllm/shown/chat_page.py, written by
glassllm/cli/chat.py): its content against the library's own encoding, both languages,
a dataset's summary and bounds; then opened in a real Chromium as the other pages are
(tests/library/shown/test_html_page.py): every token reached by the keyboard with its
tooltip, hover and tap on a phone's width, both schemes, and no request at all.
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path

import pytest

from glassllm.chat import conversation_from, encode_chat, load_chat_format
from glassllm.cli.__main__ import main
from glassllm.shown import chat_page
from tests.library.formats.fixtures import model_file
from tests.library.shown.test_html_page import NARROW, WIDE, browser, open_page  # noqa: F401 (fixtures)

MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Olá 🙂 <|eot_id|> and more"},
]
TOKEN = re.compile(
    r'<span class="(tok [^"]*)"[^>]*?data-index="(\d+)" data-id="(\d+)" data-piece="[^"]*" data-source="([^"]*)"'
)


@pytest.fixture(scope="module")
def expected():
    chat = load_chat_format(model_file("llama3"))
    try:
        yield encode_chat(chat, conversation_from(MESSAGES, "test"), generation_prompt=True)
    finally:
        chat.close()


def _write(tmp_path: Path, value: object, *args: str, name: str = "chat.json") -> Path:
    source = tmp_path / name
    if name.endswith(".jsonl"):
        assert isinstance(value, list)
        source.write_text("".join(json.dumps(line) + "\n" for line in value), encoding="utf-8")
    else:
        source.write_text(json.dumps(value), encoding="utf-8")
    page = tmp_path / f"{name}-{len(list(tmp_path.iterdir()))}.html"
    status = main(["chat", str(source), "-t", str(model_file("llama3")), "--html", str(page), *args])
    assert status == 0
    return page


def test_every_token_is_the_library_s_with_its_source(tmp_path, expected):
    text = _write(tmp_path, MESSAGES, "--generation-prompt", "--lang", "en").read_text(encoding="utf-8")
    found = TOKEN.findall(text)
    assert [int(token_id) for _, _, token_id, _ in found] == expected.ids
    for (kind, index, _, source), token, part in zip(found, expected.tokens, expected.parts, strict=True):
        source = html.unescape(source)
        if token.source is None:
            assert part is not None and kind == "tok tpl", (index, kind)
            assert source == f"template: line {part.line} · {part.text}".replace("\n", "\\n"), source
        else:
            assert kind == f"tok m{token.source.message}"
            role = MESSAGES[token.source.message]["role"]
            place = f"characters {token.source.start}–{token.source.end} of its content"
            assert source == f"message {token.source.message} ({role}) · {place}", source
    template = expected.template_count
    share = f"{100 * template / expected.count:.1f}%"
    counts = f"{expected.count} tokens: {template} from the template ({share}), {expected.count - template} from"
    assert counts in text
    # The typed <|eot_id|> is the library's warning, on the page as a list item.
    assert [html.unescape(item) for item in re.findall(r"<li>(.*?)</li>", text)] == expected.warnings
    assert "prompt injection" in expected.warnings[0]
    assert "default-src 'none'" in text and not re.search(r"""(src|href)\s*=\s*["']""", text)


def test_the_page_follows_the_locale_unless_lang_is_given(tmp_path, monkeypatch):
    for key in [key for key in os.environ if key.startswith("LC_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("LANG", "pt_BR.UTF-8")
    portuguese = _write(tmp_path, MESSAGES).read_text(encoding="utf-8")
    assert '<html lang="pt-BR">' in portuguese and "O que o modelo recebe" in portuguese
    assert "do modelo de chat (" in portuguese and "caracteres 0–2 do conteúdo" in portuguese
    # The library's warning, in the page's language.
    assert "<li>mensagem 1: o conteúdo dela contém &lt;|eot_id|&gt; na posição 6," in portuguese
    english = _write(tmp_path, MESSAGES, "--lang", "en").read_text(encoding="utf-8")
    assert '<html lang="en">' in english and "What the model receives" in english


def test_a_dataset_page_has_the_summary_each_line_and_says_what_it_shows(tmp_path, capsys, monkeypatch):
    lines = [[{"role": "user", "content": f"Question {number}: " + "word " * number}] for number in range(14)]
    monkeypatch.setattr(chat_page, "LINES_SHOWN", 12)
    text = _write(tmp_path, lines, "--max-tokens", "20", "--lang", "en", name="data.jsonl").read_text(encoding="utf-8")
    assert capsys.readouterr().out.endswith(": chat page (en), open it in a browser\n")
    main(["chat", str(tmp_path / "data.jsonl"), "-t", str(model_file("llama3")), "--json", "--max-tokens", "20"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    summary = rows[-1]["summary"]
    numbers = [summary[key] for key in ("examples", "total", "max", "p50", "p95")]
    assert "{} conversations · {} tokens · max {} · p50 {} · p95 {}".format(*numbers) in text
    over = ", ".join(map(str, summary["over"]))
    assert f"{len(summary['over'])} over 20 tokens (lines): {over}" in text
    assert "The first 10 of 14 conversations in full" in text
    sections = re.findall(r'<h3 id="c\d+">Line (\d+): (\d+) tokens', text)
    assert [(int(line), int(count)) for line, count in sections] == [(row["line"], row["count"]) for row in rows[:10]]
    assert len(TOKEN.findall(text)) == sum(row["count"] for row in rows[:10])
    assert "The first 12 of 14 lines." in text
    listed = re.findall(r'<tr><th scope="row">line (\d+)</th><td>(\d+)</td></tr>', text)
    assert [(int(line), int(count)) for line, count in listed] == [(row["line"], row["count"]) for row in rows[:12]]


# --- in Chromium ----------------------------------------------------------------------


def test_the_keyboard_reaches_every_token_and_its_source(tmp_path, open_page, expected):  # noqa: F811
    view = open_page(_write(tmp_path, MESSAGES, "--generation-prompt", "--lang", "en"))
    for index, (token, part) in enumerate(zip(expected.tokens, expected.parts, strict=True)):
        view.page.keyboard.press("Tab")
        assert view.focused() == str(index), f"Tab #{index + 1} did not reach token {index}"
        tip = view.tip()
        assert f"ID {token.id}" in tip, tip
        if part is not None:
            assert f"template: line {part.line}" in tip, tip
        else:
            assert f"message {token.source.message} (" in tip, tip
    view.page.keyboard.press("Home")
    assert view.focused() == "0"
    view.page.keyboard.press("ArrowRight")
    assert view.focused() == "1"
    view.page.keyboard.press("End")
    assert view.focused() == str(len(expected.tokens) - 1)
    view.page.keyboard.press("Escape")
    assert not view.page.locator("#tip").is_visible()


def test_the_template_s_tokens_look_apart_and_the_page_fits_a_phone(tmp_path, open_page, expected):  # noqa: F811
    file = _write(tmp_path, MESSAGES, "--generation-prompt", "--lang", "pt")
    for scheme in ("light", "dark"):
        view = open_page(file, NARROW, scheme)
        overflow = view.page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"the page is {overflow} px wider than a phone"
        styles = view.page.eval_on_selector_all(
            ".text .tok", "tokens => tokens.map(t => getComputedStyle(t).backgroundImage)"
        )
        hatched = [style.startswith("repeating-linear-gradient") for style in styles]
        assert hatched == [token.source is None for token in expected.tokens]
        view.page.locator('.tok[data-index="6"]').tap()
        assert f"ID {expected.ids[6]}" in view.tip() and "mensagem 0 (system)" in view.tip()
        view.page.locator("h1").click()
        assert not view.page.locator("#tip").is_visible()
    wide = open_page(file, WIDE)
    wide.page.locator('.tok[data-index="0"]').hover()
    assert "modelo de chat: linha 3 · {{ content }}" in wide.tip()


def test_a_dataset_page_in_chromium_keeps_each_prompt_s_keys_apart(tmp_path, open_page):  # noqa: F811
    lines = [[{"role": "user", "content": f"Pergunta {number} 🙂"}] for number in range(12)]
    file = _write(tmp_path, lines, "--lang", "pt", name="data.jsonl")
    view = open_page(file, NARROW)
    overflow = view.page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"the page is {overflow} px wider than a phone"
    assert view.page.locator("section h3").count() == chat_page.CONVERSATIONS_SHOWN
    second = view.page.locator("#c1t0")
    second.focus()
    assert "mensagem" not in view.tip() and "modelo de chat: linha" in view.tip()
    # End goes to the last token of this conversation's prompt, not of the page.
    view.page.keyboard.press("End")
    last = view.page.evaluate("document.activeElement.id")
    assert last.startswith("c1t") and view.page.locator(f"#{last} ~ .tok").count() == 0
    view.page.keyboard.press("Home")
    assert view.page.evaluate("document.activeElement.id") == "c1t0"
    rows = view.page.locator("table.lines tbody tr").count()
    assert rows == len(lines)
