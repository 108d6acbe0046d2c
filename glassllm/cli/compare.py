"""``glassllm compare``: the same text through several tokenizers, chunk by chunk.

    $ glassllm compare "A menina bonita" --with en
    chunk     pt            en
    A         A         1   A           1
    ▁menina   ▁men·ina  2   ▁men·in·a   3
    ...

The first tokenizer is ``--tokenizer`` (``pt`` by default); ``--with`` adds one (a
packaged name or a path; repeat it for several; by default the other packaged one). On a
terminal the pieces show as coloured bands, as ``glassllm inspect`` shows them.
"""

from __future__ import annotations

import argparse
import json
import os
import unicodedata
from typing import Any, TextIO

from glassllm.compare import ComparedChunk, Comparison, compare
from glassllm.packaged import PACKAGED, load_tokenizer
from glassllm.pipeline.any_tokenizer import AnyTokenizer
from glassllm.shown.problems import problem
from glassllm.shown.visible import visible

__all__ = ["add_parser", "tokenizer_names"]

_COLORS = ("\x1b[30;46m", "\x1b[30;43m")  # the bands of ``glassllm inspect``
_RESET = "\x1b[0m"


def _width(text: str) -> int:
    """Terminal columns ``text`` takes: wide (CJK, emoji) 2, combining marks 0."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _pad(text: str, shown: str, width: int) -> str:
    return shown + " " * max(width - _width(text), 0)


def _pieces(pieces: tuple[str, ...], color: bool) -> tuple[str, str]:
    """The pieces (readable already) as plain text (for widths) and as shown: bands, or
    joined with ``·``."""
    plain = "·".join(map(visible, pieces))
    if not color:
        return plain, plain
    plain = "".join(map(visible, pieces))
    return plain, "".join(f"{_COLORS[i % 2]}{visible(p)}{_RESET}" for i, p in enumerate(pieces))


def _write_chunks(
    chunks: list[ComparedChunk], names: tuple[str, ...], readers: list[AnyTokenizer], color: bool, out: TextIO
) -> None:
    rows = []
    for chunk in chunks:
        cells = [(visible(chunk.chunk), visible(chunk.chunk))]
        for pieces, tok in zip(chunk.pieces, readers, strict=True):
            cells.append(_pieces(tuple(map(tok.readable, pieces)), color))
            count = str(len(pieces))
            cells.append((count, count))
        rows.append(cells)
    header = ["chunk"] + [cell for name in names for cell in (name, "")]
    widths = [max([_width(header[i])] + [_width(row[i][0]) for row in rows]) for i in range(len(header))]
    out.write(
        "  ".join(_pad(title, title, width) for title, width in zip(header, widths, strict=False)).rstrip() + "\n"
    )
    for cells in rows:
        out.write(
            "  ".join(_pad(plain, shown, width) for (plain, shown), width in zip(cells, widths, strict=False)).rstrip()
            + "\n"
        )


def _write_totals(comparison: Comparison, out: TextIO) -> None:
    titles = ("tokenizer", "tokens", "chunks", "unknown", "chars/token")
    rows = [
        (t.name, f"{t.tokens:,}", f"{t.chunks:,}", f"{t.unknown:,}", f"{t.chars_per_token:.2f}")
        for t in comparison.totals
    ]
    widths = [max(_width(row[i]) for row in [titles, *rows]) for i in range(len(titles))]
    for row in [titles, *rows]:
        first = _pad(row[0], row[0], widths[0])
        out.write(
            "  ".join([first] + [value.rjust(width) for value, width in zip(row[1:], widths[1:], strict=False)]) + "\n"
        )


def _as_json(comparison: Comparison) -> dict[str, Any]:
    names = comparison.names
    return {
        "tokenizers": list(names),
        "totals": [
            {
                "tokenizer": t.name,
                "tokens": t.tokens,
                "chunks": t.chunks,
                "characters": t.characters,
                "unknown": t.unknown,
                "charsPerToken": round(t.chars_per_token, 4),
            }
            for t in comparison.totals
        ],
        "chunks": [
            {
                "index": c.index,
                "chunk": c.chunk,
                "start": c.start,
                "end": c.end,
                "pieces": dict(zip(names, map(list, c.pieces), strict=False)),
                "ids": dict(zip(names, map(list, c.ids), strict=False)),
            }
            for c in comparison.chunks
        ],
        "mostDifferent": [c.index for c in comparison.most_different()],
    }


def _others(first: str) -> list[str]:
    return [name for name in PACKAGED if name != first]


def tokenizer_names(args: argparse.Namespace) -> list[str]:
    """``args.tokenizer`` and each ``args.compare_with`` (by default the other packaged one)."""
    names = [args.tokenizer, *(args.compare_with or _others(args.tokenizer))]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise problem(ValueError, "cli.twice", names=", ".join(repeated))
    return names


def run(args: argparse.Namespace, out: TextIO, text: str) -> None:
    """Compare ``text`` under ``args.tokenizer`` and each ``args.compare_with``."""
    names = tokenizer_names(args)
    tokenizers = {name: load_tokenizer(name, match_specials=args.match_specials) for name in names}
    comparison = compare(text, tokenizers)
    if args.json:
        out.write(json.dumps(_as_json(comparison), ensure_ascii=False) + "\n")
        return
    color = out.isatty() and not os.environ.get("NO_COLOR")
    chunks = comparison.chunks
    if 0 < args.limit < len(chunks):
        shown = comparison.most_different(args.limit)
        out.write(
            f"{len(chunks):,} chunks; the {len(shown):,} that the tokenizers split most differently "
            f"(--limit 0 shows them all):\n\n"
        )
        chunks = shown
    _write_chunks(chunks, comparison.names, list(tokenizers.values()), color, out)
    out.write("\n")
    _write_totals(comparison, out)


def add_parser(command: Any, read_text: Any) -> argparse.ArgumentParser:
    """Add the ``compare`` subcommand with ``command(name, help)`` of the CLI's parser and
    return it; ``read_text(args)`` reads the text from the argument, ``--file`` or standard input."""
    sub = command("compare", "show a text through several tokenizers, chunk by chunk, with the totals")
    sub.add_argument("text", nargs="?", help="the text (default: standard input)")
    sub.add_argument("--file", "-f", help="read the text from this file")
    sub.add_argument(
        "--with",
        "-w",
        dest="compare_with",
        action="append",
        metavar="TOKENIZER",
        help="a tokenizer to compare with, as --tokenizer names one; repeat for several "
        "(default: the other packaged tokenizer)",
    )
    sub.add_argument("--json", action="store_true", help="print everything as JSON, for scripts")
    sub.add_argument(
        "--limit",
        type=int,
        default=500,
        help="past this many chunks, show only this many, the most different first (0: all; default 500)",
    )
    sub.set_defaults(run=lambda args, out: run(args, out, read_text(args)))
    return sub
