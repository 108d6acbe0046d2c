"""Capture a real Neovim session with GlassLLM, for the README.

Runs Neovim 0.11 in a tmux pane with exactly the setup of editors/nvim/ (in an isolated
XDG home), opens sample.md, and captures the screen three times: a hover, a visual
selection with its token count, and the page of the "Explain BPE merges" code action.
Each capture is kept as plain text (`tmux capture-pane -p`) and as a PNG drawn from the
pane's colors (`capture-pane -e`, turned into SVG here, rasterized by ImageMagick).

    python3 editors/captures/capture.py

Needs tmux, ImageMagick's convert and glassllm-lsp on the PATH.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import tempfile
import time
import unicodedata
from pathlib import Path

HERE = Path(__file__).resolve().parent
PLUGIN = HERE.parent / "nvim"
SESSION = "glassllm-capture"
COLUMNS, ROWS = 120, 22
# Neovim 0.11's default dark colors, for cells the pane leaves uncolored.
DEFAULT_FG, DEFAULT_BG = "#e0e2ea", "#14161b"
FONT_SIZE, CELL_WIDTH, CELL_HEIGHT = 28, 16.86, 36
ANSI_16 = [
    "#000000",
    "#cd0000",
    "#00cd00",
    "#cdcd00",
    "#0000ee",
    "#cd00cd",
    "#00cdcd",
    "#e5e5e5",
    "#7f7f7f",
    "#ff0000",
    "#00ff00",
    "#ffff00",
    "#5c5cff",
    "#ff00ff",
    "#00ffff",
    "#ffffff",
]


def tmux(*arguments: str) -> str:
    return subprocess.run(["tmux", *arguments], check=True, capture_output=True, text=True).stdout


def image_magick() -> str:
    """The first `convert` on the PATH that is ImageMagick's."""
    for folder in os.environ["PATH"].split(os.pathsep):
        candidate = Path(folder) / "convert"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            version = subprocess.run([candidate, "-version"], capture_output=True, text=True).stdout
            if "ImageMagick" in version:
                return str(candidate)
    raise SystemExit("ImageMagick's convert is not installed (apt-get install imagemagick)")


def palette(index: int) -> str:
    """The xterm 256-color palette."""
    if index < 16:
        return ANSI_16[index]
    if index < 232:
        index -= 16
        levels = [0, 95, 135, 175, 215, 255]
        return f"#{levels[index // 36]:02x}{levels[index // 6 % 6]:02x}{levels[index % 6]:02x}"
    gray = 8 + (index - 232) * 10
    return f"#{gray:02x}{gray:02x}{gray:02x}"


def apply_sgr(codes: list[int], style: dict) -> None:
    """Update ``style`` (fg, bg, bold, italic, underline, reverse) with one SGR sequence."""
    i = 0
    while i < len(codes):
        code = codes[i]
        if code == 0:
            style.clear()
        elif code in (1, 3, 4, 7):
            style[{1: "bold", 3: "italic", 4: "underline", 7: "reverse"}[code]] = True
        elif code in (22, 23, 24, 27):
            style.pop({22: "bold", 23: "italic", 24: "underline", 27: "reverse"}[code], None)
        elif 30 <= code <= 37 or 90 <= code <= 97:
            style["fg"] = ANSI_16[code - 30 if code < 90 else code - 82]
        elif 40 <= code <= 47 or 100 <= code <= 107:
            style["bg"] = ANSI_16[code - 40 if code < 100 else code - 92]
        elif code in (39, 49):
            style.pop("fg" if code == 39 else "bg", None)
        elif code in (38, 48) and i + 1 < len(codes):
            key = "fg" if code == 38 else "bg"
            if codes[i + 1] == 5 and i + 2 < len(codes):
                style[key] = palette(codes[i + 2])
                i += 2
            elif codes[i + 1] == 2 and i + 4 < len(codes):
                style[key] = "#{:02x}{:02x}{:02x}".format(*codes[i + 2 : i + 5])
                i += 4
        i += 1


def ansi_to_svg(ansi: str) -> str:
    """An SVG of the pane: one rectangle per colored cell, one text element per character."""
    cells: list[str] = []
    glyphs: list[str] = []
    runs: list[tuple[int, int, int, str]] = []  # row, first column, columns, background
    for row, line in enumerate(ansi.split("\n")[:ROWS]):
        style: dict = {}
        column = 0
        for token in re.findall(r"\x1b\[[0-9;:]*m|\x1b[^\[]|[^\x1b]", line):
            if token.startswith("\x1b["):
                apply_sgr([int(part or 0) for part in re.split("[;:]", token[2:-1])], style)
                continue
            if token.startswith("\x1b"):
                continue
            width = 2 if unicodedata.east_asian_width(token) in ("W", "F") else 1
            fg, bg = style.get("fg", DEFAULT_FG), style.get("bg", DEFAULT_BG)
            if style.get("reverse"):
                fg, bg = bg, fg
            x, y = column * CELL_WIDTH, row * CELL_HEIGHT
            if bg != DEFAULT_BG:
                runs.append((row, column, width, bg))
            if token != " ":
                weight = ' font-weight="bold"' if style.get("bold") else ""
                slant = ' font-style="italic"' if style.get("italic") else ""
                baseline = y + CELL_HEIGHT * 0.78
                glyphs.append(
                    f'<text x="{x:.2f}" y="{baseline:.2f}" fill="{fg}"{weight}{slant}>{html.escape(token)}</text>'
                )
            if style.get("underline"):
                underline = y + CELL_HEIGHT - 2
                cells.append(
                    f'<rect x="{x:.2f}" y="{underline}" width="{CELL_WIDTH * width:.2f}" height="1" fill="{fg}"/>'
                )
            column += width
    # Neighbouring cells of one color become one rectangle: no seams between them.
    merged: list[list] = []
    for row, column, width, bg in runs:
        if merged and merged[-1][0] == row and merged[-1][1] + merged[-1][2] == column and merged[-1][3] == bg:
            merged[-1][2] += width
        else:
            merged.append([row, column, width, bg])
    backgrounds = [
        f'<rect x="{column * CELL_WIDTH:.2f}" y="{row * CELL_HEIGHT}" width="{width * CELL_WIDTH:.2f}" '
        f'height="{CELL_HEIGHT}" fill="{bg}" shape-rendering="crispEdges"/>'
        for row, column, width, bg in merged
    ]
    width, height = COLUMNS * CELL_WIDTH, ROWS * CELL_HEIGHT
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height}">'
        f'<rect width="100%" height="100%" fill="{DEFAULT_BG}"/>'
        + "".join(backgrounds)
        + "".join(cells)
        + f'<g font-family="DejaVu Sans Mono" font-size="{FONT_SIZE}">'
        + "".join(glyphs)
        + "</g></svg>"
    )


def capture(name: str, convert: str) -> None:
    """Keep the pane as text and as a PNG under editors/captures/."""
    (HERE / f"{name}.txt").write_text(tmux("capture-pane", "-p", "-t", SESSION), encoding="utf-8")
    svg = HERE / f"{name}.svg"
    svg.write_text(ansi_to_svg(tmux("capture-pane", "-p", "-e", "-t", SESSION)), encoding="utf-8")
    subprocess.run([convert, str(svg), "-strip", "-colors", "128", str(HERE / f"{name}.png")], check=True)
    svg.unlink()


def keys(*sequence: str, pause: float = 0.4) -> None:
    """Type each item: a tmux key name (Escape) or, failing that, its characters literally."""
    for item in sequence:
        literal = [] if re.fullmatch(r"[A-Z][a-z]+", item) else ["-l"]
        tmux("send-keys", "-t", SESSION, *literal, item)
        time.sleep(pause)


def main() -> None:
    if shutil.which("tmux") is None:
        raise SystemExit("tmux is not installed")
    convert = image_magick()
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        config = home / "config" / "nvim"
        (config / "lua").mkdir(parents=True)
        shutil.copy(PLUGIN / "example-init.lua", config / "init.lua")
        shutil.copy(PLUGIN / "lua" / "glassllm.lua", config / "lua" / "glassllm.lua")
        shutil.copy(HERE / "sample.md", home / "sample.md")
        environment = [f"XDG_{kind}_HOME={home / kind.lower()}" for kind in ("CONFIG", "DATA", "STATE", "CACHE")]
        command = " ".join(["env", *environment, "COLORTERM=truecolor", "nvim", "sample.md"])
        tmux("new-session", "-d", "-s", SESSION, "-x", str(COLUMNS), "-y", str(ROWS), "-c", folder, command)
        try:
            time.sleep(3)
            keys("3G04wlK", pause=1.0)
            capture("hover", convert)
            keys("Escape", "0v5e", pause=0.8)
            capture("selection", convert)
            keys("Escape", "5G0", "5w", "\\ge", pause=1.5)
            keys("/^Characters", "Enter", "zt", pause=0.5)
            capture("explain", convert)
        finally:
            tmux("kill-session", "-t", SESSION)


if __name__ == "__main__":
    main()
