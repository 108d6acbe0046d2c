"""The README documents every setting and command the server has, and its Portuguese
version keeps up with it: the same sections, pictures and links."""

from __future__ import annotations

import json
import re
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
    def outline(text: str) -> tuple[list[int], list[str]]:
        prose = _without_code(text)
        levels = [len(match) for match in re.findall(r"^(#+) ", prose, flags=re.M)]
        targets = re.findall(r"\]\(([^)#]+)\)", prose)
        return levels, sorted(target for target in targets if not target.startswith("README"))

    english, portuguese = outline(READMES["README.md"]), outline(READMES["README.pt-BR.md"])
    assert english[0] == portuguese[0], "the sections differ"
    assert english[1] == portuguese[1], "the pictures or links differ"


def test_the_pictures_exist():
    for target in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", READMES["README.md"]):
        assert (REPO / target).is_file(), target
