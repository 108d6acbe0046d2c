"""The ``glassllm`` command: encode, decode, explain, count, train, export, inspect and compare
from a terminal.

Every subcommand takes ``--tokenizer pt|en|PATH`` (``pt`` by default). Text comes from
the command line, or from standard input when it is ``-`` or absent. ``inspect``,
``compare`` and ``explain`` also write a self-contained HTML page (``--html PAGE``);
``glassllm completion SHELL`` prints the shell's tab-completion script.
"""

# PYTHON_ARGCOMPLETE_OK

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

import argcomplete
from argcomplete.shell_integration import shellcode

from glassllm import __version__, cli_compare, cli_train, html_page
from glassllm.cli_train import refuse_to_replace
from glassllm.packaged import load_tokenizer
from glassllm.places import TextPlaces
from glassllm.problems import Problem, describe, environment_locale
from glassllm.tokenizer import UNK_ID
from glassllm.visible import visible

__all__ = ["main"]


def _say(code: str, **fields: object) -> str:
    """A message of the command line's own, in the language of its environment."""
    return Problem(code, fields).text(environment_locale())


def _read_text(args: argparse.Namespace) -> str:
    if getattr(args, "file", None):
        return Path(args.file).read_text(encoding="utf-8")
    if args.text is None or args.text == "-":
        return sys.stdin.read()
    return args.text


def _encode(args: argparse.Namespace, out: TextIO) -> None:
    tok = load_tokenizer(args.tokenizer)
    ids = tok.encode(_read_text(args))
    out.write(json.dumps(ids) + "\n" if args.json else " ".join(map(str, ids)) + "\n")


def _decode(args: argparse.Namespace, out: TextIO) -> None:
    tok = load_tokenizer(args.tokenizer)
    raw = args.ids if args.ids else sys.stdin.read().replace(",", " ").strip("[] \n").split()
    try:
        ids = [int(value.strip("[],")) for value in raw]
    except ValueError as error:
        raise SystemExit(f"glassllm decode: {_say('cli.ids', reason=error)}") from None
    try:
        out.write(tok.decode(ids) + "\n")
    except IndexError:
        bad = [i for i in ids if not -tok.vocab_size <= i < tok.vocab_size]
        raise SystemExit(f"glassllm decode: {_say('cli.range', size=tok.vocab_size, bad=bad)}") from None


def _explain(args: argparse.Namespace, out: TextIO) -> None:
    tok = load_tokenizer(args.tokenizer)
    for item in tok.explain(_read_text(args)):
        out.write(f"chunk {item.index}: '{visible(item.chunk)}'\n")
        out.write(f"  start    {' '.join(map(visible, item.characters))}\n")
        for step in item.steps:
            seen = "" if step.count is None else f"  (seen {step.count:,} times in training)"
            pair = f"{visible(step.pair[0])} + {visible(step.pair[1])} → {visible(step.result)}"
            out.write(f"  rank {step.rank:>4} {pair}{seen}\n")
            out.write(f"           {' '.join(map(visible, step.pieces))}\n")
        ids = ", ".join(str(i) for i in item.ids)
        out.write(f"  pieces   {' | '.join(map(visible, item.pieces))}   ids [{ids}]\n")


def _export(args: argparse.Namespace, out: TextIO) -> None:
    tok = load_tokenizer(args.tokenizer)
    refuse_to_replace(args.output, args.force, hugging_face=True)
    tok.save_hf(args.output)
    out.write(f"{args.output}: Hugging Face tokenizer, {tok.vocab_size} entries ({len(tok.merges)} merges)\n")


_COLORS = ("\x1b[30;46m", "\x1b[30;43m")  # alternating bands, like the web playgrounds
_RESET = "\x1b[0m"


def _inspect(args: argparse.Namespace, out: TextIO) -> None:
    tok = load_tokenizer(args.tokenizer)
    text = _read_text(args)
    spans = tok.encode_spans(text)
    shown = spans[: args.limit] if args.limit > 0 else spans
    color = out.isatty() and not os.environ.get("NO_COLOR")
    bands = []
    for index, span in enumerate(shown):
        # The text as given, spaces as ▁; a line break as ⏎ and a break, so lines stay lines.
        surface = "⏎\n".join(map(visible, text[span.start : span.end].replace(" ", "▁").split("\n")))
        bands.append(f"{_COLORS[index % 2]}{surface}{_RESET}" if color else f"[{surface}]")
    out.write("".join(bands) + "\n\n")
    out.write(f"{'#':>5}  {'id':>5}  {'chunk':>5}  {'at':<11}  piece\n")
    lines = TextPlaces(text)
    for index, span in enumerate(shown):
        note = "  (<unk>)" if span.id == UNK_ID else ""
        at = lines.span(span.start, span.end)
        piece = visible(span.piece)
        out.write(f"{index:>5}  {span.id:>5}  {span.chunk:>5}  {at:<11}  '{piece}'{note}\n")
    if len(shown) < len(spans):
        out.write(f"… the first {len(shown):,} of {len(spans):,} tokens (--limit 0 shows them all)\n")
    chunks = spans[-1].chunk + 1 if spans else 0
    unknown = sum(span.id == UNK_ID for span in spans)
    ratio = f" · {len(text) / len(spans):.2f} chars/token" if spans else ""
    out.write(
        f"\n{len(spans):,} tokens · {chunks:,} chunks · {len(text):,} characters{ratio}"
        f" · {unknown} unknown · tokenizer {args.tokenizer}\n"
    )


_SHELLS = ("bash", "zsh", "fish", "tcsh", "powershell")


def _completion(args: argparse.Namespace, out: TextIO) -> None:
    out.write(shellcode(["glassllm"], shell=args.shell))


def _write_html(args: argparse.Namespace, out: TextIO) -> None:
    text = _read_text(args)
    language = args.lang or environment_locale()
    if args.command == "compare":
        names = cli_compare.tokenizer_names(args)
        page = html_page.compare_page(text, {name: load_tokenizer(name) for name in names}, language)
    else:
        page = html_page.PAGES[args.command](text, args.tokenizer, load_tokenizer(args.tokenizer), language)
    Path(args.html).write_text(page, encoding="utf-8")
    out.write(f"{args.html}: {args.command} page ({language}), open it in a browser\n")


def _html_options(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--html", metavar="PAGE", help="write a self-contained HTML page here instead of printing")
    sub.add_argument(
        "--lang",
        choices=html_page.LANGUAGES,
        help="the page's language (default: from LC_ALL, LC_MESSAGES or LANG; English unless Portuguese)",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="glassllm", description="See how text becomes BPE token IDs.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name: str, help_text: str, uses_tokenizer: bool = True) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        if uses_tokenizer:
            sub.add_argument(
                "--tokenizer", "-t", default="pt", help="pt, en, or the path of a tokenizer JSON file (default: pt)"
            )
        return sub

    encode = command("encode", "print the token IDs of a text")
    encode.add_argument("text", nargs="?", help="the text (default: standard input)")
    encode.add_argument("--json", action="store_true", help="print a JSON list")
    encode.set_defaults(run=_encode)

    decode = command("decode", "print the text of token IDs")
    decode.add_argument("ids", nargs="*", help="token IDs (default: read from standard input)")
    decode.set_defaults(run=_decode)

    explain = command("explain", "show every merge step that turns a text into pieces")
    explain.add_argument("text", nargs="?", help="the text (default: standard input)")
    explain.add_argument("--file", "-f", help="read the text from this file")
    _html_options(explain)
    explain.set_defaults(run=_explain)

    cli_train.add_parsers(command)

    export = commands.add_parser(
        "export",
        help="write a tokenizer as a Hugging Face tokenizer.json",
        description="write a tokenizer as a "
        "Hugging Face tokenizers file that encodes and decodes exactly as glassllm does",
    )
    export.add_argument("tokenizer", help="pt, en, or the path of a tokenizer JSON file")
    export.add_argument("--output", "-o", required=True, help="where to write tokenizer.json")
    export.add_argument(
        "--force", action="store_true", help="replace --output even if it is not a Hugging Face tokenizer file"
    )
    export.set_defaults(run=_export)

    inspect = command("inspect", "show a text piece by piece, with IDs, chunks and the token count")
    inspect.epilog = "'at' is where a token's characters are: line:column of the first and the last, counted from 1."
    inspect.add_argument("text", nargs="?", help="the text (default: standard input)")
    inspect.add_argument("--file", "-f", help="read the text from this file")
    inspect.add_argument(
        "--limit", type=int, default=500, help="show at most this many tokens piece by piece (0: all; default 500)"
    )
    _html_options(inspect)
    inspect.set_defaults(run=_inspect)

    _html_options(cli_compare.add_parser(command, _read_text))

    completion = commands.add_parser(
        "completion",
        help="print the tab-completion script for a shell",
        description='print the tab-completion script for a shell; e.g. eval "$(glassllm completion bash)" in ~/.bashrc',
    )
    completion.add_argument("shell", choices=_SHELLS)
    completion.set_defaults(run=_completion)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = _parser()
    # Answers the shell's completion request and exits; a no-op in a normal run.
    argcomplete.autocomplete(parser)
    args = parser.parse_args(argv)
    run = _write_html if getattr(args, "html", None) else args.run
    try:
        run(args, sys.stdout)
    except (OSError, ValueError, KeyError) as error:
        sys.stderr.write(f"glassllm {args.command}: {describe(error, environment_locale())}\n")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
