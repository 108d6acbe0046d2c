"""``glassllm tokens``: each file's tokens and the total, against the repository's budgets.

    $ glassllm tokens README.md docs/models.md --max-tokens 10000
        pt   share  budget                  file
    11,979   63.6%  119.7% of 10,000  over  README.md
     6,848   36.4%  68.4% of 10,000         docs/models.md
    18,827  100.0%                          total: 2 files

Files, folders and globs are counted as :mod:`glassllm.file_tokens` finds and counts them
(a chat file as its prompts, through the tokenizer's chat format; a "counted as" column
says how, when some file is not counted as its plain text); ``--with`` adds a column per
tokenizer. A JSON Lines dataset's budget is each line's, and each line over it is named.
The budgets are ``--max-tokens``, else the repository's (:mod:`glassllm.budgets`). Each
file over an ``error`` budget is named on standard error with how far over it is, and
the command ends with exit status 1; one over a ``warning`` budget is named too, and the
status stays 0. A file that cannot be read
also makes the status 1: its tokens were not counted.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from glassllm.budgets import Budget, BudgetConfig, find_budgets, read_budgets
from glassllm.count_cache import CountCache, cache_path
from glassllm.file_tokens import MAX_FILE_BYTES, Counted, FileCount, LazyTokenizer, count_files, find_files
from glassllm.shown.html_page import LANGUAGES
from glassllm.shown.problems import Locale, Problem, describe, environment_locale, number_pt, problem
from glassllm.shown.tokens_page import FileRow, tokens_page

__all__ = ["add_parser"]


def _config(args: argparse.Namespace) -> BudgetConfig | None:
    if args.max_tokens is not None:
        if args.max_tokens < 1:
            raise problem(
                ValueError, "budgets.max_tokens", path="--max-tokens", key="--max-tokens", found=args.max_tokens
            )
        return BudgetConfig(max_tokens=args.max_tokens, source="--max-tokens")
    if args.jobs is not None and args.jobs < 1:
        raise problem(ValueError, "count.jobs", jobs=args.jobs)
    if args.config:
        named = read_budgets(args.config)
        if named is None:  # a pyproject.toml without the table: say so rather than check nothing
            raise problem(ValueError, "budgets.no_table", path=args.config)
        return named
    return find_budgets()


def _columns(args: argparse.Namespace, config: BudgetConfig | None, budgets: list[Budget | None]) -> list[str]:
    """The tokenizers to count with: ``-t`` (else the configuration's, else ``pt``), each
    ``--with``, then any a budget names that is not among them."""
    first = args.tokenizer or (config.tokenizer if config else None) or "pt"
    names = [first, *(args.compare_with or ())]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise problem(ValueError, "cli.twice", names=", ".join(repeated))
    for budget in budgets:
        if budget is not None and budget.tokenizer is not None and budget.tokenizer not in names:
            names.append(budget.tokenizer)
    return names


def run(args: argparse.Namespace, out: TextIO) -> None:
    """Count, print, and raise a problem (exit status 1) when a file is over an error
    budget or could not be read."""
    locale = environment_locale()
    config = _config(args)
    found = find_files(args.paths)
    for error in found.problems:
        sys.stderr.write(f"glassllm tokens: {_shown(describe(error, locale))}\n")
    budgets = {path: config.budget_for(path) if config else None for path in found.files}
    names = _columns(args, config, list(budgets.values()))
    tokenizers = [LazyTokenizer(name, args.match_specials) for name in names]
    cache = None if args.no_cache else CountCache()
    progress = _Progress(sys.stderr, args.quiet)
    try:
        counted = count_files(
            found.files, tokenizers, limit=args.max_file_mb << 20, jobs=args.jobs, cache=cache, progress=progress
        )
        _chat_as_text(counted, tokenizers, locale)
    finally:
        progress.close()
        if cache is not None:
            cache.close()
        for tokenizer in tokenizers:
            tokenizer.close()
    rows = [_row(path, counts, budgets[path], names) for path, counts in counted.files.items()]
    rows.sort(key=lambda row: (-row.counts[0], row.path))
    if args.json:
        out.write(json.dumps(_as_json(rows, names, counted, found.ignored, config), ensure_ascii=False) + "\n")
    if args.html_page:
        language = args.lang or locale
        skipped = [(_shown(file.path), file.reason_in(language)) for file in counted.skipped]
        page = tokens_page(rows, names, language, skipped=skipped, ignored=found.ignored)
        Path(args.html_page).write_text(page, encoding="utf-8")
        out.write(f"{args.html_page}: tokens page ({language}), open it in a browser\n")
    if not args.json and not args.html_page:
        _write_table(rows, names, out)
    if not args.json:
        _write_skipped(counted, found.ignored, locale)
    _verdict(rows, names, counted, len(found.problems), locale)


def _shown(text: str) -> str:
    """``text`` with the bytes of a file name that are not UTF-8 (which Python reads as
    lone surrogates, and no UTF-8 output can write) as ``\\xNN``."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _row(path: str, counts: list[FileCount], budget: Budget | None, names: list[str]) -> FileRow:
    column = 0 if budget is None or budget.tokenizer is None else names.index(budget.tokenizer)
    totals = [count.tokens for count in counts]
    return FileRow(_shown(path), totals, budget, column, [count.lines for count in counts], _counted_as(counts))


def _counted_as(counts: list[FileCount]) -> list[str]:
    return [count.counted_as for count in counts]


def _chat_as_text(counted: Counted, tokenizers: list[LazyTokenizer], locale: Locale) -> None:
    """Say once per tokenizer that chat files were counted as text, and why."""
    for index, tokenizer in enumerate(tokenizers):
        files = sum(row[index].counted_as == "chat-as-text" for row in counted.files.values())
        if not files:
            continue
        tokenizer.chat()  # loaded only now when the counts came from the cache: to say why
        reason = describe(tokenizer.chat_problem, locale) if tokenizer.chat_problem else ""
        found = Problem("tokens.chat_as_text", {"files": files, "tokenizer": tokenizer.spec, "reason": reason})
        sys.stderr.write(f"glassllm tokens: {_shown(found.text(locale))}\n")


def _verdict(rows: list[FileRow], names: list[str], counted: Counted, missing: int, locale: Locale) -> None:
    over = 0
    for row in rows:
        if row.budget is None or not row.over:
            continue
        code = "tokens.over_file" if row.failed else "tokens.warn_file"
        over += row.failed
        # A dataset's budget is each line's: each line over is named, as the editor marks it.
        named = [(f"{row.path}:{line}", count) for line, count in row.lines_over()] or [(row.path, row.used)]
        for path, tokens in named:
            fields = {"path": path, "tokens": tokens, "over": tokens - row.budget.max_tokens}
            fields |= {"limit": row.budget.max_tokens}
            fields |= {key + "_pt": number_pt(value) for key, value in fields.items() if isinstance(value, int)}
            fields |= {"budget": row.budget.files, "tokenizer": names[row.column]}
            sys.stderr.write(Problem(code, fields).text(locale) + "\n")
    for error in counted.errors:
        sys.stderr.write(f"glassllm tokens: {_shown(describe(error, locale))}\n")
    if over:
        raise problem(ValueError, "tokens.over", files=over)
    if counted.errors or missing:
        raise problem(ValueError, "tokens.unreadable", files=len(counted.errors) + missing)


def _budget_cell(row: FileRow) -> str:
    if row.budget is None:
        return ""
    mark = "" if not row.over else "  over" if row.budget.severity == "error" else "  warning"
    return f"{row.percent:.1f}% of {row.budget.max_tokens:,}{mark}"


# How a file was counted, in the table's words.
_COUNTED_AS = {"text": "text", "records": "records' text", "chat": "chat prompts", "chat-as-text": "text"}


def _counted_cell(row: FileRow) -> str:
    return " / ".join(dict.fromkeys(_COUNTED_AS[how] for how in row.counted_as))


def _write_table(rows: list[FileRow], names: list[str], out: TextIO) -> None:
    totals = [sum(row.counts[i] for row in rows) for i in range(len(names))]
    grand = totals[0]
    # A "counted as" column only when some file is not counted as its plain text.
    how = any(kind != "text" for row in rows for kind in row.counted_as)
    titles = [*names, "share", *(["counted as"] if how else []), "budget", "file"]
    lines = [
        [
            *(f"{n:,}" for n in row.counts),
            _share(row.counts[0], grand),
            *([_counted_cell(row)] if how else []),
            _budget_cell(row),
            row.path,
        ]
        for row in rows
    ]
    noun = "file" if len(rows) == 1 else "files"
    ending = ["", "", f"total: {len(rows):,} {noun}"] if how else ["", f"total: {len(rows):,} {noun}"]
    lines.append([*(f"{n:,}" for n in totals), _share(grand, grand), *ending])
    widths = [max(len(line[i]) for line in [titles, *lines]) for i in range(len(titles) - 1)]
    numbers = len(names) + 1
    for line in [titles, *lines]:
        cells = [cell.rjust(width) for cell, width in zip(line[:numbers], widths, strict=False)]
        cells += [cell.ljust(width) for cell, width in zip(line[numbers:-1], widths[numbers:], strict=True)]
        out.write("  ".join([*cells, line[-1]]).rstrip() + "\n")


def _share(count: int, total: int) -> str:
    return f"{100 * count / total:.1f}%" if total else "-"


def _write_skipped(counted: Counted, ignored: int, locale: Locale) -> None:
    """One line per file not counted (a binary too: a path a user named may be one), and
    how many entries git's excludes skipped."""
    for skipped in counted.skipped:
        sys.stderr.write(_shown(describe(skipped, locale)) + "\n")
    if ignored:
        line = (
            f"{ignored:,} entries skipped by .gitignore"
            if locale != "pt"
            else f"{number_pt(ignored)} entradas ignoradas pelo .gitignore"
        )
        sys.stderr.write(line + "\n")


def _as_json(
    rows: list[FileRow], names: list[str], counted: Counted, ignored: int, config: BudgetConfig | None
) -> dict[str, Any]:
    grand = sum(row.counts[0] for row in rows)
    return {
        "tokenizers": names,
        "config": config.source if config else None,
        "files": [
            {
                "path": row.path,
                "tokens": dict(zip(names, row.counts, strict=True)),
                "share": round(row.counts[0] / grand, 6) if grand else 0.0,
                "counted_as": dict(zip(names, row.counted_as, strict=True)),
                # A dataset's count of each line: [line, tokens] (lines from 1), per tokenizer.
                "lines": {name: [list(pair) for pair in lines] for name, lines in zip(names, row.lines, strict=True)},
                "budget": _budget_json(row, names),
            }
            for row in rows
        ],
        "total": {name: sum(row.counts[i] for row in rows) for i, name in enumerate(names)},
        "over": [row.path for row in rows if row.failed],
        "skipped": [{"path": _shown(skipped.path), "reason": skipped.reason} for skipped in counted.skipped],
        "ignored": ignored,
        "unreadable": [_shown(str(error)) for error in counted.errors],
    }


def _budget_json(row: FileRow, names: list[str]) -> dict[str, Any] | None:
    if row.budget is None:
        return None
    return {
        "files": row.budget.files,
        "maxTokens": row.budget.max_tokens,
        "tokenizer": names[row.column],
        "severity": row.budget.severity,
        "used": round(row.used / row.budget.max_tokens, 6),
        "over": row.over,
        # A dataset's budget is each line's: "used" and "over" are its largest line's.
        "per": "line" if row.per_line else "file",
        "lines_over": [line for line, _ in row.lines_over()],
    }


class _Progress:
    """A tqdm bar of the bytes tokenized, on a terminal only (as ``glassllm train`` shows its own)."""

    def __init__(self, stream: TextIO, quiet: bool) -> None:
        self.stream, self.quiet = stream, quiet
        self.bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self.quiet or not self.stream.isatty():
            return
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(
                total=total, desc="tokenizing", unit="B", unit_scale=True, unit_divisor=1000, file=self.stream
            )
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _positive(value: str) -> int:
    """An argument that must be a positive integer (argparse reports anything else)."""
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {number}")
    return number


def add_parser(command: Callable[..., argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add ``tokens`` with ``command(name, help, uses_tokenizer)`` of the CLI's parser."""
    sub = command("tokens", "count each file's tokens and the total, and check them against token budgets", False)
    sub.epilog = (
        "Exit status 1 when a file is over an error budget (each is named on standard error, with how far over) "
        "or could not be read; budgets: --max-tokens, else [tool.glassllm] in pyproject.toml or .glassllm.toml."
    )
    sub.add_argument("paths", nargs="+", metavar="PATH", help="files, folders (walked as git lists them) or globs")
    sub.add_argument(
        "--tokenizer",
        "-t",
        help="pt, en, a tokenizer file (glassllm JSON, Hugging Face tokenizer.json, Tekken JSON, SentencePiece "
        ".model) or hf:ORG/NAME from the local Hugging Face cache (default: the configuration's tokenizer, else pt)",
    )
    sub.add_argument(
        "--with",
        "-w",
        dest="compare_with",
        action="append",
        metavar="TOKENIZER",
        help="another tokenizer to count with, in a column of its own; repeat for several",
    )
    sub.add_argument("--match-specials", action="store_true", help="read special-token text as the special tokens")
    sub.add_argument("--max-tokens", type=int, help="the budget of every file (instead of the repository's budgets)")
    sub.add_argument("--config", help="read the budgets from this .glassllm.toml or pyproject.toml")
    sub.add_argument("--json", action="store_true", help="print everything as JSON, for tools")
    # Not ``dest="html"``: the CLI's main sends every command with ``args.html`` to the text pages.
    sub.add_argument("--html", dest="html_page", metavar="PAGE", help="write the map of the tokens to this HTML page")
    sub.add_argument(
        "--lang", choices=LANGUAGES, help="the page's language (default: from LC_ALL, LC_MESSAGES or LANG)"
    )
    sub.add_argument("--jobs", "-j", type=int, help="count in this many processes (default: one per core)")
    sub.add_argument(
        "--max-file-mb",
        type=_positive,
        default=MAX_FILE_BYTES >> 20,
        help=f"skip files larger than this many MB (default {MAX_FILE_BYTES >> 20})",
    )
    sub.add_argument("--no-cache", action="store_true", help=f"neither read nor write the cache ({cache_path()})")
    sub.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    sub.set_defaults(run=run)
    return sub
