"""GlassLLM in a real Emacs (30.x, its built-in eglot), set up as the README says.

glassllm.el is installed with ``package-install-file`` into a fresh home; one batch Emacs
session (``emacs_session.el``) then runs the README's init lines, visits a
Portuguese file with a decomposed accent, an emoji and a character outside the alphabet,
with ``LANG=pt_BR.UTF-8`` (eglot sends no locale), and records what eglot got. Each test
checks one part of that record against the library. Under ``CI=true`` a missing Emacs
fails these tests (see ``emacs_setup.py``).
"""

from __future__ import annotations

import base64
import html
import itertools
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
from editor_cases import CHAT_TEXT, accented_token, chat_count_pt, chat_encoding, slow_english
from editor_env import portuguese_environment
from emacs_setup import init_file, install_package, require_emacs, run_session, server_command

from glassllm import Tokenizer, packaged
from glassllm.pipeline.tokens import TokenSpan
from glassllm.shown.places import TextPlaces, span
from glassllm.shown.visible import visible
from glassllm.tokenizer import UNK_ID
from glassllm_server.settings import parse_settings

REPO = Path(__file__).resolve().parents[2]
SESSION = Path(__file__).with_name("emacs_session.el")
TOK = packaged("pt")
# "café" and "história" with a decomposed accent (e + U+0301, o + U+0301: NFC composes
# them, so the tokenizer's pieces are shorter than the text), an emoji (two UTF-16 units,
# unknown) and an umbrella outside the alphabet.
TEXT = "A menina cafe\u0301 sorriu \U0001f642 sob o guarda-chuva \u2602.\nEra uma vez, na chuva, uma histo\u0301ria.\n"
HOVER = TEXT.index("\u0301")  # on the combining accent itself
REGION = (TEXT.index("na chuva"), TEXT.index("histo") + 2)  # cuts "▁história"
INSERTED, HOVER_AFTER_EDIT = "Ontem ", 2  # at the start of the file; then on "nte"


@pytest.fixture(scope="module")
def emacs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What one Emacs session saw (see ``emacs_session.el``), glassllm.el installed as
    the README says."""
    require_emacs("markdown-mode")
    folder = tmp_path_factory.mktemp("emacs")
    install_package(folder)
    document = folder / "conto.txt"
    document.write_text(TEXT, encoding="utf-8", newline="")
    out = folder / "report.json"
    environment = portuguese_environment(
        folder,
        GLASSLLM_INIT=str(init_file(folder)),
        GLASSLLM_FILE=str(document),
        GLASSLLM_OUT=str(out),
        # Emacs positions count from 1.
        GLASSLLM_HOVER=str(HOVER + 1),
        GLASSLLM_REGION=f"{REGION[0] + 1} {REGION[1] + 1}",
        GLASSLLM_EDIT=f"1 {base64.b64encode(INSERTED.encode()).decode()} {HOVER_AFTER_EDIT + 1}",
    )
    return run_session(SESSION, environment, out)


def _spans_by_line(text: str) -> list[tuple[int, list[TokenSpan]]]:
    """Each line's token spans, the line tokenized alone as the server does, with the
    offset where the line starts."""
    found, offset = [], 0
    for line in text.splitlines(keepends=True):
        found.append((offset, TOK.encode_spans(line)))
        offset += len(line)
    return found


def _content_length(text: str, start: int) -> int:
    """How many characters the line starting at ``start`` has before its line ending."""
    return len(text[start:].splitlines()[0])


def _token_at(text: str, offset: int) -> TokenSpan:
    for start, spans in _spans_by_line(text):
        for item in spans:
            if start + item.start <= offset < start + item.end:
                return TokenSpan(item.id, item.piece, start + item.start, start + item.end, item.chunk)
    raise AssertionError(f"no token at {offset}")


def test_the_readme_setup_runs_in_emacs_30_with_eglot_in_utf_32(emacs):
    assert emacs["mode"] == "text-mode"
    assert emacs["encoding"] == "utf-32"
    assert emacs["key"] == "glassllm-explain"
    assert emacs["markdown_mode"] is True


def test_glassllm_el_starts_the_server_for_text_and_markdown_with_settings_it_accepts(emacs):
    assert emacs["default_command"] == ["glassllm-lsp"]
    assert {"text-mode", "markdown-mode"} <= set(emacs["modes"])
    # eglot finds glassllm's entry first for each of its modes (the README set the command).
    assert emacs["programs"] == {mode: server_command() for mode in emacs["modes"]}
    settings, problems = parse_settings(emacs["workspace_configuration"]["glassllm"])
    assert problems == [] and settings.tokenizer == "pt"


def test_the_hover_is_the_library_token_under_the_cursor_rendered_in_portuguese(emacs):
    token = _token_at(TEXT, HOVER)
    hover = emacs["hover"]
    assert hover["range"] == [token.start, token.end]
    assert "\u0301" in TEXT[token.start : token.end]
    where = TextPlaces(TEXT).span(token.start, token.end)
    assert hover["raw"].startswith(f"**`{token.piece}`** · ID {token.id} · em {where} · índice ")
    # markdown-mode renders it: no ** or backticks left in what eldoc shows.
    assert hover["eldoc"].startswith(f"{token.piece} · ID {token.id} · em {where} · ")
    assert "**" not in hover["eldoc"] and "`" not in hover["eldoc"]
    assert "Tokenizador: português (pt)" in hover["eldoc"]


def test_every_inlay_hint_is_a_chunk_boundary_or_a_space_marker_of_the_library(emacs):
    expected = []
    for start, spans in _spans_by_line(TEXT):
        content = _content_length(TEXT, start)
        for before, after in itertools.pairwise(spans):
            if after.chunk != before.chunk and after.start < content and after.start != after.end:
                expected.append([start + after.start, "¦"])
        expected += [[start + column + 1, "▁"] for column in range(content) if TEXT[start + column] == " "]
    assert len(emacs["hints"]) == len(expected)
    assert sorted(emacs["hints"]) == sorted(expected)


def test_the_diagnostics_cover_exactly_the_unknown_characters(emacs):
    unknown = [
        (start + item.start, start + item.end)
        for start, spans in _spans_by_line(TEXT)
        for item in spans
        if item.id == UNK_ID
    ]
    assert [TEXT[a:b] for a, b in unknown] == ["\U0001f642", "\u2602"]
    assert [(a, b) for a, b, _, _ in emacs["diagnostics"]] == unknown
    for (_, _, kind, message), character in zip(emacs["diagnostics"], ("\U0001f642", "\u2602"), strict=False):
        assert kind == "eglot-note"  # LSP Information
        assert message.startswith(
            f"glassllm [unknown-character]: '{character}' não está no alfabeto do tokenizador português:"
            " vira <unk> (id 1)"
        )


def _region_chunks() -> tuple[int, dict[int, list[TokenSpan]]]:
    """The region's line start, and the tokens of each chunk the region touches (whole,
    even where the region cuts the chunk), by chunk."""
    line_start, spans = _spans_by_line(TEXT)[1]
    touched = {
        item.chunk for item in spans if line_start + item.start < REGION[1] and REGION[0] < line_start + item.end
    }
    chunks: dict[int, list[TokenSpan]] = {}
    for item in spans:
        if item.chunk in touched:
            chunks.setdefault(item.chunk, []).append(item)
    return line_start, chunks


def test_c_c_g_e_on_a_region_opens_the_explanation_of_every_chunk_it_touches(emacs):
    page = emacs["page"]
    assert emacs["page_shown"] is True
    lines = TextPlaces(TEXT)
    first, last = lines.point(REGION[0]), lines.point(REGION[1] - 1)
    assert page.startswith(
        f"# Explicar fusões BPE\n\nconto.txt, seleção {span(first, last)} · tokenizador: português (pt)\n"
    )
    assert "contadas a partir de 1" in page
    line_start, chunks = _region_chunks()
    assert len(chunks) == 5
    shown_ids = [
        int(i) for row in re.findall(r"^Tokens \(ID\): (.*)$", page, flags=re.M) for i in re.findall(r"\((\d+)", row)
    ]
    assert shown_ids == [item.id for items in chunks.values() for item in items]
    for items in chunks.values():
        chunk_start, chunk_end = line_start + items[0].start, line_start + items[-1].end
        assert f"Em {lines.span(chunk_start, chunk_end)}." in page
    # The last chunk, "▁história", is cut by the region: the page says so.
    assert "A seleção cobre só `▁hi` deste trecho" in page


def test_c_c_g_c_on_a_region_compares_the_tokenizers_chunk_by_chunk(emacs):
    assert emacs["compare_key"] == "glassllm-compare"
    page = emacs["compare_page"]
    lines = TextPlaces(TEXT)
    first, last = lines.point(REGION[0]), lines.point(REGION[1] - 1)
    assert page.startswith(f"# Comparar tokenizadores\n\nconto.txt, seleção {span(first, last)}\n")
    assert "| português (pt) | inglês (en) |" in page
    line_start, chunks = _region_chunks()
    for items in chunks.values():
        # Each chunk's own pieces under the tokenizer in use, and where it is.
        assert f"Em {lines.span(line_start + items[0].start, line_start + items[-1].end)}." in page
        assert " ".join(f"`{item.piece}` ({item.id})" for item in items if item.id != UNK_ID) in page


def test_c_c_g_capital_e_opens_the_explanation_in_the_browser_as_one_html_page(emacs):
    assert emacs["browser_key"] == "glassllm-explain-in-browser"
    (url,) = emacs["browser_urls"]
    path = Path(unquote(urlparse(url).path))
    assert url.startswith("file://") and path.parent.name == "glassllm" and path.suffix == ".html", url
    page = path.read_text(encoding="utf-8")
    assert '<html lang="pt-BR">' in page  # eglot sends no locale: the environment's
    _, chunks = _region_chunks()
    expected = [(item.id, visible(item.piece)) for items in chunks.values() for item in items]
    found = [(int(i), html.unescape(p)) for i, p in re.findall(r'data-id="(\d+)" data-piece="([^"]*)"', page)]
    assert found == expected


def test_m_x_glassllm_token_map_opens_the_map_of_the_project_in_the_browser(emacs):
    (url,) = emacs["token_map_urls"]
    path = Path(unquote(urlparse(url).path))
    assert path.parent.name == "glassllm" and path.name.startswith("tokens-"), url
    page = path.read_text(encoding="utf-8")
    assert '<html lang="pt-BR">' in page and '<span class="name">conto.txt</span>' in page
    assert f"{len(TOK.encode(TEXT)):,} pt".replace(",", ".") in page  # the file as saved


def _count(text: str, tokenizer: Tokenizer = TOK) -> int:
    """The server's count: each line tokenized alone, its line ending included."""
    return sum(len(tokenizer.encode_spans(line)) for line in text.splitlines(keepends=True))


def test_the_mode_line_counts_the_library_tokens_and_follows_an_edit(emacs):
    assert emacs["count"] == f"{_count(TEXT)} tokens"
    assert emacs["edited_count"] == f"{_count(INSERTED + TEXT)} tokens"


def test_an_edit_then_a_hover_sees_the_new_text(emacs):
    edited = INSERTED + TEXT
    assert emacs["edited_text"] == edited
    token = _token_at(edited, HOVER_AFTER_EDIT)
    assert emacs["edited_hover"]["range"] == [token.start, token.end]
    assert emacs["edited_hover"]["raw"].startswith(f"**`{token.piece}`** · ID {token.id} · em 1:")
    assert f"Trecho `{INSERTED.strip()}`" in emacs["edited_hover"]["raw"]


# A real model's tokenizer (Mistral 7B's SentencePiece BPE, byte fallback and no NFC),
# named in `glassllm-settings` before the README's lines: nothing else to configure.
MODEL_SESSION = Path(__file__).with_name("emacs_model_session.el")
# On "menina", on the combining accent, on the emoji (its four UTF-8 bytes are byte
# fallback pieces) and on line 2's "história".
MODEL_HOVERS = (TEXT.index("menina") + 2, HOVER, TEXT.index("\U0001f642"), TEXT.index("histo") + 1)


def _emacs_with_tokenizer(folder: Path, settings: str, count: int) -> dict[str, Any]:
    """What an Emacs session whose ``settings`` (Elisp, before the README's lines) name a
    tokenizer saw (see ``emacs_model_session.el``), once its mode line shows ``count`` tokens."""
    require_emacs("markdown-mode")
    install_package(folder)
    document = folder / "conto.txt"
    document.write_text(TEXT, encoding="utf-8", newline="")
    out = folder / "report.json"
    environment = portuguese_environment(
        folder,
        GLASSLLM_INIT=str(init_file(folder, before=settings)),
        GLASSLLM_FILE=str(document),
        GLASSLLM_OUT=str(out),
        GLASSLLM_HOVERS=" ".join(str(offset + 1) for offset in MODEL_HOVERS),
        GLASSLLM_REGION=f"{REGION[0] + 1} {REGION[1] + 1}",
        GLASSLLM_COUNT=f"{count} tokens",
    )
    return run_session(MODEL_SESSION, environment, out)


@pytest.fixture(scope="module")
def emacs_with_model(tmp_path_factory: pytest.TempPathFactory, mistral_file: Path, mistral) -> dict[str, Any]:
    """What an Emacs session whose settings name Mistral's tokenizer saw."""
    settings = f'(setq glassllm-settings \'(:tokenizer {json.dumps(str(mistral_file))} :compareWith ["pt"]))\n'
    return _emacs_with_tokenizer(tmp_path_factory.mktemp("emacs-model"), settings, len(mistral.encode(TEXT)))


def test_a_model_tokenizer_named_in_the_settings_reaches_the_server(emacs_with_model, mistral_file):
    settings, problems = parse_settings(emacs_with_model["workspace_configuration"]["glassllm"])
    assert problems == [] and settings.tokenizer == str(mistral_file)


def test_the_mode_line_counts_the_model_tokens(emacs_with_model, mistral):
    assert emacs_with_model["count"] == f"{len(mistral.encode(TEXT))} tokens"


@pytest.mark.parametrize("index", range(len(MODEL_HOVERS)))
def test_the_hover_gives_the_model_ids_and_readable_pieces(emacs_with_model, mistral, index):
    offset = MODEL_HOVERS[index]
    under = [span for span in mistral.encode_spans(TEXT) if span.start <= offset < span.end]
    hover = emacs_with_model["hovers"][index]
    # A character split over several tokens is covered by each: the hover names them all.
    for token in under:
        assert f"ID {token.id}" in hover["raw"], hover["raw"]
        assert mistral.readable(token.piece) in hover["eldoc"], hover["eldoc"]
    assert hover["range"][0] <= offset < hover["range"][1]
    assert tuple(hover["range"]) in {(token.start, token.end) for token in under}
    assert "**" not in hover["eldoc"]


def test_c_c_g_c_compares_the_model_with_the_packaged_tokenizer(emacs_with_model, mistral):
    page = emacs_with_model["compare_page"]
    assert page.startswith("# Comparar tokenizadores\n")
    assert "português (pt)" in page
    touched = [chunk for chunk in mistral.explain(TEXT) if chunk.start < REGION[1] and REGION[0] < chunk.end]
    assert touched
    for chunk in touched:
        for step in chunk.steps:
            assert f"`{mistral.readable(step.result)}`" in page, step


# A tokenizer file that loads slowly (tests/editors/editor_cases.py).


@pytest.fixture(scope="module")
def emacs_with_slow_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("emacs-slow")
    with slow_english(folder) as fifo:
        settings = f"(setq glassllm-settings '(:tokenizer {json.dumps(str(fifo))}))\n"
        return _emacs_with_tokenizer(folder, settings, _count(TEXT, packaged("en")))


def test_the_mode_line_follows_a_tokenizer_that_loads_after_the_wait(emacs_with_slow_tokenizer):
    english = _count(TEXT, packaged("en"))
    assert _count(TEXT) != english
    assert emacs_with_slow_tokenizer["first_count"] == f"{_count(TEXT)} tokens"
    assert emacs_with_slow_tokenizer["count"] == f"{english} tokens"
    assert emacs_with_slow_tokenizer["edited"] is False


# The chat document (tests/editors/editor_cases.py): Emacs visits it in js-json-mode, added to
# glassllm-modes.


@pytest.fixture(scope="module")
def emacs_with_chat(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What an Emacs session saw of chat.json (see ``emacs_model_session.el``), once its
    mode line shows the prompt's count with the template's share."""
    from tests.library.formats.fixtures import model_file

    require_emacs("markdown-mode")
    folder = tmp_path_factory.mktemp("emacs-chat")
    install_package(folder)
    document = folder / "chat.json"
    document.write_text(CHAT_TEXT, encoding="utf-8", newline="")
    settings = (
        f"(setq glassllm-settings '(:tokenizer {json.dumps(str(model_file('llama3')))}))\n"
        "(setq glassllm-modes '(text-mode markdown-mode gfm-mode js-json-mode))\n"
    )
    brief = CHAT_TEXT.index("Be brief")
    out = folder / "report.json"
    environment = portuguese_environment(
        folder,
        GLASSLLM_INIT=str(init_file(folder, before=settings)),
        GLASSLLM_FILE=str(document),
        GLASSLLM_OUT=str(out),
        GLASSLLM_HOVERS=str(CHAT_TEXT.index("\\u00e9") + 3),  # inside the escape, 1-based
        GLASSLLM_REGION=f"{brief + 1} {brief + 9}",
        GLASSLLM_COUNT=chat_count_pt(),
    )
    return run_session(MODEL_SESSION, environment, out)


def test_a_chat_document_counts_its_prompt_and_hovers_a_message_token_through_an_escape(emacs_with_chat):
    report = emacs_with_chat
    assert report["count"] == chat_count_pt()
    [hover] = report["hovers"]
    number, token = accented_token()
    raw = hover["raw"]
    assert f"ID {token.id}" in raw and f"token {number} de {chat_encoding().count}" in raw, raw
    assert "mensagem 1 (user)" in hover["raw"]
    start, end = hover["range"]
    assert "\\u00e9" in CHAT_TEXT[start:end], CHAT_TEXT[start:end]


# A token budget in glassllm-settings (:maxTokens), a few tokens past the document's
# count, so appending a line passes it.
BUDGET_SESSION = Path(__file__).with_name("emacs_budget_session.el")
BUDGET_LINE = "E foram felizes para sempre.\n"
BUDGET = _count(TEXT) + 3


@pytest.fixture(scope="module")
def emacs_with_budget(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    require_emacs()
    folder = tmp_path_factory.mktemp("emacs-budget")
    install_package(folder)
    init = init_file(folder)
    init.write_text(
        init.read_text(encoding="utf-8") + f'(setq glassllm-settings \'(:tokenizer "pt" :maxTokens {BUDGET}))\n',
        encoding="utf-8",
    )
    document = folder / "conto.txt"
    document.write_text(TEXT, encoding="utf-8", newline="")
    out = folder / "report.json"
    environment = portuguese_environment(
        folder,
        GLASSLLM_INIT=str(init),
        GLASSLLM_FILE=str(document),
        GLASSLLM_EDIT=base64.b64encode(BUDGET_LINE.encode()).decode(),
        GLASSLLM_OUT=str(out),
    )
    return run_session(BUDGET_SESSION, environment, out)


def test_a_budget_diagnostic_appears_past_the_budget_and_goes_when_back_under(emacs_with_budget):
    typed = TEXT + BUDGET_LINE
    total = _count(typed)
    tokens = [(start + item.start, start + item.end) for start, spans in _spans_by_line(typed) for item in spans]
    assert emacs_with_budget["client"] == "eglot"
    assert emacs_with_budget["count"] == f"{_count(TEXT)} / {BUDGET} tokens"
    assert emacs_with_budget["under"] == []
    (over,) = emacs_with_budget["over"]
    assert over[:3] == [*tokens[BUDGET], "eglot-error"]  # LSP Error
    assert over[3] == f"glassllm [token-budget]: token {BUDGET + 1} de {BUDGET} — {total - BUDGET} a mais, português"
    assert emacs_with_budget["over_count"] == f"{total} / {BUDGET} tokens"
    assert emacs_with_budget["back"] == []
    assert emacs_with_budget["back_count"] == emacs_with_budget["count"]
