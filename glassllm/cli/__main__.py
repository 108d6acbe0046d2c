"""The ``glassllm`` command: encode, decode, explain, count, train, export, inspect, compare
and chat from a terminal.

Every subcommand takes ``--tokenizer`` (``pt`` by default): a packaged tokenizer, a
tokenizer file — glassllm's JSON, a Hugging Face ``tokenizer.json``, a Tekken JSON, a
SentencePiece ``.model`` — or ``hf:ORG/NAME`` from the local Hugging Face cache; with
``--match-specials`` a real model reads special-token text as its special tokens. Text
comes from the command line, or from standard input when it is ``-`` or absent; it must
be UTF-8. A problem is one line on standard error and exit status 1. ``inspect``,
``compare`` and ``explain`` also write a self-contained HTML page (``--html PAGE``);
``glassllm completion SHELL`` prints the shell's tab-completion script.
"""

# PYTHON_ARGCOMPLETE_OK

from __future__ import annotations

import argparse
import json
import operator
import os
import re
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

import argcomplete
from argcomplete.shell_integration import shellcode

from glassllm import __version__
from glassllm.cli import chat as cli_chat
from glassllm.cli import compare as cli_compare
from glassllm.cli import tokens as cli_tokens
from glassllm.cli import train as cli_train
from glassllm.cli.train import refuse_to_replace
from glassllm.packaged import load_own_tokenizer, load_tokenizer
from glassllm.pipeline.any_tokenizer import AnyTokenizer
from glassllm.pipeline.tokens import ChunkExplanation, TokenSpan
from glassllm.shown import html_page
from glassllm.shown.places import TextPlaces
from glassllm.shown.problems import describe, environment_locale, problem
from glassllm.shown.visible import visible
from glassllm.tokenizer import SPACE, Tokenizer, pre_tokenize

__all__ = ["main"]


def _read_text(args: argparse.Namespace) -> str:
    """The text to work on: ``--file``, the argument, or standard input; UTF-8 only."""
    if getattr(args, "file", None):
        # Line endings become \n, as a file read in text mode always gave them.
        text = _utf8(Path(args.file).read_bytes(), "cli.file_utf8", path=args.file)
        return text.replace("\r\n", "\n").replace("\r", "\n")
    if args.text is None or args.text == "-":
        return _read_stdin()
    # Python decodes arguments with surrogateescape: bytes that are not UTF-8 arrive
    # as U+DC80…U+DCFF, and encoding them back gives the bytes the user typed.
    return _utf8(os.fsencode(args.text), "cli.argument_utf8")


def _read_stdin() -> str:
    return _utf8(sys.stdin.buffer.read(), "cli.stdin_utf8")


def _utf8(raw: bytes, code: str, **fields: object) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise problem(ValueError, code, byte=raw[error.start], offset=error.start, **fields) from None


def _load(args: argparse.Namespace) -> AnyTokenizer:
    return load_tokenizer(args.tokenizer, match_specials=args.match_specials)


def _around(tok: AnyTokenizer) -> str:
    """What the model adds around a text, said once (empty for glassllm's own)."""
    before, after = tok.around
    if not before and not after:
        return ""
    added = " … ".join(part for part in (" ".join(tok.tokens(before)), " ".join(tok.tokens(after))) if part)
    return f"the model adds {added} around a text: not counted here, not part of the text's tokens"


def _encode(args: argparse.Namespace, out: TextIO) -> None:
    tok = _load(args)
    ids = tok.encode(_read_text(args))
    out.write(json.dumps(ids) + "\n" if args.json else " ".join(map(str, ids)) + "\n")


def _decode(args: argparse.Namespace, out: TextIO) -> None:
    tok = _load(args)
    raw = args.ids if args.ids else _read_stdin().replace(",", " ").strip("[] \n").split()
    try:
        ids = [int(value.strip("[],")) for value in raw]
    except ValueError as error:
        raise problem(ValueError, "cli.ids", reason=error) from None
    # The library indexes like a list (-1 is the last entry); IDs from outside are
    # checked here, so a negative one is out of range like any other.
    bad = [i for i in ids if not 0 <= i < tok.vocab_size]
    if bad:
        raise problem(ValueError, "cli.range", size=tok.vocab_size, last=tok.vocab_size - 1, bad=bad)
    out.write(tok.decode(ids) + "\n")


def _explain(args: argparse.Namespace, out: TextIO) -> None:
    tok = _load(args)
    explanations = tok.explain(_read_text(args))
    if args.json:
        found = [_explanation_json(item, _chunk_search(tok, item)) for item in explanations]
        out.write(json.dumps(found, ensure_ascii=False) + "\n")
        return
    shown = tok.readable
    if not isinstance(tok, Tokenizer):
        method = getattr(tok, "method", "merges")
        if method == "merges":
            method += (
                " highest score first" if getattr(tok, "priority_name", "rank") == "score" else " lowest rank first"
            )
        out.write(f"{tok.kind}: {method}; this model ships no training counts\n")
        if _around(tok):
            out.write(_around(tok) + "\n")
    for item in explanations:
        out.write(f"chunk {item.index}: '{visible(item.chunk)}'\n")
        out.write(f"  start    {' '.join(visible(shown(symbol)) for symbol in item.characters)}\n")
        out.writelines(_search_lines(_chunk_search(tok, item), shown))
        if not item.steps and len(item.characters) > 1 and len(item.pieces) == 1:
            out.write("           the whole chunk is a vocabulary entry: no merges (as the model does)\n")
        for step in item.steps:
            seen = "" if step.count is None else f"  (seen {step.count:,} times in training)"
            score = "" if step.score is None else f"  (score {step.score:g})"
            pair = f"{visible(shown(step.pair[0]))} + {visible(shown(step.pair[1]))} → {visible(shown(step.result))}"
            out.write(f"  rank {step.rank:>4} {pair}{seen}{score}\n")
            out.write(f"           {' '.join(visible(shown(piece)) for piece in step.pieces)}\n")
        ids = ", ".join(str(i) for i in item.ids)
        out.write(f"  pieces   {' | '.join(visible(shown(piece)) for piece in item.pieces)}   ids [{ids}]\n")


def _chunk_search(tok: AnyTokenizer, item: ChunkExplanation) -> dict[str, Any] | None:
    """How a model that does not merge cut the chunk (``None`` for BPE, whose steps say
    it, and for a special token matched whole)."""
    search = getattr(tok, "search", None)
    matched = getattr(tok, "is_matched", None)
    if search is None or (matched is not None and len(item.ids) == 1 and matched(item.ids[0])):
        return None
    return search(item.chunk)


def _search_lines(search: dict[str, Any] | None, shown: Callable[[str], str]) -> list[str]:
    """The lines ``explain`` prints for a model that does not merge (see ``search``)."""
    if search is None:
        return []
    if search["kind"] == "WordLevel":
        verdict = "found" if search["found"] else "not in the vocabulary: the unknown token"
        return [f"  lookup   '{visible(search['lookup'])}' {verdict}\n"]
    if search["kind"] == "WordPiece":
        if search["too_long"]:
            return ["  lookup   longer than max_input_chars_per_word: the unknown token\n"]
        lines = []
        for lookup in search["lookups"]:
            found = (
                f"found {visible(lookup['found'])}" if lookup["found"] else "none found: the word is the unknown token"
            )
            tried = ", ".join(visible(candidate) for candidate in lookup["tried"])
            lines.append(f"  at {lookup['start']:<5} tried {tried} → {found}\n")
        return lines
    lines = []
    for name, path in (("best", search["best"]), ("next", search["alternative"])):
        if path is not None:
            pieces = " | ".join(
                f"{visible(shown(piece))} ({score:g})"
                for piece, score in zip(path["pieces"], path["scores"], strict=True)
            )
            lines.append(f"  {name:<8} {pieces}   total {path['total']:g}\n")
    return lines


def _explanation_json(item: ChunkExplanation, search: dict[str, Any] | None = None) -> dict[str, object]:
    """One chunk of ``glassllm explain --json``: pieces as the tokenizer's vocabulary
    writes them (HF's tokens for a tokenizer.json), ``count`` where training recorded it,
    ``score`` where scores order the merges; ``search`` for a model that does not merge
    (WordPiece, WordLevel, Unigram: see the tokenizer's ``search``)."""
    steps = []
    for step in item.steps:
        entry: dict[str, object] = {"rank": step.rank, "pair": list(step.pair), "result": step.result}
        if step.count is not None:
            entry["count"] = step.count
        if step.score is not None:
            entry["score"] = step.score
        steps.append(entry)
    found: dict[str, object] = {"chunk": item.chunk, "steps": steps, "pieces": item.pieces, "ids": item.ids}
    if search is not None:
        found["search"] = search
    return found


def _export(args: argparse.Namespace, out: TextIO) -> None:
    tok = load_own_tokenizer(args.tokenizer)
    refuse_to_replace(args.output, args.force, hugging_face=True)
    tok.save_hf(args.output)
    out.write(f"{args.output}: Hugging Face tokenizer, {tok.vocab_size} entries ({len(tok.merges)} merges)\n")


_BYTES = re.compile(r"<[0-9A-F]{2}>")  # a byte shown on its own, as readable() shows part of a character
_COLORS = ("\x1b[30;46m", "\x1b[30;43m")  # alternating bands, like the web playgrounds
_RESET = "\x1b[0m"


def _inspect(args: argparse.Namespace, out: TextIO) -> None:
    tok = _load(args)
    text = _read_text(args)
    limit = args.limit if args.limit > 0 else None
    shown: list[TokenSpan] = []
    tokens = chunks = unknown = 0
    # Segment by segment, keeping only the tokens shown: the totals of a long text cost
    # no memory per token.
    # glassllm's own chunk rule says where a long text may be cut; a real model's
    # pre-tokenizer may join across those places, so its text is one segment.
    segments = _segments(text) if isinstance(tok, Tokenizer) else iter([(0, text)])
    for offset, segment in segments:
        if limit is not None and len(shown) >= limit:
            ids = tok.encode(segment)  # counted only: no spans to build
            tokens += len(ids)
            unknown += operator.countOf(ids, tok.unk_id)
            chunks += len(pre_tokenize(segment))
            continue
        spans = tok.encode_spans(segment)
        wanted = len(spans) if limit is None else limit - len(shown)
        shown.extend(
            span._replace(start=span.start + offset, end=span.end + offset, chunk=span.chunk + chunks)
            for span in spans[:wanted]
        )
        tokens += len(spans)
        unknown += operator.countOf(map(_ID, spans), tok.unk_id)
        chunks += spans[-1].chunk + 1 if spans else 0
    color = out.isatty() and not os.environ.get("NO_COLOR")
    bands = []
    for index, span in enumerate(shown):
        # The text as given, spaces as ▁; a line break as ⏎ and a break, so lines stay lines.
        surface = "⏎\n".join(map(visible, text[span.start : span.end].replace(" ", "▁").split("\n")))
        bands.append(f"{_COLORS[index % 2]}{surface}{_RESET}" if color else f"[{surface}]")
    out.write("".join(bands) + "\n\n")
    out.write(f"{'#':>5}  {'id':>5}  {'chunk':>5}  {'at':<11}  piece\n")
    lines = TextPlaces(text[: shown[-1].end] if shown else "")
    for index, span in enumerate(shown):
        note = "  (<unk>)" if span.id == tok.unk_id else ""
        at = lines.span(span.start, span.end)
        piece = visible(tok.readable(span.piece))
        if _BYTES.search(piece) and not _BYTES.search(text, span.start, span.end):
            # Part of a character's UTF-8 bytes: say which character.
            note += f"  (bytes of '{visible(text[span.start : span.end])}')"
        out.write(f"{index:>5}  {span.id:>5}  {span.chunk:>5}  {at:<11}  '{piece}'{note}\n")
    if len(shown) < tokens:
        out.write(f"… the first {len(shown):,} of {tokens:,} tokens (--limit 0 shows them all)\n")
    ratio = f" · {len(text) / tokens:.2f} chars/token" if tokens else ""
    out.write(
        f"\n{tokens:,} tokens · {chunks:,} chunks · {len(text):,} characters{ratio}"
        f" · {unknown} unknown · tokenizer {args.tokenizer}\n"
    )
    if _around(tok):
        out.write(_around(tok) + "\n")
    specials = getattr(tok, "specials", None)
    if specials:
        matched = "read as special tokens" if tok.match_specials else "ordinary text (--match-specials reads them)"
        out.write(f"special-token text such as {next(iter(specials))} in the text: {matched}\n")


_SHELLS = ("bash", "zsh", "fish", "tcsh", "powershell")


def _completion(args: argparse.Namespace, out: TextIO) -> None:
    out.write(shellcode(["glassllm"], shell=args.shell))


def _write_html(args: argparse.Namespace, out: TextIO) -> None:
    text = _read_text(args)
    language = args.lang or environment_locale()
    if args.command == "compare":
        names = cli_compare.tokenizer_names(args)
        page = html_page.compare_page(text, {name: load_own_tokenizer(name) for name in names}, language)
    else:
        page = html_page.PAGES[args.command](text, args.tokenizer, load_own_tokenizer(args.tokenizer), language)
    Path(args.html).write_text(page, encoding="utf-8")
    out.write(f"{args.html}: {args.command} page ({language}), open it in a browser\n")


def _html_options(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--html", metavar="PAGE", help="write a self-contained HTML page here instead of printing")
    sub.add_argument(
        "--lang",
        choices=html_page.LANGUAGES,
        help="the page's language (default: from LC_ALL, LC_MESSAGES or LANG; English unless Portuguese)",
    )


_ID = operator.itemgetter(0)
# A long text is tokenized in segments of about this many characters, cut where neither
# NFC nor the chunk rule can join the two sides: after a line break (a chunk of its own,
# a starter that composes with nothing), or before an ASCII space that follows a
# character other than a space or ▁ (the rule never takes a ▁ after a chunk's first
# character but in a run of ▁, and NFC never composes a space with what precedes it).
# The language server cuts its long lines by the same rule.
_SEGMENT = 1 << 16
_CUT = re.compile(f"[^ {SPACE}](?= )|[\r\n]")


def _segments(text: str) -> Iterator[tuple[int, str]]:
    """``(offset, segment)`` pairs that tile ``text``; a text with no safe cut is one."""
    start = 0
    while len(text) - start > _SEGMENT:
        found = _CUT.search(text, start + _SEGMENT)
        if found is None:
            break
        yield start, text[start : found.end()]
        start = found.end()
    if start < len(text) or not text:
        yield start, text[start:]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="glassllm", description="See how text becomes BPE token IDs.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name: str, help_text: str, uses_tokenizer: bool = True) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        if uses_tokenizer:
            sub.add_argument(
                "--tokenizer",
                "-t",
                default="pt",
                help="pt, en, a tokenizer file (glassllm JSON, Hugging Face tokenizer.json, Tekken JSON, "
                "SentencePiece .model) or hf:ORG/NAME from the local Hugging Face cache (default: pt)",
            )
            sub.add_argument(
                "--match-specials",
                action="store_true",
                help="read special-token text (<|endoftext|>, [INST]) as the model's special tokens, as "
                "Hugging Face does by default (default: ordinary text)",
            )
        return sub

    _add_text_commands(command)
    cli_train.add_parsers(command)
    _add_export(commands.add_parser)
    _add_inspect(command)
    _html_options(cli_compare.add_parser(command, _read_text))
    cli_tokens.add_parser(command)
    cli_chat.add_parser(commands.add_parser)
    completion = commands.add_parser(
        "completion",
        help="print the tab-completion script for a shell",
        description='print the tab-completion script for a shell; e.g. eval "$(glassllm completion bash)" in ~/.bashrc',
    )
    completion.add_argument("shell", choices=_SHELLS)
    completion.set_defaults(run=_completion)
    return parser


def _add_text_commands(command: Callable[..., argparse.ArgumentParser]) -> None:
    """``encode``, ``decode`` and ``explain``, with ``command(name, help)`` of the parser."""
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
    explain.add_argument(
        "--json",
        action="store_true",
        help='print [{"chunk", "steps": [{"rank", "pair", "result"}], "pieces", "ids"}]'
        ' (and "search" for WordPiece, WordLevel, Unigram: docs/models.md)',
    )
    _html_options(explain)
    explain.set_defaults(run=_explain)


def _add_export(add_parser: Callable[..., argparse.ArgumentParser]) -> None:
    export = add_parser(
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


def _add_inspect(command: Callable[..., argparse.ArgumentParser]) -> None:
    inspect = command("inspect", "show a text piece by piece, with IDs, chunks and the token count")
    inspect.epilog = "'at' is where a token's characters are: line:column of the first and the last, counted from 1."
    inspect.add_argument("text", nargs="?", help="the text (default: standard input)")
    inspect.add_argument("--file", "-f", help="read the text from this file")
    inspect.add_argument(
        "--limit", type=int, default=500, help="show at most this many tokens piece by piece (0: all; default 500)"
    )
    _html_options(inspect)
    inspect.set_defaults(run=_inspect)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = _parser()
    # Answers the shell's completion request and exits; a no-op in a normal run.
    argcomplete.autocomplete(parser)
    args = parser.parse_args(argv)
    run = _write_html if getattr(args, "html", None) else args.run
    try:
        run(args, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader stopped (``| head``): end quietly, as a Unix tool killed by SIGPIPE,
        # with nothing left for the interpreter to flush into the closed pipe.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except (OSError, ValueError, KeyError) as error:
        sys.stderr.write(f"glassllm {args.command}: {describe(error, environment_locale())}\n")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
