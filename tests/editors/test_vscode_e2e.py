"""The packaged extension in a real VS Code: code-server 4.139.1 (VS Code 1.139.1) driven
from headless Chromium, as a user drives it.

The session builds `editors/vscode/glassllm.vsix` with the README's command when it is
missing or older than its sources, and installs it into a code-server of its own (own
HOME, user data and extensions folders). VS Code's extension host takes its PATH from the
user's login shell, so each instance's HOME has a `.bash_profile` that sets exactly the
PATH the test means: for the main class only the system's folders, where there is a
Python 3.11 and no `glassllm-lsp`, which is the one-step install of the README. The tests
read what the workbench shows (status bar, hover, the inlay hints drawn in the line, the
Markdown preview, notifications, the Settings editor) and compare it with the library's
own answers.

`editors/setup.sh` installs code-server, its Node 24 and Chromium. Under CI=true a missing
tool fails the tests; elsewhere they are skipped. With GLASSLLM_CAPTURE=1 the tests also
write the screenshots that the READMEs and docs/editors.md show.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from editor_cases import CHAT_TEXT, accented_token, chat_encoding, slow_english

from glassllm import Tokenizer
from glassllm.packaged import packaged
from glassllm.tokenizer import SPACE, pre_tokenize

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "editors" / "vscode"
VSIX = EXTENSION / "glassllm.vsix"
PREFIX = Path(os.environ.get("GLASSLLM_EDITORS", "/opt/glassllm-editors")) / "vscode"
NODE_BIN = PREFIX / "node" / "bin"
CODE_SERVER = PREFIX / "code-server" / "node_modules" / ".bin" / "code-server"
CAPTURE = os.environ.get("GLASSLLM_CAPTURE") == "1"
CAPTURES = REPO / "editors" / "captures"
# The system's folders only: Debian's python3 (3.11) is there, glassllm-lsp is not.
SYSTEM_PATH = "/usr/bin:/bin"
TEXT = "Era uma vez uma menina.\nO avô comeu pão quente.\n"
WAIT_MS = 60_000  # the workbench takes 10 to 40 s to come up on a busy 2-core machine


def _missing_tools() -> list[str]:
    missing = [str(path) for path in (NODE_BIN / "node", CODE_SERVER) if not path.exists()]
    missing += [name for name in ("chromium", "npm") if shutil.which(name) is None]
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("playwright (the test extra)")
    return missing


@pytest.fixture(scope="session", autouse=True)
def _tools() -> None:
    missing = _missing_tools()
    if not missing:
        return
    pytest.skip(f"missing {', '.join(missing)}: run `sudo bash editors/setup.sh` (installs VS Code's test tools)")


def _newest_source() -> float:
    names = ("package.json", "package-lock.json", ".vscodeignore", "README.md", "CHANGELOG.md")
    sources = [EXTENSION / name for name in names]
    sources += [path for path in EXTENSION.glob("package.nls*.json")]
    for folder, pattern in (
        (EXTENSION / "src", "*.ts"),
        (EXTENSION / "scripts", "*"),
        (EXTENSION / "images", "*"),
        (REPO / "glassllm", "*"),
        (REPO / "server", "*.py"),
    ):
        sources += [path for path in folder.rglob(pattern) if "__pycache__" not in path.parts]
    return max(path.stat().st_mtime for path in [*sources, REPO / "pyproject.toml"] if path.is_file())


@pytest.fixture(scope="session")
def vsix() -> Path:
    """The .vsix the README's command builds (`npm ci && npm run package`), rebuilt when a
    source is newer. pip in this Python installs the server into the package."""
    if VSIX.exists() and VSIX.stat().st_mtime >= _newest_source():
        return VSIX
    env = dict(os.environ, PATH=os.pathsep.join([str(NODE_BIN), os.environ["PATH"]]), PYTHON=sys.executable)
    npm = shutil.which("npm")
    steps = [[npm, "run", "package"]]
    lock = EXTENSION / "node_modules" / ".package-lock.json"
    if not lock.exists() or lock.stat().st_mtime < (EXTENSION / "package-lock.json").stat().st_mtime:
        steps.insert(0, [npm, "ci", "--no-audit", "--no-fund"])
    for step in steps:
        result = subprocess.run(step, cwd=EXTENSION, env=env, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, f"{' '.join(step[1:])} failed:\n{result.stdout}\n{result.stderr}"
    # vsce's warnings (unbundled files, missing fields) read " WARNING  ..."; pip's own
    # "WARNING: ..." lines are about this machine's pip configuration.
    assert not re.search(r"^\s*WARNING\s\s", result.stdout + result.stderr, flags=re.M), result.stdout + result.stderr
    return VSIX


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class VSCode:
    """A code-server with the packaged extension, a folder with `conto.txt`, and a
    Chromium page on its workbench."""

    def __init__(
        self,
        root: Path,
        vsix: Path,
        login_path: str,
        settings: dict,
        machine: dict | None = None,
        login_variables: dict[str, str] | None = None,
    ) -> None:
        from playwright.sync_api import sync_playwright

        self.root = root
        self.home, self.data, self.extensions, self.folder = (
            root / name for name in ("home", "data", "extensions", "work")
        )
        self._write_profile(login_path, settings, machine, login_variables)
        env = dict(
            os.environ,
            **(login_variables or {}),
            HOME=str(self.home),
            SHELL="/bin/bash",
            PATH=f"{NODE_BIN}:{SYSTEM_PATH}",
        )
        env.pop("PYTHONPATH", None)
        port = self._start_code_server(env, vsix)
        self.playwright = sync_playwright().start()
        self.browser = self.playwright.chromium.launch(executable_path=shutil.which("chromium"))
        self.page = self.browser.new_page(viewport={"width": 1280, "height": 720})
        self.page.set_default_timeout(WAIT_MS)
        self.page.goto(f"http://127.0.0.1:{port}/?folder={self.folder}")
        self.page.wait_for_selector(".statusbar")

    def _write_profile(
        self, login_path: str, settings: dict, machine: dict | None, login_variables: dict[str, str] | None
    ) -> None:
        """The home, the user's and the machine's settings, and the folder with `conto.txt`."""
        for folder in (self.home, self.data / "User", self.extensions, self.folder):
            folder.mkdir(parents=True)
        # The extension host's PATH is the login shell's (bash -il reads .bash_profile).
        variables = {"PATH": login_path, **(login_variables or {})}
        (self.home / ".bash_profile").write_text(
            "".join(f"export {name}={shlex.quote(value)}\n" for name, value in variables.items())
        )
        # code-server reads its settings when it starts, never while it runs.
        quiet = {
            "workbench.startupEditor": "none",
            "workbench.tips.enabled": False,
            "workbench.secondarySideBar.defaultVisibility": "hidden",
            "chat.disableAIFeatures": True,
            "telemetry.telemetryLevel": "off",
            "extensions.ignoreRecommendations": True,
        }
        (self.data / "User" / "settings.json").write_text(json.dumps(quiet | settings, indent=2))
        # The Remote tab's settings, where machine-overridable ones belong in code-server.
        (self.data / "Machine").mkdir()
        (self.data / "Machine" / "settings.json").write_text(json.dumps(machine or {}, indent=2))
        (self.folder / "conto.txt").write_text(TEXT, encoding="utf-8")

    def _start_code_server(self, env: dict[str, str], vsix: Path) -> int:
        """Install the extension, start code-server on a free port and wait until it
        answers; the port."""
        folders = ["--user-data-dir", str(self.data), "--extensions-dir", str(self.extensions)]
        installed = subprocess.run(
            [CODE_SERVER, *folders, "--install-extension", str(vsix)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert installed.returncode == 0, installed.stdout + installed.stderr
        port = _free_port()
        self.log = (self.root / "code-server.log").open("w")
        self.process = subprocess.Popen(
            [
                CODE_SERVER,
                "--bind-addr",
                f"127.0.0.1:{port}",
                "--auth",
                "none",
                *folders,
                "--disable-telemetry",
                "--disable-workspace-trust",
                "--disable-update-check",
                str(self.folder),
            ],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5)
                return port
            except OSError as error:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    log = (self.root / "code-server.log").read_text()
                    raise AssertionError(f"code-server did not start:\n{log}") from error
                time.sleep(0.2)

    def close(self) -> None:
        self.browser.close()
        self.playwright.stop()
        self.process.terminate()
        self.process.wait(timeout=30)
        self.log.close()

    def open_file(self, name: str) -> None:
        self.page.keyboard.press("Control+P")
        self.page.wait_for_selector(".quick-input-widget input")
        self.page.keyboard.type(name)
        self.page.wait_for_selector(f".quick-input-list .monaco-list-row:has-text('{name}')")
        self.page.keyboard.press("Enter")
        self.page.wait_for_selector(".monaco-editor .view-line")

    def run_command(self, title: str) -> None:
        """Runs a command from the Command Palette by its title."""
        self.page.keyboard.press("Control+Shift+P")
        self.page.wait_for_selector(".quick-input-widget input")
        self.page.keyboard.type(title)
        self.page.wait_for_selector(f".quick-input-list .monaco-list-row:has-text('{title}')")
        self.page.keyboard.press("Enter")

    def pick(self, label: str) -> None:
        """Chooses an entry of the quick pick that is open."""
        exactly = re.compile(f"^{re.escape(label)}$")
        row = self.page.locator(".quick-input-list .monaco-list-row .label-name", has_text=exactly)
        row.wait_for()
        row.click()

    def input_box(self, opens_with: str):
        """The input box a command opens, once it shows: told by the value it opens with from
        the quick pick before it, which may still be on screen for a moment (keys typed in
        between go to the editor)."""
        box = self.page.locator(".quick-input-widget input")
        deadline = time.monotonic() + WAIT_MS / 1000
        while not (box.is_visible() and box.input_value() == opens_with) and time.monotonic() < deadline:
            time.sleep(0.1)
        return box

    def select(self, line: int, start: int, end: int) -> None:
        """Puts the selection on `line` (0-based) from column `start` to `end`, with the keyboard."""
        self.page.locator(".monaco-editor .view-lines").first.click()
        self.page.keyboard.press("Control+Home")
        for _ in range(line):
            self.page.keyboard.press("ArrowDown")
        self.page.keyboard.press("Home")
        for _ in range(start):
            self.page.keyboard.press("ArrowRight")
        for _ in range(end - start):
            self.page.keyboard.press("Shift+ArrowRight")

    def status_item(self, pattern: str = ""):
        # VS Code names the item <publisher>.<extension>.<the extension's id for it>.
        item = ".statusbar-item[id='glassllm.glassllm.glassllm.tokens']"
        return self.page.locator(item, has_text=re.compile(pattern))

    def status_text(self, expected: str) -> str:
        """The status bar item's text once it reads `expected` (it passes through the counts
        of earlier selections and settings on the way), or what it reads after the wait."""
        item = self.status_item()
        deadline = time.monotonic() + WAIT_MS / 1000
        while True:
            text = " ".join(item.inner_text().split()) if item.count() else ""
            if text == expected or time.monotonic() > deadline:
                return text
            time.sleep(0.1)

    def lines(self) -> list[str]:
        """The editor's lines as drawn, inlay hints included (non-breaking spaces as spaces)."""
        return [line.replace("\xa0", " ") for line in self.page.locator(".monaco-editor .view-line").all_inner_texts()]

    def output_log(self) -> str:
        """What the GlassLLM output channel holds, from the file VS Code keeps it in."""
        logs = sorted(self.data.glob("logs/*/exthost*/output_logging_*/*GlassLLM.log"))
        return "".join(path.read_text() for path in logs)

    def preview_text(self, needle: str) -> str:
        """The text of the Markdown preview (a webview's inner frame) that shows `needle`."""
        deadline = time.monotonic() + WAIT_MS / 1000
        while time.monotonic() < deadline:
            for frame in self.page.frames[1:]:  # the first is the workbench itself
                try:
                    text = frame.inner_text("body", timeout=1000)
                except Exception:  # a frame that is being replaced or has no body yet
                    continue
                if needle in text:
                    return text
            time.sleep(0.25)
        raise AssertionError(f"no Markdown preview shows {needle!r}")

    def capture(self, name: str, *also: Path) -> None:
        if CAPTURE:
            CAPTURES.mkdir(exist_ok=True)
            time.sleep(0.5)  # hovers fade in
            self.page.screenshot(path=CAPTURES / name)
            for path in also:
                shutil.copyfile(CAPTURES / name, path)


@pytest.fixture(scope="class")
def vscode(vsix, tmp_path_factory) -> Iterator[VSCode]:
    """The one-step install: the .vsix, and no glassllm-lsp on the PATH, only a Python."""
    editor = VSCode(tmp_path_factory.mktemp("vscode"), vsix, SYSTEM_PATH, {})
    try:
        editor.open_file("conto.txt")
        yield editor
    finally:
        editor.close()


PT = packaged("pt")


def _count(text: str, name: str = "pt") -> int:
    return len(packaged(name).encode(text))


# Where the server's modules come from, for the Python that runs it.
WHERE_FROM = "import glassllm as g, glassllm_server as s, pygls as p; print(g.__file__, s.__file__, p.__file__)"


class TestTheOneStepInstall:
    def test_the_login_path_has_a_python_and_no_server(self):
        assert shutil.which("glassllm-lsp", path=SYSTEM_PATH) is None
        version = subprocess.run(
            ["python3", "-c", "import sys; print(sys.version_info >= (3, 11))"],
            env={"PATH": SYSTEM_PATH},
            capture_output=True,
            text=True,
        ).stdout
        assert version.strip() == "True"

    def test_the_status_bar_counts_the_document_with_the_bundled_server(self, vscode):
        assert vscode.status_text(f"{_count(TEXT)} tokens") == f"{_count(TEXT)} tokens"
        log = vscode.output_log()
        started = re.search(r"Starting the bundled server with python3 \(Python 3\.\d+\), PYTHONPATH=(\S+)", log)
        assert started, log
        libs = Path(started[1])
        assert libs.is_relative_to(vscode.extensions) and libs.name == "libs"
        # Started as the extension starts it, that PYTHONPATH wins over whatever this
        # machine's python3 has installed, and over a glassllm folder in the workspace.
        where = subprocess.run(
            ["python3", "-P", "-c", WHERE_FROM],
            env={"PATH": SYSTEM_PATH, "PYTHONPATH": str(libs)},
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        assert all(Path(module).is_relative_to(libs) for module in where), where

    def test_the_inlay_hints_mark_chunks_and_spaces(self, vscode):
        expected = []
        for line in TEXT.splitlines():
            chunks = [chunk for chunk in pre_tokenize(line) if chunk != "\n"]
            expected.append("¦".join(chunk.replace(SPACE, " " + SPACE) for chunk in chunks))
        deadline = time.monotonic() + 30
        while vscode.lines()[:2] != expected and time.monotonic() < deadline:
            time.sleep(0.25)
        assert vscode.lines()[:2] == expected

    def test_the_status_bar_counts_the_selection_against_the_document(self, vscode):
        vscode.select(0, 0, len("Era uma vez"))
        total = _count(TEXT)
        expected = f"{_count('Era uma vez')} / {total} tokens"
        assert vscode.status_text(expected) == expected
        vscode.status_item(" / ").hover()
        tooltip = vscode.page.locator(".monaco-hover, .workbench-hover", has_text="Selection:").first
        tooltip.wait_for()
        text = tooltip.inner_text()
        assert "GlassLLM · tokenizer pt" in text
        assert f"Document: {total} tokens" in text
        assert f"Selection: {_count('Era uma vez')} tokens" in text
        # The other packaged tokenizer is compared by default, for the document and the selection.
        assert f"en: {_count(TEXT, 'en')} tokens" in text
        assert f"en: {_count('Era uma vez', 'en')} tokens" in text
        vscode.capture("vscode-selection.png")

    def test_the_hover_names_the_token_under_the_cursor(self, vscode):
        vscode.select(0, len("Era uma vez uma m"), len("Era uma vez uma m"))
        assert vscode.status_text(f"{_count(TEXT)} tokens") == f"{_count(TEXT)} tokens", "the selection's count stays"
        vscode.page.keyboard.press("Control+K")
        vscode.page.keyboard.press("Control+I")
        hover = vscode.page.locator(".monaco-hover", has_text="ID").first
        hover.wait_for()
        text = hover.inner_text()
        piece, piece_id = PT.tokens(PT.encode(" menina"))[0], PT.encode(" menina")[0]
        assert piece in text and f"ID {piece_id}" in text, text
        vscode.capture("vscode-hover.png", EXTENSION / "images" / "hover.png")
        vscode.page.keyboard.press("Escape")

    def test_the_code_action_explains_the_selection_beside_the_text(self, vscode):
        vscode.select(0, len("Era uma vez uma "), len("Era uma vez uma menina"))
        vscode.page.keyboard.press("Control+.")
        vscode.page.locator(".action-widget .monaco-list-row", has_text="Explain BPE merges").first.click()
        text = vscode.preview_text("menina")
        (chunk,) = PT.explain(" menina")
        at = 0
        for step in chunk.steps:
            at = text.index(f"rank {step.rank}", at)
            assert step.result in text[at:].splitlines()[0], text[at:]
        assert vscode.page.locator(".editor-group-container").count() == 2, "the preview is not beside the text"
        vscode.capture("vscode-explain.png", EXTENSION / "images" / "screenshot.png")

    def test_the_command_palette_explains_the_selection(self, vscode):
        vscode.page.locator(".monaco-editor .view-lines").first.click()
        vscode.select(1, 0, len("O avô"))
        vscode.run_command("GlassLLM: Explain merges for selection")
        text = vscode.preview_text("avô")
        chunk = PT.explain(" avô")[0]
        for step in chunk.steps:
            assert f"rank {step.rank}" in text

    def test_the_command_palette_compares_the_tokenizers(self, vscode):
        vscode.page.locator(".monaco-editor .view-lines").first.click()
        vscode.select(0, len("Era uma vez uma "), len("Era uma vez uma menina"))
        vscode.run_command("GlassLLM: Compare tokenizers for selection")
        text = vscode.preview_text("Compare tokenizers")
        assert "Portuguese (pt)" in text and "English (en)" in text
        for name in ("pt", "en"):
            (chunk,) = packaged(name).explain(" menina")
            for step in chunk.steps:
                assert f"rank {step.rank:,}" in text, (name, step)

    def test_the_command_palette_opens_the_comparison_for_the_browser(self, vscode):
        vscode.page.locator(".monaco-editor .view-lines").first.click()
        vscode.select(0, len("Era uma vez uma "), len("Era uma vez uma menina"))
        vscode.run_command("GlassLLM: Open explanation or comparison in browser")
        vscode.pick("Compare tokenizers")
        # code-server's workbench is a web page: the user's browser cannot open a file of the
        # machine the server runs on, so the message gives the page's path instead.
        toast = vscode.page.locator(".notifications-toasts", has_text="open that file in a browser")
        toast.wait_for()
        (page,) = (vscode.home / ".cache" / "glassllm").glob("compare-conto-*.html")
        assert str(page) in " ".join(toast.inner_text().split())
        html = page.read_text(encoding="utf-8")
        found = re.findall(r'data-tokenizer="([^"]*)" data-id="(\d+)" data-piece="([^"]*)"', html)
        expected = [
            (name, str(span.id), span.piece)
            for name, tokenizer in (("Portuguese (pt)", PT), ("English (en)", packaged("en")))
            for span in tokenizer.encode_spans(" menina")
        ]
        assert found == expected

    def test_the_command_palette_maps_the_workspace_s_tokens(self, vscode):
        (vscode.folder / "logo.png").write_bytes(b"\x89PNG\0\0")
        vscode.run_command("GlassLLM: Token map of the workspace")
        # As for the comparison: in code-server the message gives the page's path.
        toast = vscode.page.locator(".notifications-toasts", has_text="/tokens-")
        toast.wait_for()
        (page,) = (vscode.home / ".cache" / "glassllm").glob(f"tokens-{vscode.folder.name}-*.html")
        assert str(page) in " ".join(toast.inner_text().split())
        html = page.read_text(encoding="utf-8")
        assert '<span class="name">conto.txt</span>' in html and f"{_count(TEXT)} pt" in html
        assert "<code>logo.png</code>: binary" in html

    def test_the_english_tokenizer_changes_the_count(self, vscode):
        vscode.page.locator(".monaco-editor .view-lines").first.click()
        vscode.page.keyboard.press("Control+Home")
        vscode.run_command("GlassLLM: Choose tokenizer")
        vscode.pick("en")
        vscode.pick("Workspace settings")
        english = packaged("en")
        ids = english.encode(TEXT)
        assert len(ids) != _count(TEXT)
        # English has no "ã": the count carries a warning sign with the unknown characters.
        unknown = ids.count(english.unk_id)
        assert unknown > 0
        expected = f"{len(ids)} tokens {unknown}"
        assert vscode.status_text(expected) == expected
        settings = _settings_once(
            vscode.folder / ".vscode" / "settings.json", lambda found: "glassllm.tokenizer" in found
        )
        assert settings["glassllm.tokenizer"] == "en"

    def test_the_command_palette_trains_a_tokenizer_on_the_document(self, vscode):
        vscode.page.locator(".monaco-editor .view-lines").first.click()
        vscode.run_command("GlassLLM: Train tokenizer")
        vscode.pick("The active document")
        size = vscode.input_box("1024")
        size.fill("40")
        size.press("Enter")
        # VS Code's own save dialog, a path in a quick input, offers tokenizer.json in the folder.
        dialog = vscode.page.locator(".quick-input-widget input")
        deadline = time.monotonic() + WAIT_MS / 1000
        while not dialog.input_value().endswith("tokenizer.json") and time.monotonic() < deadline:
            time.sleep(0.1)
        vscode.page.keyboard.press("Enter")
        trained = vscode.folder / "tokenizer.json"
        while not trained.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        # The server trained on the document as the library does.
        assert Tokenizer.load(trained).merges == Tokenizer.train(TEXT, 40).merges

    def test_the_output_channel_shows_no_error(self, vscode):
        log = vscode.output_log()
        assert log, "the GlassLLM output channel is empty"
        for line in log.splitlines():
            assert not re.search(r"\bERROR\b|Traceback|\[Error", line), line


# Two machines where the extension cannot start a server: its only python3 is 3.9 (a
# script that answers like one) and it has no python; or the user set
# glassllm.server.path to a glassllm-lsp that is not installed.
BROKEN = {
    "no-python": ({}, ["Python 3.11 or newer", "python3 is 3.9", "python: not found"], "Server: Python"),
    "no-server": (
        {"glassllm.server.path": "glassllm-lsp"},
        ['the setting glassllm.server.path ("glassllm-lsp"): not found', "Clear the setting"],
        "Server: Path",
    ),
}


@pytest.fixture(scope="class", params=sorted(BROKEN))
def broken(request, vsix, tmp_path_factory) -> Iterator[tuple[VSCode, list[str], str]]:
    machine_settings, message, setting = BROKEN[request.param]
    root = tmp_path_factory.mktemp(f"vscode-{request.param}")
    login_path = SYSTEM_PATH
    if request.param == "no-python":
        login_path = str(root / "bin")
        (root / "bin").mkdir()
        (root / "bin" / "python3").write_text('#!/bin/sh\necho "3 9"\n')
        (root / "bin" / "python3").chmod(0o755)
    editor = VSCode(root / "code", vsix, login_path, {}, machine_settings)
    try:
        editor.open_file("conto.txt")
        yield editor, message, setting
    finally:
        editor.close()


class TestWithoutAServer:
    def test_one_message_says_what_was_tried(self, broken):
        editor, message, _ = broken
        toast = editor.page.locator(".notification-toast", has_text="GlassLLM")
        toast.first.wait_for()
        time.sleep(2)  # vscode-languageclient's own notification would have come by now
        texts = editor.page.locator(".notification-toast").all_inner_texts()
        assert len(texts) == 1, texts
        for part in message:
            assert part in texts[0], texts[0]
        assert "`" not in texts[0], "notifications do not render Markdown"
        # Activation does not wait for the user to answer the message.
        editor.page.locator(".statusbar-item", has_text="Activating Extensions").wait_for(state="detached")
        if "Server: Python" in broken[2]:
            editor.capture("vscode-no-python.png")

    def test_its_button_shows_the_setting(self, broken):
        editor, _, title = broken
        page = editor.page
        page.locator(".notification-toast .monaco-button", has_text="Open Settings").click()
        setting = page.locator(".settings-editor .setting-item-contents", has_text=title)
        setting.first.wait_for()
        assert setting.first.is_visible()
        # The Remote tab: the User tab does not list machine-overridable settings here.
        selected = page.locator(".settings-editor [role=tab][aria-selected=true]")
        assert selected.inner_text().startswith("Remote"), selected.inner_text()


def test_the_package_holds_the_bundle_and_the_server(vsix):
    """One bundled script, the server with its dependencies and tokenizers, no sources."""
    with zipfile.ZipFile(vsix) as package:
        names = package.namelist()
    assert "extension/dist/extension.js" in names
    assert not [name for name in names if name.endswith(".js") and name != "extension/dist/extension.js"]
    libs = "extension/bundled/libs/"
    modules = (
        "glassllm_server/__main__.py",
        "glassllm/data/pt.json",
        "glassllm/data/en.json",
        "pygls/",
        "lsprotocol/",
        "cattrs/",
        "attrs/",
    )
    for module in modules:
        assert any(name.startswith(libs + module) for name in names), module
    assert not [name for name in names if "node_modules/" in name or "/src/" in name or name.endswith((".ts", ".pyc"))]
    assert "extension/images/icon.png" in names and "extension/changelog.md" in names
    # No repository to point at: the README's images stay relative and travel in the package.
    with zipfile.ZipFile(vsix) as package:
        readme = package.read("extension/readme.md").decode("utf-8")
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme)
    assert images and all(f"extension/{image}" in names for image in images), images


# Real models' tokenizers: Mistral 7B's (SentencePiece BPE) in a Hugging Face cache laid
# out as huggingface_hub lays it out, and Llama 3's tokenizer.json as a file in the folder.
MISTRAL_ID = "mistralai/Mistral-7B-v0.1"


def _hub_cache(folder: Path, repo: str, tokenizer: Path, name: str) -> Path:
    """A Hugging Face cache in ``folder`` whose ``repo`` has ``tokenizer`` as ``name`` in
    its main snapshot (the snapshot named by the file's SHA-1, as a commit would be)."""
    import hashlib

    commit = hashlib.sha1(tokenizer.read_bytes()).hexdigest()
    model = folder / ("models--" + repo.replace("/", "--"))
    (model / "refs").mkdir(parents=True)
    (model / "refs" / "main").write_text(commit)
    (model / "snapshots" / commit).mkdir(parents=True)
    shutil.copyfile(tokenizer, model / "snapshots" / commit / name)
    return folder


@pytest.fixture(scope="class")
def models():
    """The library's reading of the two models, the tests' expected answers."""
    from glassllm.formats.load import load_model
    from tests.library.formats.fixtures import model_file

    mistral, llama = model_file("mistral-v1"), model_file("llama3")
    return {"mistral": (mistral, load_model(mistral)), "llama3": (llama, load_model(llama))}


@pytest.fixture(scope="class")
def vscode_models(vsix, models, tmp_path_factory) -> Iterator[VSCode]:
    """The one-step install, Mistral in the Hugging Face cache and compared with `pt`."""
    root = tmp_path_factory.mktemp("vscode-models")
    cache = _hub_cache(root / "hub", MISTRAL_ID, models["mistral"][0], "tokenizer.model")
    settings = {"glassllm.compareWith": [f"hf:{MISTRAL_ID}"]}
    editor = VSCode(root / "code", vsix, SYSTEM_PATH, settings, login_variables={"HF_HUB_CACHE": str(cache)})
    try:
        editor.open_file("conto.txt")
        yield editor
    finally:
        editor.close()


def _hover_at(vscode: VSCode, line: int, column: int) -> str:
    vscode.select(line, column, column)
    vscode.page.keyboard.press("Control+K")
    vscode.page.keyboard.press("Control+I")
    hover = vscode.page.locator(".monaco-hover", has_text="ID").first
    hover.wait_for()
    text = hover.inner_text()
    vscode.page.keyboard.press("Escape")
    return text


def _settings_once(path: Path, ready) -> dict:
    """The settings file at ``path`` once ``ready`` accepts it (VS Code writes it a moment
    after the quick pick closes), or as it is after the wait."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while True:
        try:
            settings = json.loads(path.read_text()) if path.exists() else {}
        except json.JSONDecodeError:  # read between VS Code's emptying the file and writing it
            settings = {}
        if ready(settings) or time.monotonic() > deadline:
            return settings
        time.sleep(0.1)


def _token_at(tokenizer, line: int, column: int):
    offset = sum(len(text) for text in TEXT.splitlines(keepends=True)[:line]) + column
    (token,) = [span for span in tokenizer.encode_spans(TEXT) if span.start <= offset < span.end]
    return token


class TestARealModelTokenizer:
    def test_the_tooltip_counts_the_compared_model(self, vscode_models, models):
        mistral = models["mistral"][1]
        assert vscode_models.status_text(f"{_count(TEXT)} tokens") == f"{_count(TEXT)} tokens"
        vscode_models.status_item().hover()
        tooltip = vscode_models.page.locator(".monaco-hover, .workbench-hover", has_text="Document:").first
        tooltip.wait_for()
        assert f"hf:{MISTRAL_ID}: {len(mistral.encode(TEXT))} tokens" in tooltip.inner_text()
        vscode_models.page.keyboard.press("Escape")

    def test_the_compare_page_shows_the_model_merges(self, vscode_models, models):
        mistral = models["mistral"][1]
        vscode_models.page.locator(".monaco-editor .view-lines").first.click()
        vscode_models.select(0, len("Era uma vez uma "), len("Era uma vez uma menina"))
        vscode_models.run_command("GlassLLM: Compare tokenizers for selection")
        text = vscode_models.preview_text("Compare tokenizers")
        assert f"hf:{MISTRAL_ID}" in text
        (chunk,) = [chunk for chunk in mistral.explain(TEXT) if "menina" in chunk.chunk]
        for step in chunk.steps:
            assert mistral.readable(step.result) in text, step

    def test_choose_tokenizer_offers_the_cached_model_and_checks_a_typed_id(self, vscode_models, models):
        mistral = models["mistral"][1]
        page = vscode_models.page
        page.locator(".monaco-editor .view-lines").first.click()
        vscode_models.run_command("GlassLLM: Choose tokenizer")
        cached = page.locator(".quick-input-list .monaco-list-row", has_text=f"hf:{MISTRAL_ID}")
        cached.first.wait_for()
        assert "tokenizer.model" in cached.first.inner_text()
        vscode_models.pick("A Hugging Face model id…")
        typed = vscode_models.input_box("hf:")
        typed.press_sequentially("mistral ai/Mistral")
        message = page.locator(".quick-input-message", has_text="Expected hf:ORG/NAME")
        message.wait_for()
        typed.fill(MISTRAL_ID)
        message.wait_for(state="hidden")
        typed.press("Enter")
        vscode_models.pick("Workspace settings")
        expected = f"{len(mistral.encode(TEXT))} tokens"
        assert vscode_models.status_text(expected) == expected
        settings = _settings_once(vscode_models.folder / ".vscode" / "settings.json", lambda found: bool(found))
        assert settings.get("glassllm.tokenizer") == f"hf:{MISTRAL_ID}"
        # The tooltip says what the model is and what it adds around the text (its BOS).
        vscode_models.status_item().hover()
        tooltip = page.locator(".monaco-hover, .workbench-hover", has_text="Model:").first
        tooltip.wait_for()
        before, after = mistral.around
        around = len(before) + len(after)
        added = f"{around} token{'' if around == 1 else 's'} added around the text, not counted"
        assert f"Model: {mistral.kind} · special-token text is ordinary text · {added}" in tooltip.inner_text()
        page.keyboard.press("Escape")

    def test_the_hover_gives_the_model_id_and_readable_piece(self, vscode_models, models):
        mistral = models["mistral"][1]
        for line, column in ((0, len("Era uma vez uma m")), (1, len("O avô co"))):
            token = _token_at(mistral, line, column)
            text = _hover_at(vscode_models, line, column)
            assert f"ID {token.id}" in text and mistral.readable(token.piece) in text, text

    def test_a_file_chosen_for_the_user_waits_for_the_workspace_setting_to_go(self, vscode_models, models):
        path, llama = models["llama3"]
        copied = vscode_models.folder / "models" / "llama3" / "tokenizer.json"
        copied.parent.mkdir(parents=True)
        shutil.copyfile(path, copied)
        page = vscode_models.page
        page.locator(".monaco-editor .view-lines").first.click()
        vscode_models.run_command("GlassLLM: Choose tokenizer")
        vscode_models.pick("A tokenizer file…")
        # VS Code's own open dialog, a path in a quick input. It fills in the folder it opens
        # on, and on a busy machine may do so again after the test has begun to type (which
        # then lands after that folder), so the path goes in whole until it stays for a second.
        dialog = page.locator(".quick-input-widget input")
        dialog.wait_for()
        deadline = time.monotonic() + WAIT_MS / 1000
        stayed = 0
        while stayed < 5 and time.monotonic() < deadline:
            if dialog.input_value() == str(copied):
                stayed += 1
            else:
                stayed = 0
                dialog.fill(str(copied))
            time.sleep(0.2)
        # The dialog may take the first Enter for its own list's entry (the same file) when
        # it has just filtered that list: then a second one accepts the path.
        scope = page.locator(".quick-input-list .monaco-list-row .label-name", has_text="User settings")
        while not scope.count() and time.monotonic() < deadline:
            if dialog.is_visible() and dialog.input_value() == str(copied):
                page.keyboard.press("Enter")
            time.sleep(2)
        vscode_models.pick("User settings")
        user = _settings_once(
            vscode_models.data / "User" / "settings.json", lambda found: "glassllm.tokenizer" in found
        )
        assert user.get("glassllm.tokenizer") == str(copied), "a user setting serves every workspace: absolute"
        # The workspace's own setting (Mistral, from the test before) still applies: said once, with a way out.
        mistral = models["mistral"][1]
        assert vscode_models.status_text(f"{len(mistral.encode(TEXT))} tokens") == f"{len(mistral.encode(TEXT))} tokens"
        toast = page.locator(".notification-toast", has_text="still applies here")
        toast.locator(".monaco-button", has_text="Remove the workspace setting").click()
        expected = f"{len(llama.encode(TEXT))} tokens"
        assert vscode_models.status_text(expected) == expected
        workspace = _settings_once(
            vscode_models.folder / ".vscode" / "settings.json", lambda found: "glassllm.tokenizer" not in found
        )
        assert "glassllm.tokenizer" not in workspace
        token = _token_at(llama, 0, len("Era uma vez uma m"))
        text = _hover_at(vscode_models, 0, len("Era uma vez uma m"))
        assert f"ID {token.id}" in text and llama.readable(token.piece) in text, text


# A tokenizer file that loads slowly (tests/editors/editor_cases.py): the status bar first counts
# with Portuguese, then, once English is in use, again without an edit.


@pytest.fixture(scope="class")
def vscode_slow(vsix, tmp_path_factory) -> Iterator[VSCode]:
    root = tmp_path_factory.mktemp("vscode-slow")
    with slow_english(root) as fifo:
        editor = VSCode(root / "code", vsix, SYSTEM_PATH, {"glassllm.tokenizer": str(fifo)})
        try:
            editor.open_file("conto.txt")
            yield editor
        finally:
            editor.close()


class TestATokenizerFileThatLoadsSlowly:
    def test_the_status_bar_follows_the_tokenizer_without_an_edit(self, vscode_slow):
        # English has no "ã": its count carries a warning sign with the unknown characters.
        ids = packaged("en").encode(TEXT)
        unknown = ids.count(packaged("en").unk_id)
        portuguese, english = f"{_count(TEXT)} tokens", f"{len(ids)} tokens {unknown}"
        assert unknown > 0 and len(ids) != _count(TEXT)
        assert vscode_slow.status_text(portuguese) == portuguese
        assert vscode_slow.status_text(english) == english


# The chat document (tests/editors/editor_cases.py).


@pytest.fixture(scope="class")
def vscode_chat(vsix, tmp_path_factory) -> Iterator[VSCode]:
    from tests.library.formats.fixtures import model_file

    root = tmp_path_factory.mktemp("vscode-chat")
    editor = VSCode(root / "code", vsix, SYSTEM_PATH, {"glassllm.tokenizer": str(model_file("llama3"))})
    try:
        (editor.folder / "chat.json").write_text(CHAT_TEXT, encoding="utf-8")
        editor.open_file("chat.json")
        yield editor
    finally:
        editor.close()


class TestAChatDocument:
    def test_the_prompt_is_counted_its_template_drawn_and_a_message_hovered(self, vscode_chat):
        encoding = chat_encoding()
        expected = f"{encoding.count:,} tokens ({encoding.template_count:,} from the template)"
        assert vscode_chat.status_text(expected) == expected

        # The template's text before the user's message (VS Code cuts a long hint at
        # editor.inlayHints.maximumLength, 43 characters by default).
        def drawn() -> bool:
            lines = vscode_chat.lines()
            return any("<|eot_id|><|start_header_id|>user<" in line and "Ol\\u00e1" in line for line in lines)

        deadline = time.monotonic() + 30
        while not drawn() and time.monotonic() < deadline:
            time.sleep(0.25)
        assert drawn(), vscode_chat.lines()
        # Hover inside the document's "\u00e9": the token that holds "é".
        text = CHAT_TEXT.splitlines()
        row = next(number for number, line in enumerate(text) if "caf\\u00e9" in line)
        shown = _hover_at(vscode_chat, row, text[row].index("\\u00e9") + 2)
        number, token = accented_token()
        assert f"ID {token.id}" in shown and f"token {number} of {encoding.count}" in shown, shown


# A token budget in the user's settings (glassllm.maxTokens), a few tokens past the
# document's count, so typing a line passes it.
BUDGET = _count(TEXT) + 3
BUDGET_LINE = "E foram felizes para sempre."


@pytest.fixture(scope="class")
def vscode_budget(vsix, tmp_path_factory) -> Iterator[VSCode]:
    editor = VSCode(tmp_path_factory.mktemp("vscode-budget"), vsix, SYSTEM_PATH, {"glassllm.maxTokens": BUDGET})
    try:
        editor.open_file("conto.txt")
        yield editor
    finally:
        editor.close()


def _line_tokens(text: str) -> list[tuple[int, int, int]]:
    """(line, start, end) of every token, each line tokenized alone as the server does."""
    found = []
    for number, line in enumerate(text.splitlines(keepends=True)):
        found += [(number, span.start, span.end) for span in PT.encode_spans(line)]
    return found


class TestTokenBudget:
    def test_a_budget_diagnostic_appears_past_the_budget_and_goes_when_back_under(self, vscode_budget):
        editor, page = vscode_budget, vscode_budget.page
        under = f"{_count(TEXT)} / {BUDGET} tokens"
        assert editor.status_text(under) == under
        errors = page.locator(".monaco-editor .squiggly-error")
        assert errors.count() == 0
        page.locator(".monaco-editor .view-lines").first.click()
        page.keyboard.press("Control+End")
        page.keyboard.type(BUDGET_LINE)
        typed = TEXT + BUDGET_LINE
        total = sum(len(PT.encode_spans(line)) for line in typed.splitlines(keepends=True))
        over = f"{total} / {BUDGET} tokens"
        assert editor.status_text(over) == over
        errors.first.wait_for()
        assert errors.count() == 1
        # The Problems panel: the message and where it is (VS Code's columns are UTF-16 units).
        line, start, _ = _line_tokens(typed)[BUDGET]
        column = len(typed.splitlines()[line][:start].encode("utf-16-le")) // 2 + 1
        page.keyboard.press("Control+Shift+M")
        message = f"token {BUDGET + 1} of {BUDGET} — {total - BUDGET} over, Portuguese"
        row = page.locator(".markers-panel .monaco-list-row", has_text=message)
        row.first.wait_for()
        assert f"[Ln {line + 1}, Col {column}]" in " ".join(row.first.inner_text().split())
        editor.capture("vscode-budget.png")
        # Deleting the line back takes it away.
        page.locator(".monaco-editor .view-lines").first.click()
        page.keyboard.press("Control+End")
        page.keyboard.press("Shift+Home")
        page.keyboard.press("Backspace")
        assert editor.status_text(under) == under
        errors.first.wait_for(state="detached")
        assert errors.count() == 0
