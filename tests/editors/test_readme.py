"""The README documents every setting and command the server has, and its Portuguese
version keeps up with it: the same sections, pictures and links. The same holds for each
page of docs/ and corpora/SOURCES.md and its Portuguese twin (``X.md`` and
``X.pt-BR.md``), and every relative link of these pages leads to a file, and to a heading
of it when it names one."""

from __future__ import annotations

import importlib
import json
import re
from itertools import zip_longest
from pathlib import Path

import pytest

from glassllm_server.features import create_server

REPO = Path(__file__).resolve().parents[2]
READMES = {name: (REPO / name).read_text(encoding="utf-8") for name in ("README.md", "README.pt-BR.md")}


def _portuguese(page: Path) -> bool:
    return page.name.endswith(".pt-BR.md")


def _twin(page: Path) -> Path:
    """The same page in the other language: ``X.md`` beside ``X.pt-BR.md``."""
    if _portuguese(page):
        return page.with_name(page.name.removesuffix(".pt-BR.md") + ".md")
    return page.with_name(page.name.removesuffix(".md") + ".pt-BR.md")


# Each English page beside its Portuguese twin: the READMEs, docs/, then the corpora's sources.
ENGLISH_PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "corpora" / "SOURCES.md"]
PAIRS = [(page, _twin(page)) for page in ENGLISH_PAGES if not _portuguese(page)]
PAGES = [page for pair in PAIRS for page in pair]
# The server's settings as the VS Code manifest lists them (test_vscode.py checks that list
# against the server), less the ones only the extension reads.
SETTINGS = [
    key
    for key in json.loads((REPO / "editors" / "vscode" / "package.json").read_text(encoding="utf-8"))["contributes"][
        "configuration"
    ]["properties"]
    if not key.startswith(("glassllm.server.", "glassllm.trace."))
]


def _without_code(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def _english(target: str) -> str:
    """A link as the English page writes it: a Portuguese page links ``X.pt-BR.md`` where
    the English one links ``X.md``."""
    return target.replace(".pt-BR.md", ".md")


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("name", sorted(READMES))
def test_every_server_command_setting_and_the_stats_request_are_documented(name):
    text = READMES[name]
    for command in create_server().protocol.fm.commands:
        assert f"`{command}`" in text, f"{name} does not document {command}"
    for setting in SETTINGS:
        assert f"`{setting}`" in text, f"{name} does not document {setting}"
    assert '"method": "glassllm/stats"' in text


@pytest.mark.parametrize(("english_page", "portuguese_page"), PAIRS, ids=lambda page: page.name)
def test_the_portuguese_page_has_the_same_sections_pictures_and_links(english_page: Path, portuguese_page: Path):
    def outline(page: Path) -> tuple[list[str], list[str]]:
        prose = _without_code(page.read_text(encoding="utf-8"))
        headings = re.findall(r"^(#+ .*)$", prose, flags=re.M)
        targets = [_english(target) for target in re.findall(r"\]\(([^)#]+)\)", prose)]
        return headings, sorted(target for target in targets if not target.startswith("README"))

    assert portuguese_page.is_file(), f"{english_page.name} has no Portuguese version {portuguese_page.name}"
    (english, english_links), (portuguese, portuguese_links) = outline(english_page), outline(portuguese_page)
    levels = [heading.split(" ")[0] for heading in english]
    assert levels == [heading.split(" ")[0] for heading in portuguese], (
        f"{portuguese_page.name} must translate every section of {english_page.name}, in order:\n"
        + "\n".join(f"{en!r:45} {pt!r}" for en, pt in zip_longest(english, portuguese, fillvalue=""))
    )
    assert english_links == portuguese_links, "the pictures or links differ"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_every_relative_link_leads_to_a_file_and_heading_in_the_same_language(page: Path):
    for target in re.findall(r"\]\(([^)\s]+)\)", _without_code(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{page.name}: {target} leads nowhere"
        # Only the link to the page's own twin ("Read in English") crosses languages.
        if linked.suffix == ".md" and linked != _twin(page).resolve() and _twin(linked).exists():
            assert _portuguese(linked) == _portuguese(page), f"{page.name}: {target} is in the other language"
        if anchor:
            headings = re.findall(r"^#+ (.*)$", _without_code(linked.read_text(encoding="utf-8")), flags=re.M)
            assert anchor in {_slug(heading) for heading in headings}, f"{page.name}: no heading for {target}"


def test_the_pictures_exist():
    for target in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", READMES["README.md"]):
        assert (REPO / target).is_file(), target


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_import_the_page_shows_resolves(page: Path):
    """The library's public paths are what the pages show people importing: a module that
    moves must take its documented names with it."""
    text = page.read_text(encoding="utf-8")
    for module, names in re.findall(r"from (glassllm[\w.]*) import ([\w, ]+)", text):
        imported = importlib.import_module(module)
        for name in filter(None, (part.strip() for part in names.split(","))):
            assert hasattr(imported, name), f"{page.name}: `from {module} import {name}` fails"
