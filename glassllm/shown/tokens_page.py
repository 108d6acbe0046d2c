"""The map of a repository's tokens: the self-contained page of ``glassllm tokens --html``.

The folder tree, each folder and file with a bar sized by its tokens, its count under each
tokenizer, its share of the total and its budget's use; the files over their budget
listed first. As the other pages (:mod:`glassllm.shown.html_page`): one file, a
Content-Security-Policy that forbids every request, light and dark schemes, English or
Portuguese. It needs no script: folders are ``<details>`` elements, which a keyboard
(Tab, Enter) and a screen reader open and close, and the rows wrap on a phone. The files
not counted are listed, each with its reason, in one more such element.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from string import Template

from glassllm import __version__
from glassllm.budgets import Budget
from glassllm.shown.html_page import page_head

__all__ = ["FileRow", "tokens_page"]


@dataclass(frozen=True)
class FileRow:
    """A counted file: its counts (one per tokenizer), and its budget with the index of the
    tokenizer that budget is counted with. ``lines``: a dataset's ``(line, tokens)`` per
    tokenizer (empty for a file counted whole), whose budget applies to each line;
    ``counted_as``: how each count was taken."""

    path: str
    counts: list[int]
    budget: Budget | None = None
    column: int = 0
    lines: list[tuple[tuple[int, int], ...]] = field(default_factory=list)
    counted_as: list[str] = field(default_factory=list)  # per tokenizer: see glassllm.file_tokens.COUNTED_AS

    @property
    def per_line(self) -> bool:
        return bool(self.lines and self.lines[self.column])

    @property
    def used(self) -> int:
        """What the budget is checked against: the file's count, or its largest line's."""
        if self.per_line:
            return max(count for _, count in self.lines[self.column])
        return self.counts[self.column]

    def lines_over(self) -> list[tuple[int, int]]:
        """A dataset's ``(line, tokens)`` past the budget, in order."""
        if self.budget is None or not self.per_line:
            return []
        return [(line, count) for line, count in self.lines[self.column] if count > self.budget.max_tokens]

    @property
    def over(self) -> int:
        return 0 if self.budget is None else max(self.used - self.budget.max_tokens, 0)

    @property
    def percent(self) -> float:
        """The budget's use in percent, rounded down to a tenth: 100.0 only at the budget."""
        return 0.0 if self.budget is None else math.floor(1000 * self.used / self.budget.max_tokens) / 10

    @property
    def failed(self) -> bool:
        """Over an ``error`` budget (over a ``warning`` one only warns)."""
        return self.over > 0 and self.budget is not None and self.budget.severity == "error"


_WORDS = {
    "en": {
        "title": "Tokens of a repository",
        "summary": "{files} files · {tokens} tokens ({tokenizer})",
        "skipped": "not counted: {skipped} files (binary, not UTF-8, too large or not regular); "
        "{ignored} entries skipped by .gitignore",
        "not_counted": "{skipped} files not counted",
        "totals": "Totals",
        "tokenizer": "tokenizer",
        "tokens": "tokens",
        "over": "Over budget",
        "none_over": "Every file is within its budget.",
        "no_budgets": "No budget applies to these files (--max-tokens, or the budgets of pyproject.toml or "
        ".glassllm.toml).",
        "tree": "Folders and files, the largest first",
        "share": "of the total",
        "budget": "{percent}% of {limit}",
        "over_by": "{over} over the budget of {limit} for {glob} ({tokenizer})",
        "warning": "warning",
        "help": "Open or close a folder with a click, a tap, or Tab and Enter.",
        "made": "Made by glassllm {version}: each count is the tokenizer's encode of the file's text.",
    },
    "pt": {
        "title": "Tokens de um repositório",
        "summary": "{files} arquivos · {tokens} tokens ({tokenizer})",
        "skipped": "não contados: {skipped} arquivos (binários, não UTF-8, grandes demais ou não comuns); "
        "{ignored} entradas ignoradas pelo .gitignore",
        "not_counted": "{skipped} arquivos não contados",
        "totals": "Totais",
        "tokenizer": "tokenizador",
        "tokens": "tokens",
        "over": "Acima do orçamento",
        "none_over": "Todo arquivo está dentro do seu orçamento.",
        "no_budgets": "Nenhum orçamento vale para estes arquivos (--max-tokens, ou os orçamentos do pyproject.toml "
        "ou do .glassllm.toml).",
        "tree": "Pastas e arquivos, os maiores primeiro",
        "share": "do total",
        "budget": "{percent}% de {limit}",
        "over_by": "{over} acima do orçamento de {limit} para {glob} ({tokenizer})",
        "warning": "aviso",
        "help": "Abra ou feche uma pasta com um clique, um toque, ou Tab e Enter.",
        "made": "Feito pelo glassllm {version}: cada contagem é o encode do tokenizador sobre o texto do arquivo.",
    },
}


class _Words:
    def __init__(self, language: str) -> None:
        if language not in _WORDS:
            raise ValueError(f"unknown page language {language!r}: use one of {', '.join(_WORDS)}")
        self.language = language

    def __call__(self, key: str, **values: object) -> str:
        return escape(_WORDS[self.language][key].format(**values))

    def integer(self, number: int) -> str:
        text = f"{number:,}"
        return text.replace(",", ".") if self.language == "pt" else text

    def percent(self, part: int, whole: int) -> str:
        return self.decimal(100 * part / whole if whole else 0.0)

    def decimal(self, number: float) -> str:
        text = f"{number:.1f}"
        return text.replace(".", ",") if self.language == "pt" else text


@dataclass
class _Folder:
    name: str
    folders: dict[str, _Folder] = field(default_factory=dict)
    files: list[FileRow] = field(default_factory=list)
    tokens: int = 0


def _tree(rows: list[FileRow]) -> _Folder:
    root = _Folder("")
    for row in rows:
        *folders, _ = os.path.normpath(row.path).split(os.sep)
        here = root
        here.tokens += row.counts[0]
        for name in folders:
            here = here.folders.setdefault(name or os.sep, _Folder(name or os.sep))
            here.tokens += row.counts[0]
        here.files.append(row)
    return root


def _bar(tokens: int, total: int, words: _Words) -> str:
    width = 100 * tokens / total if total else 0
    return (
        f'<span class="bar" aria-hidden="true"><span style="width: {width:.2f}%"></span></span>'
        f'<span class="share">{words.percent(tokens, total)}% {words("share")}</span>'
    )


def _file(row: FileRow, names: list[str], total: int, words: _Words) -> str:
    counts = " · ".join(f"{words.integer(n)} {escape(name)}" for n, name in zip(row.counts, names, strict=True))
    budget = ""
    if row.budget is not None:
        state = "failed" if row.failed else "warned" if row.over else "within"
        text = words("budget", percent=words.decimal(row.percent), limit=words.integer(row.budget.max_tokens))
        budget = f'<span class="budget {state}">{text}</span>'
    return (
        f'<li class="row"><span class="name">{escape(os.path.basename(row.path))}</span>'
        f'{_bar(row.counts[0], total, words)}<span class="count">{counts}</span>{budget}</li>'
    )


def _folder(folder: _Folder, names: list[str], total: int, words: _Words, depth: int) -> str:
    items = [
        (sub.tokens, f"<li>{_folder(sub, names, total, words, depth + 1)}</li>") for sub in folder.folders.values()
    ]
    items += [(row.counts[0], _file(row, names, total, words)) for row in folder.files]
    items.sort(key=lambda item: -item[0])
    inner = f'<ul class="tree">{"".join(html for _, html in items)}</ul>'
    if depth == 0:
        return inner
    summary = (
        f'<summary class="row"><span class="name">{escape(folder.name)}/</span>'
        f'{_bar(folder.tokens, total, words)}<span class="count">{words.integer(folder.tokens)}</span></summary>'
    )
    return f"<details{' open' if depth <= 2 else ''}>{summary}{inner}</details>"


def _over(rows: list[FileRow], names: list[str], words: _Words) -> str:
    over = sorted((row for row in rows if row.over and row.budget), key=lambda row: -row.over)
    if not over:
        budgeted = any(row.budget is not None for row in rows)
        return f'<p class="note">{words("none_over" if budgeted else "no_budgets")}</p>'
    items = []
    for row in over:
        assert row.budget is not None  # filtered above
        said = words(
            "over_by",
            over=words.integer(row.over),
            limit=words.integer(row.budget.max_tokens),
            glob=row.budget.files,
            tokenizer=names[row.column],
        )
        warning = f' <span class="budget warned">{words("warning")}</span>' if not row.failed else ""
        items.append(
            f"<li><code>{escape(row.path)}</code>: {words.integer(row.used)} {words('tokens')}, {said}{warning}</li>"
        )
    return f'<ul class="over">{"".join(items)}</ul>'


def _not_counted(skipped: Sequence[tuple[str, str]], words: _Words) -> str:
    if not skipped:
        return ""
    items = "".join(f"<li><code>{escape(path)}</code>: {escape(reason)}</li>" for path, reason in skipped)
    summary = f'<summary class="row"><span class="name">{words("not_counted", skipped=words.integer(len(skipped)))}'
    return f'<details class="skipped">{summary}</span></summary><ul class="files">{items}</ul></details>'


def tokens_page(
    rows: list[FileRow],
    names: list[str],
    language: str,
    *,
    skipped: Sequence[tuple[str, str]] = (),
    ignored: int = 0,
) -> str:
    """The page of ``rows`` counted with the tokenizers ``names`` (the first one sizes the
    bars), in ``language`` (``"en"`` or ``"pt"``); ``skipped``: each file not counted and
    why, in that language; ``ignored``: the entries ``.gitignore`` skipped."""
    words = _Words(language)
    total = sum(row.counts[0] for row in rows)
    totals = "".join(
        f'<tr><th scope="row">{escape(name)}</th><td>{words.integer(sum(row.counts[i] for row in rows))}</td></tr>'
        for i, name in enumerate(names)
    )
    body = (
        f'<section aria-labelledby="over"><h2 id="over">{words("over")}</h2>{_over(rows, names, words)}</section>'
        f'<section aria-labelledby="tree"><h2 id="tree">{words("tree")}</h2>'
        f"{_folder(_tree(rows), names, total, words, 0)}</section>"
        f'<section aria-labelledby="totals"><h2 id="totals">{words("totals")}</h2><div class="scroll">'
        f'<table class="totals"><thead><tr><th scope="col">{words("tokenizer")}</th><th scope="col">'
        f"{words('tokens')}</th></tr></thead><tbody>{totals}</tbody></table></div>"
        f'<p class="note">{words("skipped", skipped=words.integer(len(skipped)), ignored=words.integer(ignored))}</p>'
        f"{_not_counted(skipped, words)}</section>"
    )
    summary = words("summary", files=words.integer(len(rows)), tokens=words.integer(total), tokenizer=names[0])
    return _PAGE.substitute(
        head=page_head(language, words("title"), _CSS, _POLICY),
        title=words("title"),
        summary=summary,
        help=words("help"),
        body=body,
        made=words("made", version=__version__),
    )


# Nothing may leave the page, and it runs no script at all.
_POLICY = "default-src 'none'; style-src 'unsafe-inline'"
_CSS = """
:root { color-scheme: light dark; --bg: #fdfdfc; --fg: #1b1b1f; --muted: #5b5b66; --line: #d4d4dc;
  --bar: #7fb6e6; --focus: #1a56db; --over: #b3121f; --warn: #8a5a00; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #17171c; --fg: #ececf1; --muted: #a9a9b8; --line: #3a3a46; --bar: #2f6b9e; --focus: #7eb0ff;
    --over: #ff8a8a; --warn: #f0c060; }
}
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 72rem; padding: 1rem; background: var(--bg); color: var(--fg);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; } h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
code, .name { font-family: ui-monospace, "Cascadia Mono", "DejaVu Sans Mono", monospace; overflow-wrap: anywhere; }
.help, .note, footer, .share { color: var(--muted); }
.tree { list-style: none; margin: 0; padding-left: 1.1rem; } main > section > .tree { padding-left: 0; }
.row { display: flex; flex-wrap: wrap; align-items: center; gap: .15rem .75rem; padding: .2rem 0;
  border-bottom: 1px solid var(--line); }
summary.row { cursor: pointer; list-style: none; } summary.row::-webkit-details-marker { display: none; }
summary.row::before { content: "▸"; color: var(--muted); } details[open] > summary.row::before { content: "▾"; }
summary:focus-visible { outline: 3px solid var(--focus); outline-offset: 1px; }
.name { flex: 1 1 14rem; min-width: 0; }
.bar { flex: 0 0 8rem; height: .7rem; border: 1px solid var(--line); border-radius: .2rem; overflow: hidden; }
.bar > span { display: block; height: 100%; background: var(--bar); }
.share { flex: 0 0 8rem; font-size: .85rem; } .count { font-variant-numeric: tabular-nums; }
.budget { font-size: .9rem; } .budget.failed { color: var(--over); font-weight: 700; }
.budget.warned { color: var(--warn); font-weight: 700; }
.over, .files { padding-left: 1.25rem; } .over li, .files li { margin: .2rem 0; }
.scroll { overflow-x: auto; } table { border-collapse: collapse; }
th, td { padding: .25rem .6rem; border-bottom: 1px solid var(--line); text-align: left; }
.totals td { text-align: right; font-variant-numeric: tabular-nums; }
@media (max-width: 40rem) { body { padding: .75rem; } .bar, .share { flex-basis: 6rem; } }
"""
_PAGE = Template("""$head<body>
<header><h1>$title</h1><p class="note">$summary</p><p class="help">$help</p></header>
<main>$body</main>
<footer><p>$made</p></footer>
</body>
</html>
""")
