"""The ``glassllm`` command: encode, decode, explain, train, export, inspect and compare
from a terminal.

Every subcommand takes ``--tokenizer`` (``pt`` by default): a packaged tokenizer, a
tokenizer file — glassllm's JSON, a Hugging Face ``tokenizer.json``, a Tekken JSON, a
SentencePiece ``.model`` — or ``hf:ORG/NAME`` from the local Hugging Face cache; with
``--match-specials`` a real model reads special-token text as its special tokens. Text
comes from the command line, or from standard input when it is ``-`` or absent.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from glassllm import cli_compare
from glassllm.counting import count_files
from glassllm.files import may_replace
from glassllm.packaged import load_tokenizer
from glassllm.places import TextPlaces
from glassllm.problems import Problem, describe, environment_locale, problem
from glassllm.protocol import AnyTokenizer
from glassllm.tokenizer import ChunkExplanation, Tokenizer
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
    tok = _load(args)
    explanations = tok.explain(_read_text(args))
    if args.json:
        out.write(json.dumps([_explanation_json(item) for item in explanations], ensure_ascii=False) + "\n")
        return
    shown = tok.readable
    if not isinstance(tok, Tokenizer):
        order = "highest score first" if getattr(tok, "priority_name", "rank") == "score" else "lowest rank first"
        out.write(f"{tok.kind}: merges {order}; this model ships no training counts\n")
        if _around(tok):
            out.write(_around(tok) + "\n")
    for item in explanations:
        out.write(f"chunk {item.index}: '{visible(item.chunk)}'\n")
        out.write(f"  start    {' '.join(visible(shown(symbol)) for symbol in item.characters)}\n")
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


def _explanation_json(item: ChunkExplanation) -> dict[str, object]:
    """One chunk of ``glassllm explain --json``: pieces as the tokenizer's vocabulary
    writes them (HF's tokens for a tokenizer.json), ``count`` where training recorded it,
    ``score`` where scores order the merges."""
    steps = []
    for step in item.steps:
        entry: dict[str, object] = {"rank": step.rank, "pair": list(step.pair), "result": step.result}
        if step.count is not None:
            entry["count"] = step.count
        if step.score is not None:
            entry["score"] = step.score
        steps.append(entry)
    return {"chunk": item.chunk, "steps": steps, "pieces": item.pieces, "ids": item.ids}


class _ProgressBar:
    """A one-line progress bar on a terminal; silent elsewhere (logs, pipes)."""

    def __init__(self, stream: TextIO, label: str) -> None:
        self.stream, self.label = stream, label
        self.enabled = stream.isatty()
        self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not self.enabled or (done < total and now - self.last < 0.1):
            return
        self.last = now
        width = 30
        filled = width * done // max(total, 1)
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()


def _refuse_to_replace(path: str, force: bool, hugging_face: bool = False) -> None:
    """Stop unless writing a tokenizer to ``path`` loses nothing, or ``--force`` says so."""
    if not force and not may_replace(path, hugging_face=hugging_face):
        kind, kind_pt = ("Hugging Face", "do Hugging Face") if hugging_face else ("glassllm", "do glassllm")
        raise problem(ValueError, "cli.replace", path=path, kind=kind, kind_pt=kind_pt)


def _train(args: argparse.Namespace, out: TextIO) -> None:
    _refuse_to_replace(args.output, args.force)
    started = time.perf_counter()
    counts = count_files(args.corpus, jobs=args.jobs)
    tok = Tokenizer.train_from_counts(counts, args.vocab_size, progress=_ProgressBar(sys.stderr, "merges"))
    tok.save(args.output)
    seconds = time.perf_counter() - started
    out.write(
        f"{args.output}: {tok.vocab_size} entries ({len(tok.alphabet)} characters, "
        f"{len(tok.merges)} merges) in {seconds:.1f} s\n"
    )


def _export(args: argparse.Namespace, out: TextIO) -> None:
    tok = load_tokenizer(args.tokenizer)
    if not isinstance(tok, Tokenizer):
        raise problem(ValueError, "cli.export_model", name=args.tokenizer, kind=tok.kind)
    _refuse_to_replace(args.output, args.force, hugging_face=True)
    tok.save_hf(args.output)
    out.write(f"{args.output}: Hugging Face tokenizer, {tok.vocab_size} entries ({len(tok.merges)} merges)\n")


_BYTES = re.compile(r"<[0-9A-F]{2}>")  # a byte shown on its own, as readable() shows part of a character
_COLORS = ("\x1b[30;46m", "\x1b[30;43m")  # alternating bands, like the web playgrounds
_RESET = "\x1b[0m"


def _inspect(args: argparse.Namespace, out: TextIO) -> None:
    tok = _load(args)
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
        note = "  (<unk>)" if span.id == tok.unk_id else ""
        at = lines.span(span.start, span.end)
        piece = visible(tok.readable(span.piece))
        if _BYTES.search(piece) and not _BYTES.search(text, span.start, span.end):
            # Part of a character's UTF-8 bytes: say which character.
            note += f"  (bytes of '{visible(text[span.start : span.end])}')"
        out.write(f"{index:>5}  {span.id:>5}  {span.chunk:>5}  {at:<11}  '{piece}'{note}\n")
    if len(shown) < len(spans):
        out.write(f"… the first {len(shown):,} of {len(spans):,} tokens (--limit 0 shows them all)\n")
    chunks = spans[-1].chunk + 1 if spans else 0
    unknown = sum(span.id == tok.unk_id for span in spans)
    ratio = f" · {len(text) / len(spans):.2f} chars/token" if spans else ""
    out.write(
        f"\n{len(spans):,} tokens · {chunks:,} chunks · {len(text):,} characters{ratio}"
        f" · {unknown} unknown · tokenizer {args.tokenizer}\n"
    )
    if _around(tok):
        out.write(_around(tok) + "\n")
    specials = getattr(tok, "specials", None)
    if specials:
        matched = "read as special tokens" if tok.match_specials else "ordinary text (--match-specials reads them)"
        out.write(f"special-token text such as {next(iter(specials))} in the text: {matched}\n")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="glassllm", description="See how text becomes BPE token IDs.")
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

    encode = command("encode", "print the token IDs of a text")
    encode.add_argument("text", nargs="?", help="the text (default: standard input)")
    encode.add_argument("--json", action="store_true", help="print a JSON list")
    encode.set_defaults(run=_encode)

    decode = command("decode", "print the text of token IDs")
    decode.add_argument("ids", nargs="*", help="token IDs (default: read from standard input)")
    decode.set_defaults(run=_decode)

    explain = command("explain", "show every merge step that turns a text into pieces")
    explain.add_argument("text", nargs="?", help="the text (default: standard input)")
    explain.add_argument(
        "--json", action="store_true", help='print [{"chunk", "steps": [{"rank", "pair", "result"}], "pieces", "ids"}]'
    )
    explain.set_defaults(run=_explain)

    train = command("train", "learn a tokenizer from corpus files and save it as JSON", uses_tokenizer=False)
    train.add_argument("corpus", nargs="+", help="UTF-8 text files, each counted as a text of its own")
    train.add_argument("--vocab-size", type=int, default=1024, help="upper bound on entries (default: 1024)")
    train.add_argument("--output", "-o", required=True, help="where to write the tokenizer JSON")
    train.add_argument(
        "--jobs", "-j", type=int, default=None, help="count chunks in this many processes (default: one per core)"
    )
    train.add_argument("--force", action="store_true", help="replace --output even if it is not a tokenizer file")
    train.set_defaults(run=_train)

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
    inspect.set_defaults(run=_inspect)

    cli_compare.add_parser(command, _read_text)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        args.run(args, sys.stdout)
    except (OSError, ValueError, KeyError) as error:
        sys.stderr.write(f"glassllm {args.command}: {describe(error, environment_locale())}\n")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
