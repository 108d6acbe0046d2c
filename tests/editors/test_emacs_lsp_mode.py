"""glassllm in a real Emacs 30 through lsp-mode (Debian's elpa-lsp-mode 8.0) instead of eglot.

glassllm.el is installed with ``package-install-file`` into a fresh home; one batch Emacs
session (``emacs_lsp_mode_session.el``) sets ``glassllm-client`` to ``lsp-mode``, runs the
README's init lines, visits a Portuguese file with a decomposed accent, an emoji and a
character outside the alphabet, with ``LANG=pt_BR.UTF-8``, and records what lsp-mode
shows. Each test checks one part of that record against the library. Under ``CI=true`` a
missing Emacs or lsp-mode fails these tests (see ``emacs_setup.py``).
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
from editor_cases import CHAT_TEXT, accented_token, chat_count_pt, chat_encoding, slow_english
from editor_env import portuguese_environment
from emacs_setup import init_file, install_package, require_emacs, run_session

from glassllm import Tokenizer, packaged
from glassllm.pipeline.tokens import TokenSpan
from glassllm.shown.places import TextPlaces
from glassllm.tokenizer import UNK_ID

SESSION = Path(__file__).with_name("emacs_lsp_mode_session.el")
TOK = packaged("pt")
# Line 1: a decomposed accent (e + U+0301: NFC makes the pieces shorter than the text)
# and an umbrella outside the alphabet; line 2: an emoji (two UTF-16 units, unknown).
TEXT = "A menina cafe\u0301 sorriu sob o guarda-chuva \u2602.\nEra uma vez \U0001f642 na chuva, uma histo\u0301ria.\n"
LINES = TEXT.splitlines(keepends=True)
HOVER = TEXT.index("chuva,") + 1  # on the "h" of the second "chuva"
REGION = (TEXT.index("uma vez") + 1, TEXT.index("na chuva") + 5)  # cuts "▁uma" and "▁chuva"
INSERTED = "Ontem "


@pytest.fixture(scope="module")
def emacs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What one Emacs session with lsp-mode saw (see ``emacs_lsp_mode_session.el``)."""
    require_emacs("lsp-mode")
    folder = tmp_path_factory.mktemp("emacs-lsp-mode")
    install_package(folder)
    project = folder / "notes"
    project.mkdir()
    document = project / "conto.txt"
    document.write_text(TEXT, encoding="utf-8", newline="")
    out = folder / "report.json"
    environment = portuguese_environment(
        folder,
        GLASSLLM_INIT=str(init_file(folder, before="(setq glassllm-client 'lsp-mode)\n")),
        GLASSLLM_FILE=str(document),
        GLASSLLM_OUT=str(out),
        # Emacs positions count from 1.
        GLASSLLM_HOVER=str(HOVER + 1),
        GLASSLLM_REGION=f"{REGION[0] + 1} {REGION[1] + 1}",
        GLASSLLM_EDIT=base64.b64encode(INSERTED.encode()).decode(),
    )
    return run_session(SESSION, environment, out)


def _spans(text: str = TEXT) -> list[TokenSpan]:
    """Every token, each line tokenized alone as the server does, with offsets into ``text``."""
    found, offset = [], 0
    for line in text.splitlines(keepends=True):
        found += [
            TokenSpan(item.id, item.piece, offset + item.start, offset + item.end, item.chunk)
            for item in TOK.encode_spans(line)
        ]
        offset += len(line)
    return found


def _count(text: str, tokenizer: Tokenizer = TOK) -> int:
    """The server's count: each line tokenized alone, its line ending included."""
    return sum(len(tokenizer.encode_spans(line)) for line in text.splitlines(keepends=True))


def test_lsp_mode_runs_glassllm_alone_and_eglot_stays_unloaded(emacs):
    assert emacs["mode"] == "text-mode"
    assert emacs["glassllm_mode"] is True
    assert emacs["servers"] == ["glassllm"]
    assert emacs["eglot_loaded"] is None, "only the chosen client is loaded"
    assert emacs["semantic_tokens"] is True


def test_every_piece_carries_its_alternating_semantic_face(emacs):
    # Bands alternate string/keyword along each line, from its first token; the line
    # ending gets none, nor a piece that NFC left without characters of its own. Line 2
    # has an emoji: lsp-mode counts it as one character, and the server too, since
    # glassllm's lsp-mode client asks for UTF-32 positions.
    expected, offset = [], 0
    for line in LINES:
        content = len(line.rstrip("\n"))
        pieces = [item for item in TOK.encode_spans(line) if item.start < item.end <= content]
        expected += [
            [offset + item.start, offset + item.end, "lsp-face-semhl-keyword" if index % 2 else "lsp-face-semhl-string"]
            for index, item in enumerate(pieces)
        ]
        offset += len(line)
    assert emacs["faces"] == expected


def test_the_diagnostics_cover_the_unknown_characters_in_portuguese(emacs):
    unknown = [item for item in _spans() if item.id == UNK_ID]
    assert [TEXT[item.start : item.end] for item in unknown] == ["\u2602", "\U0001f642"]
    diagnostics = emacs["diagnostics"]
    assert [(start, end) for start, end, _, _ in diagnostics] == [(item.start, item.end) for item in unknown]
    assert emacs["checker"] == "flymake"
    for (_, _, kind, message), item in zip(diagnostics, unknown, strict=True):
        assert kind == ":note"  # LSP Information
        assert message.startswith(
            f"'{TEXT[item.start : item.end]}' não está no alfabeto do tokenizador português: vira <unk> (id 1)"
        )


def test_the_hover_is_the_library_token_at_point_in_portuguese(emacs):
    token = next(item for item in _spans() if item.start <= HOVER < item.end)
    where = TextPlaces(TEXT).span(token.start, token.end)
    index = _spans().index(token)
    # lsp-mode renders the Markdown: no ** or backticks left.
    assert emacs["hover"].startswith(f"{token.piece} · ID {token.id} · em {where} · índice {index} no documento")
    assert "**" not in emacs["hover"] and "`" not in emacs["hover"]
    assert "Tokenizador: português (pt)" in emacs["hover"]


def test_the_mode_line_counts_the_library_tokens_and_follows_an_edit(emacs):
    assert emacs["count"] == f"{_count(TEXT)} tokens"
    assert emacs["edited_text"] == INSERTED + TEXT
    assert emacs["edited_count"] == f"{_count(INSERTED + TEXT)} tokens"


def test_c_c_g_e_on_a_region_opens_the_explanation_beside_the_text(emacs):
    assert emacs["key"] == "glassllm-explain"
    assert emacs["page_shown"] is True
    assert emacs["page_served"] is None, "the page is for reading: glassllm does not tokenize it"
    page = emacs["page"]
    where = TextPlaces(TEXT).span(REGION[0], REGION[1])
    assert page.startswith(f"# Explicar fusões BPE\n\nconto.txt, seleção {where} · tokenizador: português (pt)\n"), (
        page[:200]
    )
    touched = {
        item.chunk
        for item in _spans()
        if item.start < REGION[1] and REGION[0] < item.end and item.start >= len(LINES[0])
    }
    expected = [item.id for item in _spans() if item.start >= len(LINES[0]) and item.chunk in touched]
    shown = [
        int(i) for row in re.findall(r"^Tokens \(ID\): (.*)$", page, flags=re.M) for i in re.findall(r"\((\d+)", row)
    ]
    assert shown == expected
    # The server also sent the page as a message (lsp-mode opens no documents for it):
    # it is not echoed, the page buffer shows it.
    assert "Explicar fusões BPE" not in emacs["messages"]


# A real model's tokenizer (Llama 3's byte-level tokenizer.json) named in
# `glassllm-settings`: nothing else to configure.
MODEL_SESSION = Path(__file__).with_name("emacs_lsp_mode_model_session.el")


def _lsp_mode_with_tokenizer(folder: Path, tokenizer: Path, count: int) -> dict[str, Any]:
    """What an Emacs session with lsp-mode whose settings name ``tokenizer`` saw (see
    ``emacs_lsp_mode_model_session.el``), once its mode line shows ``count`` tokens."""
    require_emacs("lsp-mode")
    install_package(folder)
    project = folder / "notes"
    project.mkdir()
    document = project / "conto.txt"
    document.write_text(TEXT, encoding="utf-8", newline="")
    out = folder / "report.json"
    before = f"(setq glassllm-client 'lsp-mode)\n(setq glassllm-settings '(:tokenizer {json.dumps(str(tokenizer))}))\n"
    environment = portuguese_environment(
        folder,
        GLASSLLM_INIT=str(init_file(folder, before=before)),
        GLASSLLM_FILE=str(document),
        GLASSLLM_OUT=str(out),
        GLASSLLM_HOVER=str(HOVER + 1),
        GLASSLLM_REGION=f"{REGION[0] + 1} {REGION[1] + 1}",
        GLASSLLM_COUNT=f"{count} tokens",
    )
    return run_session(MODEL_SESSION, environment, out)


@pytest.fixture(scope="module")
def lsp_mode_with_model(tmp_path_factory: pytest.TempPathFactory, llama_file: Path, llama) -> dict[str, Any]:
    """What an Emacs session with lsp-mode and Llama 3's tokenizer saw."""
    return _lsp_mode_with_tokenizer(
        tmp_path_factory.mktemp("emacs-lsp-mode-model"), llama_file, len(llama.encode(TEXT))
    )


def test_the_mode_line_counts_the_model_tokens(lsp_mode_with_model, llama):
    assert lsp_mode_with_model["count"] == f"{len(llama.encode(TEXT))} tokens"


def test_the_hover_on_line_2_gives_the_model_id_and_readable_piece(lsp_mode_with_model, llama):
    (token,) = [span for span in llama.encode_spans(TEXT) if span.start <= HOVER < span.end]
    hover = lsp_mode_with_model["hover"]
    # Llama 3 writes the space as Ġ in its file; the hover shows it as glassllm shows its own.
    assert token.piece.startswith("Ġ") and llama.readable(token.piece).startswith("▁")
    assert hover.startswith(f"{llama.readable(token.piece)} · ID {token.id} · "), hover


def test_c_c_g_e_explains_the_model_chunks_the_region_touches(lsp_mode_with_model, llama):
    page = lsp_mode_with_model["page"]
    touched = [chunk for chunk in llama.explain(TEXT) if chunk.start < REGION[1] and REGION[0] < chunk.end]
    shown = [
        int(i) for row in re.findall(r"^Tokens \(ID\): (.*)$", page, flags=re.M) for i in re.findall(r"\((\d+)", row)
    ]
    assert shown == [token_id for chunk in touched for token_id in chunk.ids], page


# A tokenizer file that loads slowly (tests/editors/editor_cases.py).


@pytest.fixture(scope="module")
def lsp_mode_with_slow_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("emacs-lsp-mode-slow")
    with slow_english(folder) as fifo:
        return _lsp_mode_with_tokenizer(folder, fifo, _count(TEXT, packaged("en")))


def test_the_mode_line_follows_a_tokenizer_that_loads_after_the_wait(lsp_mode_with_slow_tokenizer):
    english = _count(TEXT, packaged("en"))
    assert _count(TEXT) != english
    assert lsp_mode_with_slow_tokenizer["first_count"] == f"{_count(TEXT)} tokens"
    assert lsp_mode_with_slow_tokenizer["count"] == f"{english} tokens"
    assert lsp_mode_with_slow_tokenizer["edited"] is False


# The chat document (tests/editors/editor_cases.py), js-json-mode added to glassllm-modes.


@pytest.fixture(scope="module")
def lsp_mode_with_chat(tmp_path_factory: pytest.TempPathFactory, llama_file: Path) -> dict[str, Any]:
    require_emacs("lsp-mode")
    folder = tmp_path_factory.mktemp("emacs-lsp-mode-chat")
    install_package(folder)
    project = folder / "notes"
    project.mkdir()
    document = project / "chat.json"
    document.write_text(CHAT_TEXT, encoding="utf-8", newline="")
    out = folder / "report.json"
    before = (
        "(setq glassllm-client 'lsp-mode)\n"
        f"(setq glassllm-settings '(:tokenizer {json.dumps(str(llama_file))}))\n"
        "(setq glassllm-modes '(text-mode markdown-mode gfm-mode js-json-mode))\n"
    )
    brief = CHAT_TEXT.index("Be brief")
    environment = portuguese_environment(
        folder,
        GLASSLLM_INIT=str(init_file(folder, before=before)),
        GLASSLLM_FILE=str(document),
        GLASSLLM_OUT=str(out),
        GLASSLLM_HOVER=str(CHAT_TEXT.index("\\u00e9") + 3),  # inside the escape, 1-based
        GLASSLLM_REGION=f"{brief + 1} {brief + 9}",
        GLASSLLM_COUNT=chat_count_pt(),
    )
    return run_session(MODEL_SESSION, environment, out)


def test_a_chat_document_counts_its_prompt_and_hovers_a_message_token_through_an_escape(lsp_mode_with_chat):
    report = lsp_mode_with_chat
    assert report["count"] == chat_count_pt()
    number, token = accented_token()
    hover = report["hover"]
    assert f"ID {token.id}" in hover and f"token {number} de {chat_encoding().count}" in hover, hover
    assert "mensagem 1 (user)" in hover


# A token budget from the repository's pyproject.toml ([tool.glassllm], the table
# `glassllm tokens` reads in CI), a few tokens past the document's count, so appending a
# line passes it.
BUDGET_SESSION = Path(__file__).with_name("emacs_budget_session.el")
BUDGET = _count(TEXT) + 3
BUDGET_LINE = "E foram felizes para sempre.\n"


@pytest.fixture(scope="module")
def emacs_with_budget(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    require_emacs("lsp-mode")
    folder = tmp_path_factory.mktemp("emacs-lsp-mode-budget")
    install_package(folder)
    project = folder / "notes"
    project.mkdir()
    (project / ".git").mkdir()
    (project / "pyproject.toml").write_text(
        f'[project]\nname = "notes"\n\n[tool.glassllm]\nmaxTokens = {BUDGET}\n', encoding="utf-8"
    )
    document = project / "conto.txt"
    document.write_text(TEXT, encoding="utf-8", newline="")
    out = folder / "report.json"
    environment = portuguese_environment(
        folder,
        GLASSLLM_INIT=str(init_file(folder, before="(setq glassllm-client 'lsp-mode)\n")),
        GLASSLLM_FILE=str(document),
        GLASSLLM_EDIT=base64.b64encode(BUDGET_LINE.encode()).decode(),
        GLASSLLM_OUT=str(out),
    )
    return run_session(BUDGET_SESSION, environment, out)


def test_a_budget_diagnostic_appears_past_the_budget_and_goes_when_back_under(emacs_with_budget):
    typed = TEXT + BUDGET_LINE
    total = _count(typed)
    token = _spans(typed)[BUDGET]
    assert emacs_with_budget["client"] == "lsp-mode"
    assert emacs_with_budget["count"] == f"{_count(TEXT)} / {BUDGET} tokens"
    assert emacs_with_budget["under"] == []
    (over,) = emacs_with_budget["over"]
    assert over == [
        token.start,
        token.end,
        ":error",
        f"token {BUDGET + 1} de {BUDGET} — {total - BUDGET} a mais, português",
    ]
    assert emacs_with_budget["over_count"] == f"{total} / {BUDGET} tokens"
    assert emacs_with_budget["back"] == []
    assert emacs_with_budget["back_count"] == emacs_with_budget["count"]
