"""The pages of `glassllm inspect|compare|explain --html`, opened in a real Chromium.

Debian's Chromium, driven by Playwright (as the VS Code tests drive it), opens each page
as a user's browser opens a file: offline, at a desktop's and a phone's width, in a light
and a dark scheme. The tests move through the pieces with the keyboard, hover and tap
them, and read the tooltip; every expected value comes from the library itself
(`encode_spans`, `derivation`, `explain`). With GLASSLLM_CAPTURE=1 they also write the
README's screenshots to docs/images/.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import glassllm
from glassllm import packaged
from glassllm.shown import html_page
from glassllm.tokenizer import UNK_ID

REPO = Path(__file__).resolve().parents[3]
CAPTURES = REPO / "docs" / "images"
CAPTURE = os.environ.get("GLASSLLM_CAPTURE") == "1"
# A line break, an accent written as e + U+0301 (NFC joins them), an emoji the tokenizer
# does not know, and words both tokenizers split their own way.
TEXT = "Era uma vez uma menina.\nO avô comeu pão quente e\u0301 🙂"
COMPARED = "A menina comeu pão quente com o avô."
WIDE = {"width": 1200, "height": 800}
NARROW = {"width": 390, "height": 844}  # a phone


def glassllm_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "glassllm.cli", *args], capture_output=True, text=True, timeout=120, env=env
    )


def _page_file(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Path:
    page = tmp_path / f"{args[0]}-{len(list(tmp_path.iterdir()))}.html"
    result = glassllm_cli(*args, "--html", str(page), env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{page}: {args[0]} page")
    return page


def _chain(tokenizer: glassllm.Tokenizer, piece: str) -> str:
    """The merge chain as the page writes it: ``▁men ← ▁m + en ← ▁ + m ← e + n``."""
    steps = tokenizer.derivation(piece)
    if not steps:
        return ""
    return " ← ".join([steps[0][0], *(f"{left} + {right}" for _, left, right in steps)])


# --- without a browser: the command and the page's language ---------------------------


def test_the_language_follows_the_locale_unless_lang_is_given(tmp_path):
    base = {key: value for key, value in os.environ.items() if not key.startswith("LC_") and key != "LANG"}
    portuguese = _page_file(tmp_path, "inspect", "menina", env={**base, "LANG": "pt_BR.UTF-8"})
    assert '<html lang="pt-BR">' in portuguese.read_text(encoding="utf-8")
    assert "Tokens de um texto" in portuguese.read_text(encoding="utf-8")
    # LC_ALL wins over LANG, as for every program that reads the locale.
    english = _page_file(tmp_path, "inspect", "menina", env={**base, "LANG": "pt_BR.UTF-8", "LC_ALL": "en_US.UTF-8"})
    assert '<html lang="en">' in english.read_text(encoding="utf-8")
    chosen = _page_file(tmp_path, "compare", "menina", "--lang", "pt", env={**base, "LANG": "en_US.UTF-8"})
    assert "Comparar tokenizadores" in chosen.read_text(encoding="utf-8")


def test_the_page_holds_everything_and_forbids_every_request(tmp_path):
    html = _page_file(tmp_path, "explain", "menina").read_text(encoding="utf-8")
    assert "default-src 'none'" in html
    assert not re.search(r"""(src|href)\s*=\s*["']""", html), "the page loads nothing"
    assert "http://" not in html and "https://" not in html


def test_a_note_goes_under_the_title_as_plain_text():
    # The language server says there where the page's text comes from.
    note = "conto.md, selection 1:1–1:6 <b>&"
    page = html_page.compare_page("menina", {"pt": packaged("pt"), "en": packaged("en")}, "en", note)
    assert (
        '<h1>Compare tokenizers</h1><p class="note">conto.md, selection 1:1–1:6 &lt;b&gt;&amp;</p><p class="help">'
        in page
    )
    assert '<h1>Tokens of a text</h1><p class="help">' in html_page.inspect_page("menina", "pt", packaged("pt"), "en")


def test_a_tokenizer_that_does_not_load_is_a_clear_error(tmp_path):
    result = glassllm_cli("inspect", "menina", "-t", str(tmp_path / "nowhere.json"), "--html", str(tmp_path / "p.html"))
    assert result.returncode == 1
    assert "nowhere.json" in result.stderr
    assert not (tmp_path / "p.html").exists()


# --- in Chromium ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    missing = []
    if shutil.which("chromium") is None:
        missing.append("chromium (editors/setup.sh installs it)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing.append("playwright (the test extra)")
    if missing:
        pytest.skip(f"missing {', '.join(missing)}")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=shutil.which("chromium"))
        yield launched
        launched.close()


class Page:
    """A page opened from its file, and every request it made."""

    def __init__(self, browser: Any, file: Path, viewport: dict[str, int], scheme: str = "light") -> None:
        # A phone's width comes with a touch screen, so a test can tap.
        touch = viewport == NARROW
        self.context = browser.new_context(viewport=viewport, color_scheme=scheme, has_touch=touch)
        self.requests: list[str] = []
        self.context.on("request", lambda request: self.requests.append(request.url))
        self.page = self.context.new_page()
        self.page.set_default_timeout(10_000)
        self.url = file.as_uri()
        self.page.goto(self.url)

    def tokens(self, tokenizer: str | None = None) -> list[dict[str, str]]:
        selector = ".tok" if tokenizer is None else f'.text[data-tokenizer="{tokenizer}"] .tok'
        return self.page.eval_on_selector_all(
            selector,
            "tokens => tokens.map(t => ({...t.dataset, text: t.textContent, label: t.getAttribute('aria-label')}))",
        )

    def focused(self) -> str | None:
        return self.page.evaluate("document.activeElement && document.activeElement.dataset.index || null")

    def tip(self) -> str:
        tip = self.page.locator("#tip")
        assert tip.is_visible()
        return tip.inner_text()

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def open_page(browser) -> Iterator[Any]:
    pages: list[Page] = []

    def opener(file: Path, viewport: dict[str, int] = WIDE, scheme: str = "light") -> Page:
        pages.append(Page(browser, file, viewport, scheme))
        return pages[-1]

    yield opener
    for page in pages:
        # Nothing but the file itself: no font, no script, no image, no beacon.
        assert page.requests == [page.url], page.requests
        page.close()


def test_keyboard_reaches_every_token_and_its_tooltip_shows_the_library_s_id_and_merges(tmp_path, open_page):
    tokenizer = packaged("pt")
    spans = tokenizer.encode_spans(TEXT)
    view = open_page(_page_file(tmp_path, "inspect", TEXT, "--lang", "en"))
    assert len(view.tokens()) == len(spans)
    for index, span in enumerate(spans):
        view.page.keyboard.press("Tab")
        assert view.focused() == str(index), f"Tab #{index + 1} did not reach token {index}"
        tip = view.tip()
        assert f"ID {span.id}" in tip, tip
        assert f"chunk {span.chunk}" in tip
        if span.id == UNK_ID:
            assert "unknown character" in tip
        elif chain := _chain(tokenizer, span.piece):
            assert chain.replace("\n", "⏎") in tip, tip
        else:
            assert "no merge" in tip
    # The arrow keys move within the text too; Escape hides the tooltip.
    view.page.keyboard.press("Home")
    assert view.focused() == "0"
    view.page.keyboard.press("ArrowRight")
    assert view.focused() == "1"
    view.page.keyboard.press("End")
    assert view.focused() == str(len(spans) - 1)
    view.page.keyboard.press("Escape")
    assert not view.page.locator("#tip").is_visible()


def test_the_pieces_are_the_text_with_a_text_alternative_each(tmp_path, open_page):
    spans = packaged("pt").encode_spans(TEXT)
    view = open_page(_page_file(tmp_path, "inspect", TEXT, "--lang", "en"))
    tokens = view.tokens()
    assert [int(token["id"]) for token in tokens] == [span.id for span in spans]
    assert "".join(token["text"] for token in tokens) == TEXT.replace("\n", "⏎\n")
    for token, span in zip(tokens, spans, strict=True):
        assert f"ID {span.id}" in token["label"] and f"chunk {span.chunk}" in token["label"]
    totals = view.page.locator("table.totals tbody tr").inner_text()
    assert str(len(spans)) in totals and str(len(TEXT)) in totals


def test_hover_and_tap_show_a_token(tmp_path, open_page):
    spans = packaged("pt").encode_spans(TEXT)
    view = open_page(_page_file(tmp_path, "inspect", TEXT, "--lang", "en"), NARROW)
    third = view.page.locator('.tok[data-index="3"]')
    third.hover()
    assert f"ID {spans[3].id}" in view.tip()
    view.page.locator("h1").click()
    assert not view.page.locator("#tip").is_visible()
    third.tap()
    assert f"ID {spans[3].id}" in view.tip()


def test_a_compared_tokenizer_s_pieces_match_the_library(tmp_path, open_page):
    view = open_page(_page_file(tmp_path, "compare", COMPARED, "--with", "en", "--lang", "en"))
    for name in ("pt", "en"):
        tokenizer = packaged(name)
        spans = tokenizer.encode_spans(COMPARED)
        tokens = view.tokens(name)
        assert [token["piece"] for token in tokens] == [span.piece for span in spans], name
        assert [int(token["id"]) for token in tokens] == [span.id for span in spans], name
        assert [token["chain"] for token in tokens] == [_chain(tokenizer, span.piece) for span in spans]
    # Side by side at a desktop's width: the two panels share a row.
    boxes = [view.page.locator(".panel").nth(i).bounding_box() for i in range(2)]
    assert boxes[0]["y"] == boxes[1]["y"] and boxes[0]["x"] < boxes[1]["x"]
    comparison = glassllm.compare(COMPARED, {"pt": packaged("pt"), "en": packaged("en")})
    rows = view.page.locator("table.totals tbody tr").all_inner_texts()
    for row, totals in zip(rows, comparison.totals, strict=True):
        assert row.split("\t")[:3] == [totals.name, str(totals.tokens), str(totals.chunks)]
    differing = view.page.locator("table.differing tbody th").all_inner_texts()
    assert differing == [chunk.chunk for chunk in comparison.most_different()]


def test_the_explanation_shows_every_merge_step(tmp_path, open_page):
    view = open_page(_page_file(tmp_path, "explain", "A menina comeu.", "--lang", "en"))
    text = view.page.locator("main").inner_text()
    for chunk in packaged("pt").explain("A menina comeu."):
        for step in chunk.steps:
            assert f"rank {step.rank}: {step.pair[0]} + {step.pair[1]} → {step.result}" in text, step
            assert f"seen {step.count:,} times in training" in text
        assert f"[{', '.join(map(str, chunk.ids))}]" in text


def test_a_phone_s_width_and_both_schemes(tmp_path, open_page):
    file = _page_file(tmp_path, "compare", COMPARED * 3, "--lang", "pt")
    backgrounds = {}
    for scheme in ("light", "dark"):
        view = open_page(file, NARROW, scheme)
        overflow = view.page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"the page is {overflow} px wider than a phone"
        # On a phone the panels stack.
        boxes = [view.page.locator(".panel").nth(i).bounding_box() for i in range(2)]
        assert boxes[0]["y"] < boxes[1]["y"]
        backgrounds[scheme] = view.page.evaluate("getComputedStyle(document.body).backgroundColor")
        # A chunk that recurs is one row of the differences, with how often it occurs.
        assert view.page.locator("table.differing tbody th").first.inner_text() == "▁menina ×3"

    def brightness(color: str) -> int:
        return sum(map(int, re.findall(r"\d+", color)[:3]))

    assert brightness(backgrounds["light"]) > 600 > 150 > brightness(backgrounds["dark"]), backgrounds


@pytest.mark.opt_in
@pytest.mark.skipif(not CAPTURE, reason="GLASSLLM_CAPTURE=1 writes the README's screenshots")
def test_capture_the_screenshots(tmp_path, open_page):
    wide = open_page(_page_file(tmp_path, "compare", COMPARED, "--with", "en", "--lang", "en"))
    wide.page.locator('.text[data-tokenizer="en"] .tok[data-index="2"]').focus()
    wide.page.screenshot(path=CAPTURES / "html-page-wide.png")
    narrow = open_page(_page_file(tmp_path, "compare", COMPARED, "--with", "en", "--lang", "pt"), NARROW, "dark")
    narrow.page.locator('.text[data-tokenizer="pt"] .tok[data-index="1"]').focus()
    narrow.page.screenshot(path=CAPTURES / "html-page-narrow.png")
