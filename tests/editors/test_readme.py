"""The README documents every setting and command the server has, and its Portuguese
version keeps up with it: the same sections, pictures and links."""

from __future__ import annotations

import json
import re
from itertools import zip_longest
from pathlib import Path

import pytest

from glassllm_server.features import create_server

REPO = Path(__file__).resolve().parents[2]
READMES = {name: (REPO / name).read_text(encoding="utf-8") for name in ("README.md", "README.pt-BR.md")}
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


@pytest.mark.parametrize("name", sorted(READMES))
def test_every_server_command_setting_and_the_stats_request_are_documented(name):
    text = READMES[name]
    for command in create_server().protocol.fm.commands:
        assert f"`{command}`" in text, f"{name} does not document {command}"
    for setting in SETTINGS:
        assert f"`{setting}`" in text, f"{name} does not document {setting}"
    assert '"method": "glassllm/stats"' in text


def test_the_portuguese_readme_has_the_same_sections_pictures_and_links():
    def outline(text: str) -> tuple[list[str], list[str]]:
        prose = _without_code(text)
        headings = re.findall(r"^(#+ .*)$", prose, flags=re.M)
        targets = re.findall(r"\]\(([^)#]+)\)", prose)
        return headings, sorted(target for target in targets if not target.startswith("README"))

    (english, english_links), (portuguese, portuguese_links) = (
        outline(READMES["README.md"]),
        outline(READMES["README.pt-BR.md"]),
    )
    levels = [heading.split(" ")[0] for heading in english]
    assert levels == [heading.split(" ")[0] for heading in portuguese], (
        "README.pt-BR.md must translate every section of README.md, in order:\n"
        + "\n".join(f"{en!r:45} {pt!r}" for en, pt in zip_longest(english, portuguese, fillvalue=""))
    )
    assert english_links == portuguese_links, "the pictures or links differ"


def test_the_pictures_exist():
    for target in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", READMES["README.md"]):
        assert (REPO / target).is_file(), target
