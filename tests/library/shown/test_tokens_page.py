"""The map of a repository's tokens (``glassllm tokens --html``), opened in a real Chromium.

As ``test_html_page.py`` opens the other pages: Debian's Chromium driven by Playwright,
the page written by the command as a user runs it. Every request the page could make is
routed and refused, so a page that needed the network would show it; the folder tree is
walked and opened with the keyboard alone, the focus must be seen, and at a phone's width
nothing may stick out sideways. Both languages. The counts come from the library.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from glassllm import packaged
from tests.library.shown.test_html_page import browser  # noqa: F401  (the fixture, shared)

PT = packaged("pt")
PHONE = {"width": 375, "height": 740}
DESKTOP = {"width": 1200, "height": 800}
STORY = "Era uma vez uma menina que morava numa casa amarela perto do rio.\n"
# A name with no place to break, as generated files have: it must wrap, not widen the page.
LONG_NAME = "relatorio_" + "muito_longo_" * 12 + ".md"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Folders four deep (the third and fourth start closed), a budget one file passes."""
    root = tmp_path_factory.mktemp("map") / "project"
    deep = root / "docs" / "guides" / "advanced" / "notes"
    deep.mkdir(parents=True)
    (root / "docs" / "intro.md").write_text(STORY * 40, encoding="utf-8")
    (root / "docs" / "guides" / "start.md").write_text(STORY * 5, encoding="utf-8")
    (deep / "deep.md").write_text(STORY * 3, encoding="utf-8")
    (root / "docs" / "guides" / "advanced" / LONG_NAME).write_text(STORY, encoding="utf-8")
    (root / "short.txt").write_text("Olá!\n", encoding="utf-8")
    (root / "image.bin").write_bytes(b"\0\1\2")
    return root


def _map(project: Path, language: str) -> Path:
    page = project.parent / f"map-{language}.html"
    if not page.exists():
        environment = {**os.environ, "XDG_CACHE_HOME": str(project.parent / "cache")}
        limit = len(PT.encode(STORY * 5))
        command = ["tokens", ".", "--max-tokens", str(limit), "--html", str(page), "--lang", language]
        done = subprocess.run(
            [sys.executable, "-m", "glassllm.cli", *command],
            cwd=project,
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 1, done.stderr  # docs/intro.md is over: the page is written all the same
    return page


class MapView:
    """The page in a fresh browser context that refuses every request but the file's own."""

    def __init__(self, chromium: Any, file: Path, viewport: dict[str, int], scheme: str = "light") -> None:
        self.context = chromium.new_context(viewport=viewport, color_scheme=scheme, has_touch=viewport == PHONE)
        self.url = file.as_uri()
        self.refused: list[str] = []
        self.requests: list[str] = []
        self.context.on("request", lambda request: self.requests.append(request.url))
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.set_default_timeout(10_000)
        self.page.goto(self.url)

    def _route(self, route: Any) -> None:
        if route.request.url == self.url:
            route.continue_()
        else:
            self.refused.append(route.request.url)
            route.abort()

    def focused(self) -> dict[str, Any]:
        """The focused element: its tag, its folder's name, whether that folder is open,
        and the outline drawn around it."""
        return self.page.evaluate(
            """() => {
                const element = document.activeElement;
                const style = getComputedStyle(element);
                const folder = element.closest('details');
                return {
                    tag: element.tagName.toLowerCase(),
                    name: element.querySelector('.name')?.textContent ?? null,
                    open: folder ? folder.open : null,
                    outline: style.outlineStyle,
                    outlineWidth: parseFloat(style.outlineWidth),
                };
            }"""
        )

    def folder(self, name: str) -> Any:
        """The summary of the folder ``name`` (``"notes/"``), not of the folders around it."""
        return self.page.locator("summary").filter(has=self.page.locator(".name", has_text=re.compile(f"^{name}$")))

    def is_open(self, name: str) -> bool:
        return self.folder(name).evaluate("summary => summary.parentElement.open")

    def visible_names(self) -> list[str]:
        return [name for name in self.page.locator(".name").all_inner_texts() if name]


@pytest.fixture
def open_map(browser) -> Iterator[Any]:  # noqa: F811  (the imported fixture)
    views: list[MapView] = []

    def opener(file: Path, viewport: dict[str, int] = DESKTOP, scheme: str = "light") -> MapView:
        views.append(MapView(browser, file, viewport, scheme))
        return views[-1]

    yield opener
    for view in views:
        # Offline: the page asked for nothing but itself (no font, image, script or beacon).
        assert view.refused == [], view.refused
        assert view.requests == [view.url], view.requests
        view.context.close()


def test_the_keyboard_walks_the_tree_opens_a_closed_folder_and_the_focus_is_seen(project, open_map):
    view = open_map(_map(project, "en"))
    assert not view.is_open("notes/") and not view.is_open("advanced/")
    assert "deep.md" not in view.visible_names()  # inside a closed folder
    # Tab reaches each folder's summary in the page's order: docs/, guides/, advanced/.
    seen = []
    for _ in range(3):
        view.page.keyboard.press("Tab")
        focused = view.focused()
        assert focused["tag"] == "summary", focused
        assert focused["outline"] != "none" and focused["outlineWidth"] >= 2, focused
        seen.append(focused["name"])
    assert seen == ["docs/", "guides/", "advanced/"]
    assert view.focused()["open"] is False  # advanced/ is the third level: closed at first
    view.page.keyboard.press("Enter")
    assert view.focused()["open"] is True
    # Its folder and its file are there now, and Tab goes on into them.
    assert LONG_NAME in view.visible_names()
    view.page.keyboard.press("Tab")
    assert view.focused()["name"] == "notes/"
    view.page.keyboard.press("Space")
    assert view.focused()["open"] is True and "deep.md" in view.visible_names()
    # Enter closes as it opens; Shift+Tab goes back.
    view.page.keyboard.press("Enter")
    assert view.focused()["open"] is False and "deep.md" not in view.visible_names()
    view.page.keyboard.press("Shift+Tab")
    assert view.focused()["name"] == "advanced/"


def test_the_rows_show_the_library_s_counts_and_the_file_over_its_budget(project, open_map):
    view = open_map(_map(project, "en"))
    intro = len(PT.encode(STORY * 40))
    row = view.page.locator("li.row", has_text="intro.md")
    assert f"{intro:,} pt" in row.inner_text()
    assert view.page.locator(".budget.failed").all_inner_texts() == [
        f"{int(1000 * intro / len(PT.encode(STORY * 5))) / 10:.1f}% of {len(PT.encode(STORY * 5)):,}"
    ]
    assert view.page.locator("ul.over li code").all_inner_texts() == ["docs/intro.md"]
    assert "not counted: 1 files" in view.page.locator("main").inner_text()  # image.bin
    # Each file not counted is named with its reason, in a list that opens as the folders do.
    skipped = view.page.locator("details.skipped")
    assert skipped.locator("summary").inner_text() == "1 files not counted"
    skipped.locator("summary").focus()
    view.page.keyboard.press("Enter")
    assert skipped.locator("li").all_inner_texts() == ["image.bin: binary (a NUL byte in its first 8,000 bytes)"]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_at_a_phone_s_width_nothing_overflows_and_the_text_stays_readable(project, open_map, scheme):
    view = open_map(_map(project, "pt"), PHONE, scheme)
    view.folder("advanced/").tap()
    view.folder("notes/").tap()
    view.page.locator("details.skipped summary").tap()
    assert "deep.md" in view.visible_names()
    overflow = view.page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"the page is {overflow} px wider than a phone"
    sticking_out = view.page.evaluate(
        """() => [...document.querySelectorAll('body *')]
            .filter(e => e.getClientRects().length && e.getBoundingClientRect().right > innerWidth + 0.5)
            .map(e => e.className || e.tagName)"""
    )
    assert sticking_out == []
    sizes = view.page.evaluate(
        """() => [...document.querySelectorAll('.name, .count, .share, .budget, .note, code')]
            .map(e => parseFloat(getComputedStyle(e).fontSize))"""
    )
    assert min(sizes) >= 13, sizes
    # The long name wraps within the screen instead of being cut.
    name = view.page.locator(".name", has_text="relatorio_").bounding_box()
    assert name is not None and name["x"] >= 0 and name["x"] + name["width"] <= PHONE["width"]
    assert name["height"] > 30  # more than one line


def test_the_portuguese_page_speaks_portuguese_and_opens_by_keyboard(project, open_map):
    view = open_map(_map(project, "pt"))
    assert view.page.locator("html").get_attribute("lang") == "pt-BR"
    assert view.page.locator("h1").inner_text() == "Tokens de um repositório"
    assert "Abra ou feche uma pasta" in view.page.locator(".help").inner_text()
    intro = len(PT.encode(STORY * 40))
    assert f"{intro:,} pt".replace(",", ".") in view.page.locator("li.row", has_text="intro.md").inner_text()
    assert re.search(r"\d+,\d% do total", view.page.locator("main").inner_text())
    for _ in range(3):
        view.page.keyboard.press("Tab")
    view.page.keyboard.press("Enter")
    assert view.focused() | {"outline": None, "outlineWidth": None} == {
        "tag": "summary",
        "name": "advanced/",
        "open": True,
        "outline": None,
        "outlineWidth": None,
    }
