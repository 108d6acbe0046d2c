"""glassllm in a real Vim 9 with ALE (Debian's vim-nox and vim-ale), set up as its help says.

One headless Vim session (``vim_session.vim``) with editors/vim on the runtimepath and
``packadd! ale``, ``LANG=pt_BR.UTF-8``, visits a Portuguese file with a decomposed accent,
an emoji and a character outside the alphabet, and records what ALE and the plugin show.
Each test checks one part of that record against the library. Apart from that session,
the README's and docs/editors.md's install steps run as written, in a home of their own,
and ``:help glassllm`` must then open the help. Under ``CI=true`` a missing Vim or ALE
fails these tests; elsewhere they skip, naming the script that installs them.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from editor_cases import CHAT_TEXT, accented_token, chat_count_pt, chat_encoding, slow_english
from editor_env import portuguese_environment

from glassllm import Tokenizer, packaged
from glassllm.pipeline.tokens import TokenSpan
from glassllm.shown.places import TextPlaces
from glassllm.shown.visible import visible
from glassllm.tokenizer import UNK_ID

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "vim"
SESSION = Path(__file__).with_name("vim_session.vim")
ALE = Path("/usr/share/vim/vimfiles/pack/dist-bundle/opt/ale")  # Debian's vim-ale
TOK = packaged("pt")
# Line 1: a decomposed accent (e + U+0301) and an emoji (two UTF-16 units, unknown) before
# the end; line 2: plain ASCII up to an umbrella outside the alphabet.
TEXT = "A menina cafe\u0301 sorriu \U0001f642 sob a chuva.\nEra uma vez \u2602 e uma histo\u0301ria.\n"
LINES = TEXT.splitlines(keepends=True)
HOVER = (1, LINES[0].index("sob") + 2)  # on the "o" of "sob", after the accent and the emoji
INSERTED = "Ontem "
SELECTED = (1, "cafe\u0301 sorriu \U0001f642")  # a Visual selection on line 1
EDITED = INSERTED + TEXT
EDITED_FIRST = EDITED.splitlines()[0]


def _vim_with_ale() -> bool:
    vim = shutil.which("vim")
    if vim is None or not (ALE / "plugin" / "ale.vim").exists():
        return False
    found = subprocess.run([vim, "--version"], capture_output=True, text=True, timeout=60)
    major = re.search(r"Vi IMproved (\d+)\.", found.stdout)
    return major is not None and int(major.group(1)) >= 9


def _require_vim_with_ale() -> None:
    """Skip without Vim 9 and ALE (a failure under ``CI=true``: tests/conftest.py)."""
    if not _vim_with_ale():
        pytest.skip("needs Vim 9 and ALE: run `sudo bash editors/setup.sh` (editors/setup/vim.sh)")


def _server_command() -> list[str]:
    script = Path(sys.executable).with_name("glassllm-lsp")
    return [str(script)] if script.exists() else [sys.executable, "-m", "glassllm_server"]


def _vimrc(folder: Path, *lines: str, plugin: Path = PLUGIN) -> Path:
    """``folder/vimrc``: Vim with ALE and the plugin at ``plugin``, the server this Python
    runs, then ``lines``."""
    vimrc = folder / "vimrc"
    head = [
        "set nocompatible encoding=utf-8",
        f"set runtimepath^={plugin}",
        "packadd! ale",
        f"let g:glassllm_server_command = {json.dumps(_server_command())}",
    ]
    vimrc.write_text("\n".join([*head, *lines, "filetype plugin on", ""]), encoding="utf-8")
    return vimrc


@pytest.fixture(scope="module")
def vim(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What one Vim session saw (see ``vim_session.vim``)."""
    _require_vim_with_ale()
    folder = tmp_path_factory.mktemp("vim")
    # A copy of the plugin, as a plugin manager installs it: :helptags writes doc/tags.
    plugin = folder / "glassllm"
    shutil.copytree(PLUGIN, plugin)
    document = folder / "conto.txt"
    document.write_text(TEXT, encoding="utf-8", newline="")
    vimrc = _vimrc(folder, "let g:ale_hover_to_preview = 1", plugin=plugin)
    out = folder / "report.json"
    # The "browser" netrw opens a page with: it writes the page's path down.
    viewer = folder / "viewer"
    viewer.write_text('#!/bin/sh\nprintf "%s\\n" "$1" >> "$GLASSLLM_OPENED"\n', encoding="utf-8")
    viewer.chmod(0o755)
    environment = portuguese_environment(
        folder,
        GLASSLLM_FILE=str(document),
        GLASSLLM_HOVER=f"{HOVER[0]} {_byte_column(LINES[HOVER[0] - 1], HOVER[1] - 1) + 1}",
        GLASSLLM_EDIT=INSERTED,
        # Made after the edit: on the edited line.
        GLASSLLM_SELECT=f"{SELECTED[0]} {_byte_column(EDITED_FIRST, EDITED_FIRST.index(SELECTED[1])) + 1} "
        f"{_vim_characters(SELECTED[1])}",
        GLASSLLM_DOC=str(plugin / "doc"),
        GLASSLLM_OUT=str(out),
        GLASSLLM_VIEWER=str(viewer),
        GLASSLLM_OPENED=str(folder / "opened.txt"),
    )
    return _run_vim(SESSION, vimrc, environment, folder, out)


def _byte_column(line: str, column: int) -> int:
    """The 0-based byte column of code point ``column``."""
    return len(line[:column].encode("utf-8"))


def _vim_characters(text: str) -> int:
    """Characters as Vim's cursor moves over them: a combining mark goes with its base."""
    return sum(1 for char in text if not ("\u0300" <= char <= "\u036f"))


def _line_spans(number: int, text: str = TEXT) -> list[TokenSpan]:
    return TOK.encode_spans(text.splitlines(keepends=True)[number - 1])


def _count(text: str, tokenizer: Tokenizer = TOK) -> int:
    """The server's count: each line tokenized alone, its line ending included."""
    return sum(len(tokenizer.encode_spans(line)) for line in text.splitlines(keepends=True))


def test_ale_runs_glassllm_for_text_added_to_the_linters(vim):
    assert vim["filetype"] == "text"
    assert vim["linters"]["text"] == ["glassllm"]
    assert vim["language"] == "plaintext"


def test_the_location_list_holds_each_unknown_character_with_the_library_message(vim):
    unknown = [
        (number, line, item)
        for number, line in enumerate(LINES, start=1)
        for item in _line_spans(number)
        if item.id == UNK_ID
    ]
    assert [line[item.start : item.end] for _, line, item in unknown] == ["\U0001f642", "\u2602"]
    assert [(item["lnum"], item["type"]) for item in vim["loclist"]] == [(1, "W"), (2, "W")]
    for (_, line, item), shown in zip(unknown, vim["loclist"], strict=True):
        character = line[item.start : item.end]
        # ALE puts the diagnostic's code before its message.
        assert shown["text"].startswith(
            f"unknown-character: '{character}' não está no alfabeto do tokenizador português: vira <unk> (id 1)"
        )
    assert {item["code"] for item in vim["ale_loclist"]} == {"unknown-character"}
    assert {item["linter"] for item in vim["ale_loclist"]} == {"glassllm"}
    # Vim's columns are bytes; through the plugin's relay the server counts bytes too, so
    # the emoji after an accent lands on its own column.
    for (_, line, item), shown, full in zip(unknown, vim["loclist"], vim["ale_loclist"], strict=True):
        assert shown["col"] == _byte_column(line, item.start) + 1
        assert full["end_col"] == _byte_column(line, item.end)


def test_the_hover_in_ale_preview_is_the_library_token_in_portuguese(vim):
    token = next(item for item in _line_spans(HOVER[0]) if item.start <= HOVER[1] - 1 < item.end)
    before = sum(len(_line_spans(number)) for number in range(1, HOVER[0]))
    line_start = sum(len(LINES[number]) for number in range(HOVER[0] - 1))
    hover = vim["hover"]
    assert hover["filetype"] == "ale-preview.message"
    where = TextPlaces(TEXT).span(line_start + token.start, line_start + token.end)
    assert hover["text"].startswith(
        f"**`{token.piece}`** · ID {token.id} · em {where}"
        f" · índice {before + _line_spans(HOVER[0]).index(token)} no documento"
    ), hover["text"]
    assert "Tokenizador: português (pt)" in hover["text"]


def test_the_statusline_counts_the_library_tokens_and_follows_an_edit(vim):
    assert vim["statusline"] == f"{_count(TEXT)} tokens"
    assert vim["edited_text"] == EDITED
    assert vim["edited_statusline"] == f"{_count(EDITED)} tokens"


def _shown_ids(page: str) -> list[int]:
    return [
        int(i) for row in re.findall(r"^Tokens \(ID\): (.*)$", page, flags=re.M) for i in re.findall(r"\((\d+)", row)
    ]


def test_1_glassllm_explain_opens_the_merge_steps_of_line_1_in_a_split(vim):
    first = EDITED_FIRST
    page = vim["explain"]
    assert page["name"] == "glassllm://explain/conto.txt"
    assert page["filetype"] == "markdown"
    assert page["windows"] == 2, "the page opens in a split beside the text"
    assert page["linted"] == 0, "ALE leaves the server's page alone (no server started for it)"
    assert page["text"].startswith(
        f"# Explicar fusões BPE\n\nconto.txt, seleção 1:1–1:{len(first)} · tokenizador: português (pt)\n"
    ), page["text"][:200]
    spans = _line_spans(1, EDITED)
    assert _shown_ids(page["text"]) == [item.id for item in spans if item.end <= len(first)]
    for chunk in TOK.explain(first):
        for step in chunk.steps:
            assert step.result in page["text"]


def test_2_glassllm_compare_puts_the_tokenizers_side_by_side(vim):
    page = vim["compare"]
    assert page["name"] == "glassllm://compare/conto.txt"
    assert page["text"].startswith("# Comparar tokenizadores\n\nconto.txt, seleção 2:1–2:")
    assert "| português (pt) | inglês (en) |" in page["text"]
    second = EDITED.splitlines(keepends=True)[1]
    pieces = [item for item in TOK.encode_spans(second) if item.id != UNK_ID and item.piece != "\n"]
    assert f"`{pieces[0].piece}` ({pieces[0].id})" in page["text"]


def test_2_glassllm_compare_in_browser_hands_the_html_page_to_the_browser(vim):
    (opened,) = vim["browser"]
    path = Path(opened)
    assert path.parent.name == "glassllm" and re.fullmatch(r"compare-conto-[0-9a-f]{8}-2\.1-2\.\d+\.html", path.name)
    page = path.read_text(encoding="utf-8")
    assert '<html lang="pt-BR">' in page
    second = EDITED.splitlines()[1]
    expected = [
        (name, item.id, visible(item.piece))
        for name, tokenizer in (("português (pt)", TOK), ("inglês (en)", packaged("en")))
        for item in tokenizer.encode_spans(second)
    ]
    found = re.findall(r'data-tokenizer="([^"]*)" data-id="(\d+)" data-piece="([^"]*)"', page)
    assert [(html.unescape(n), int(i), html.unescape(p)) for n, i, p in found] == expected


def test_glassllm_token_map_hands_the_map_of_the_project_folder_to_the_browser(vim):
    path = Path(vim["token_map"])
    assert path.parent.name == "glassllm" and path.name.startswith("tokens-"), path
    page = path.read_text(encoding="utf-8")
    assert '<html lang="pt-BR">' in page and '<span class="name">conto.txt</span>' in page
    assert f"{len(TOK.encode(TEXT)):,} pt".replace(",", ".") in page  # the file as saved, before the edit


def test_the_visual_mapping_explains_the_selection_to_the_character(vim):
    start = EDITED_FIRST.index(SELECTED[1])
    end = start + len(SELECTED[1])
    page = vim["selection"]
    where = TextPlaces(EDITED).span(start, end)
    assert page["text"].startswith(
        f"# Explicar fusões BPE\n\nconto.txt, seleção {where} · tokenizador: português (pt)\n"
    ), page["text"][:200]
    touched = {item.chunk for item in _line_spans(1, EDITED) if item.start < end and start < item.end}
    expected = [item.id for item in _line_spans(1, EDITED) if item.chunk in touched]
    assert _shown_ids(page["text"]) == expected


def test_the_statusline_counts_the_visual_selection_while_it_lasts(vim):
    start = EDITED_FIRST.index(SELECTED[1])
    end = start + len(SELECTED[1])
    # A token cut by the selection's edge counts, as in the server's glassllm/stats.
    selected = sum(1 for item in _line_spans(1, EDITED) if item.start < end and start < item.end)
    assert vim["visual_statusline"] == f"v {selected}/{_count(EDITED)} tokens"
    assert vim["after_visual_statusline"] == f"{_count(EDITED)} tokens"


def test_help_glassllm_opens_the_plugin_help(vim):
    assert vim["help"] == {"file": "glassllm.txt", "line": vim["help"]["line"], "filetype": "help"}
    assert "*glassllm*" in vim["help"]["line"]


INSTALL_PAGES = ["README.md", "README.pt-BR.md", "docs/editors.md", "docs/editors.pt-BR.md"]


def _vim_install_steps(page: str) -> tuple[str, str]:
    """The shell lines and the vimrc of the page's "Vim (ALE)" section."""
    text = (REPO / page).read_text(encoding="utf-8")
    section = re.search(r"^#+ Vim \(ALE\)\n(.*?)(?=^#)", text, flags=re.S | re.M)
    assert section is not None, f"{page} has no Vim (ALE) section"
    blocks = dict(re.findall(r"^```(sh|vim)\n(.*?)^```", section.group(1), flags=re.S | re.M))
    assert set(blocks) == {"sh", "vim"}, f"{page}: the Vim section needs its shell lines and its vimrc"
    return blocks["sh"], blocks["vim"]


@pytest.mark.parametrize("page", INSTALL_PAGES)
def test_help_glassllm_works_after_the_page_s_install_steps(page: str, tmp_path: Path):
    """The steps run as written, from a copy of the repository's root into a new home; then
    Vim, started as the user's vimrc starts it, opens the plugin's help."""
    _require_vim_with_ale()
    shell, vimrc = _vim_install_steps(page)
    root, home = tmp_path / "glassllm", tmp_path / "home"
    # A copy, so that :helptags writes its tags there and not in this checkout.
    shutil.copytree(PLUGIN, root / "editors" / "vim")
    home.mkdir()
    environment = portuguese_environment(home, PWD=str(root))
    steps = subprocess.run(
        ["sh", "-ec", shell], cwd=root, env=environment, stdin=subprocess.DEVNULL, capture_output=True, timeout=60
    )
    assert steps.returncode == 0, f"{page}'s steps failed:\n{steps.stderr.decode()}"
    (home / ".vimrc").write_text(vimrc, encoding="utf-8")
    out = tmp_path / "help.json"
    probe = (
        "try | help glassllm"
        " | let g:seen = {'file': expand('%:t'), 'filetype': &filetype, 'line': getline('.')}"
        " | catch | let g:seen = {'error': v:exception} | endtry"
        f" | call writefile([json_encode(g:seen)], {json.dumps(str(out))})"
    )
    run = subprocess.run(
        ["vim", "-N", "-u", str(home / ".vimrc"), "-i", "NONE", "-n", "-es", "-c", probe, "-c", "qa!"],
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=home,
    )
    assert out.exists(), f"Vim failed ({run.returncode}):\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}"
    seen = json.loads(out.read_text(encoding="utf-8"))
    assert "error" not in seen, f"after {page}'s steps, :help glassllm fails: {seen['error']}"
    assert seen["file"] == "glassllm.txt" and seen["filetype"] == "help"
    assert "*glassllm*" in seen["line"]


# A real model's tokenizer (Mistral 7B's SentencePiece BPE), named in g:glassllm_settings:
# nothing else to configure. Hovers on line 1's "sob" (after the accent and the emoji) and
# on line 2's "história", as (line, code point column), both 1-based.
MODEL_SESSION = Path(__file__).with_name("vim_model_session.vim")
MODEL_HOVERS = ((1, LINES[0].index("sob") + 2), (2, LINES[1].index("histo") + 2))


def _vim_with_tokenizer(folder: Path, tokenizer: Path, count: int, hovers: str = "") -> dict[str, Any]:
    """What a Vim session whose settings name ``tokenizer`` saw (see ``vim_model_session.vim``),
    once its status line shows ``count`` tokens."""
    _require_vim_with_ale()
    document = folder / "conto.txt"
    document.write_text(TEXT, encoding="utf-8", newline="")
    vimrc = _vimrc(
        folder,
        f"let g:glassllm_settings = {{'tokenizer': {json.dumps(str(tokenizer))}}}",
        "let g:ale_hover_to_preview = 1",
    )
    out = folder / "report.json"
    environment = portuguese_environment(
        folder,
        GLASSLLM_FILE=str(document),
        GLASSLLM_HOVERS=hovers,
        GLASSLLM_COUNT=f"{count} tokens",
        GLASSLLM_OUT=str(out),
    )
    return _run_vim(MODEL_SESSION, vimrc, environment, folder, out)


@pytest.fixture(scope="module")
def vim_with_model(tmp_path_factory: pytest.TempPathFactory, mistral_file: Path, mistral) -> dict[str, Any]:
    """What a Vim session whose settings name Mistral's tokenizer saw."""
    hovers = ",".join(f"{line} {_byte_column(LINES[line - 1], column - 1) + 1}" for line, column in MODEL_HOVERS)
    return _vim_with_tokenizer(tmp_path_factory.mktemp("vim-model"), mistral_file, len(mistral.encode(TEXT)), hovers)


def test_the_statusline_counts_the_model_tokens(vim_with_model, mistral):
    assert vim_with_model["statusline"] == f"{len(mistral.encode(TEXT))} tokens"


def test_the_hover_gives_the_model_id_and_readable_piece(vim_with_model, mistral):
    for (line, column), hover in zip(MODEL_HOVERS, vim_with_model["hovers"], strict=True):
        offset = sum(len(text) for text in LINES[: line - 1]) + column - 1
        (token,) = [span for span in mistral.encode_spans(TEXT) if span.start <= offset < span.end]
        assert f"`{mistral.readable(token.piece)}`** · ID {token.id} ·" in hover, hover


def _run_vim(session: Path, vimrc: Path, environment: dict[str, str], folder: Path, out: Path) -> dict[str, Any]:
    """Run ``session`` in real Vim (Ex mode, no viminfo, no swap) and return the JSON report
    it writes to ``out``."""
    run = subprocess.run(
        ["vim", "-N", "-u", str(vimrc), "-i", "NONE", "-n", "-es", "-S", str(session)],
        env=environment,
        capture_output=True,
        text=True,
        timeout=180,
        cwd=folder,
    )
    assert out.exists(), f"Vim failed ({run.returncode}):\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}"
    report = json.loads(out.read_text(encoding="utf-8"))
    assert "error" not in report, report["error"]
    return report


# A tokenizer file that loads slowly (tests/editors/editor_cases.py).


@pytest.fixture(scope="module")
def vim_with_slow_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("vim-slow")
    with slow_english(folder) as fifo:
        return _vim_with_tokenizer(folder, fifo, _count(TEXT, packaged("en")))


def test_the_statusline_follows_a_tokenizer_that_loads_after_the_wait(vim_with_slow_tokenizer):
    english = _count(TEXT, packaged("en"))
    assert _count(TEXT) != english
    assert vim_with_slow_tokenizer["first_statusline"] == f"{_count(TEXT)} tokens"
    assert vim_with_slow_tokenizer["statusline"] == f"{english} tokens"
    assert vim_with_slow_tokenizer["edited"] is False


# The chat document (tests/editors/editor_cases.py), glassllm added to ALE's JSON linters.


@pytest.fixture(scope="module")
def vim_with_chat(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from tests.library.formats.fixtures import model_file

    _require_vim_with_ale()
    folder = tmp_path_factory.mktemp("vim-chat")
    document = folder / "chat.json"
    document.write_text(CHAT_TEXT, encoding="utf-8", newline="")
    vimrc = _vimrc(
        folder,
        f"let g:glassllm_settings = {{'tokenizer': {json.dumps(str(model_file('llama3')))}}}",
        "let g:glassllm_filetypes = ['text', 'markdown', 'json']",
        "let g:ale_linters = {'json': ['glassllm']}",
        "let g:ale_hover_to_preview = 1",
    )
    lines = CHAT_TEXT.splitlines()
    row = next(number for number, line in enumerate(lines) if "caf\\u00e9" in line)
    count = chat_count_pt()
    out = folder / "report.json"
    environment = portuguese_environment(
        folder,
        GLASSLLM_FILE=str(document),
        GLASSLLM_HOVERS=f"{row + 1} {lines[row].index(chr(92) + 'u00e9') + 3}",  # inside the escape
        GLASSLLM_COUNT=count,
        GLASSLLM_OUT=str(out),
    )
    return _run_vim(MODEL_SESSION, vimrc, environment, folder, out)


def test_a_chat_document_counts_its_prompt_and_hovers_a_message_token_through_an_escape(vim_with_chat):
    report = vim_with_chat
    assert report["statusline"] == chat_count_pt()
    [hover] = report["hovers"]
    number, token = accented_token()
    assert f"ID {token.id}" in hover and f"token {number} de {chat_encoding().count}" in hover, hover
    assert "mensagem 1 (user)" in hover


# A token budget from the repository's .glassllm.toml (the file `glassllm tokens` reads in
# CI): a few tokens past the document's count, so appending a line passes it.
BUDGET_SESSION = Path(__file__).with_name("vim_budget_session.vim")
BUDGET = _count(TEXT) + 3
BUDGET_LINE = "E foram felizes para sempre."


@pytest.fixture(scope="module")
def vim_with_budget(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _require_vim_with_ale()
    folder = tmp_path_factory.mktemp("vim-budget")
    (folder / ".git").mkdir()
    (folder / ".glassllm.toml").write_text(f"maxTokens = {BUDGET}\n", encoding="utf-8")
    document = folder / "conto.txt"
    document.write_text(TEXT, encoding="utf-8", newline="")
    vimrc = _vimrc(folder)
    out = folder / "report.json"
    environment = portuguese_environment(
        folder, GLASSLLM_FILE=str(document), GLASSLLM_EDIT=BUDGET_LINE, GLASSLLM_OUT=str(out)
    )
    return _run_vim(BUDGET_SESSION, vimrc, environment, folder, out)


def test_a_budget_diagnostic_appears_past_the_budget_and_goes_when_back_under(vim_with_budget):
    typed = TEXT + BUDGET_LINE + "\n"
    total = _count(typed)
    assert vim_with_budget["statusline"] == f"{_count(TEXT)} / {BUDGET} tokens"
    assert vim_with_budget["under"] == []
    (over,) = vim_with_budget["over"]
    # The first token past the budget: on the appended line (line 3), where the library puts it.
    spans = [(number, span) for number in (1, 2, 3) for span in _line_spans(number, typed)]
    number, token = spans[BUDGET]
    line = typed.splitlines()[number - 1]
    assert (over["lnum"], over["col"]) == (number, _byte_column(line, token.start) + 1)
    assert over["end_col"] == _byte_column(line, token.end)
    assert over["type"] == "E"
    assert over["text"] == f"token {BUDGET + 1} de {BUDGET} — {total - BUDGET} a mais, português"
    assert vim_with_budget["over_statusline"] == f"{total} / {BUDGET} tokens"
    assert vim_with_budget["back"] == []
    assert vim_with_budget["back_statusline"] == vim_with_budget["statusline"]
