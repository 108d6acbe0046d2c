"""``glassllm count`` and ``glassllm train``: count a corpus, learn a tokenizer, show progress.

Three ways to count, the same counts from each: in this process, in ``--jobs`` processes,
or on Dask (``--dask``: a cluster of one worker per core on this machine, or
``--dask tcp://HOST:8786``: the workers of a running scheduler). ``glassllm count``
writes the counts to a file; ``glassllm train --counts`` learns from such files (summed,
and with a corpus too when one is named).

On a terminal, counting shows a progress bar of the bytes read, and learning one of the
merges learned; elsewhere (a log, a pipe) each stage writes one line when it ends;
``--quiet`` writes neither.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from glassllm.formats.files import may_replace
from glassllm.shown.problems import problem
from glassllm.tokenizer import Tokenizer
from glassllm.training.chunk_counting import count_files
from glassllm.training.counts_files import read_counts, write_counts

__all__ = ["add_parsers", "refuse_to_replace"]


def refuse_to_replace(path: str, force: bool, hugging_face: bool = False) -> None:
    """Stop unless writing a tokenizer to ``path`` loses nothing, or ``--force`` says so."""
    if not force and not may_replace(path, hugging_face=hugging_face):
        kind, kind_pt = ("Hugging Face", "do Hugging Face") if hugging_face else ("glassllm", "do glassllm")
        raise problem(ValueError, "cli.replace", path=path, kind=kind, kind_pt=kind_pt)


def _refuse_unwritable(path: str) -> None:
    """Stop before any work if nothing can be written at ``path`` (a folder, or in a folder
    that is not there): the file is written last, after the whole corpus is counted."""
    target = Path(path)
    if target.is_dir():
        raise problem(ValueError, "cli.output_folder", path=path)
    if not target.parent.is_dir():
        raise problem(ValueError, "cli.output_no_folder", path=path, folder=str(target.parent))


def _refuse_to_replace_counts(path: str, force: bool) -> None:
    if force or not Path(path).exists():
        return
    try:
        read_counts(path)
    except (OSError, ValueError):
        raise problem(ValueError, "cli.replace_counts", path=path) from None


class _Stage:
    """Progress of one stage on ``stream``: a tqdm bar on a terminal, else one line at the end."""

    def __init__(self, stream: TextIO, quiet: bool, label: str, unit: str) -> None:
        self.stream, self.label, self.unit = stream, label, unit
        self.quiet = quiet
        self.bar: Any = None
        self.started = time.perf_counter()
        self.total = 0

    def __call__(self, done: int, total: int) -> None:
        self.total = total
        if self.quiet or not self.stream.isatty():
            return
        if self.bar is None:
            from tqdm import tqdm

            bytes_unit = self.unit == "B"
            self.bar = tqdm(
                total=total,
                desc=self.label,
                unit=self.unit,
                unit_scale=bytes_unit,
                unit_divisor=1000,
                file=self.stream,
                dynamic_ncols=True,
                leave=True,
            )
        if total != self.bar.total:  # learning ran out of pairs before the target
            self.bar.total = total
        self.bar.update(done - self.bar.n)

    def end(self, line: str) -> None:
        if self.bar is not None:
            self.bar.close()
        elif not self.quiet and not self.stream.isatty():
            self.stream.write(f"{line} in {time.perf_counter() - self.started:.1f} s\n")
            self.stream.flush()


@contextmanager
def _dask(args: argparse.Namespace) -> Iterator[Any]:
    if args.dask is None:
        yield None
        return
    from glassllm.training.cluster import dask_client

    with dask_client(None if args.dask == "local" else args.dask, args.jobs) as client:
        yield client


def _count(args: argparse.Namespace, stream: TextIO) -> Counter[str]:
    """The counts of the corpus the arguments name (files, then ``--counts`` files)."""
    total: Counter[str] = Counter()
    if args.corpus:
        stage = _Stage(stream, args.quiet, "counting", "B")
        with _dask(args) as client:
            where = (
                f"on Dask ({len(client.nthreads())} workers)"
                if client is not None
                else "in one process per core"
                if args.jobs is None
                else f"in {args.jobs} process{'es' if args.jobs > 1 else ''}"
            )
            total = count_files(args.corpus, jobs=args.jobs, field=args.field, client=client, progress=stage)
        stage.end(f"counted {stage.total / 1e6:,.1f} MB {where}: {len(total):,} distinct chunks")
    for path in getattr(args, "counts", None) or ():
        stage = _Stage(stream, args.quiet, "reading", "files")
        total.update(read_counts(path))
        stage.end(f"read {path}: {len(total):,} distinct chunks so far")
    return total


def _count_command(args: argparse.Namespace, out: TextIO) -> None:
    _refuse_unwritable(args.output)
    _refuse_to_replace_counts(args.output, args.force)
    started = time.perf_counter()
    counts = _count(args, sys.stderr)
    write_counts(counts, args.output)
    out.write(
        f"{args.output}: {len(counts):,} distinct chunks, {sum(counts.values()):,} in all, "
        f"in {time.perf_counter() - started:.1f} s\n"
    )


def _train_command(args: argparse.Namespace, out: TextIO) -> None:
    if not args.corpus and not args.counts:
        raise problem(ValueError, "cli.no_corpus")
    _refuse_unwritable(args.output)
    refuse_to_replace(args.output, args.force)
    started = time.perf_counter()
    counts = _count(args, sys.stderr)
    if not counts:
        given = [*(args.corpus or ()), *(args.counts or ())]
        raise problem(ValueError, "cli.empty_corpus", corpus=", ".join(given), output=args.output)
    stage = _Stage(sys.stderr, args.quiet, "learning", " merges")
    tok = Tokenizer.train_from_counts(counts, args.vocab_size, progress=stage)
    stage.end(f"learned {len(tok.merges):,} merges")
    tok.save(args.output)
    seconds = time.perf_counter() - started
    out.write(
        f"{args.output}: {tok.vocab_size} entries ({len(tok.alphabet)} characters, "
        f"{len(tok.merges)} merges) in {seconds:.1f} s\n"
    )


def _add_counting(sub: argparse.ArgumentParser, corpus_nargs: str) -> None:
    sub.add_argument(
        "corpus",
        nargs=corpus_nargs,
        help="UTF-8 text files (also .gz, .bz2, .xz, .zst), JSON Lines or Parquet files (with --field), "
        "folders (read recursively) or glob patterns; each file is a text of its own",
    )
    sub.add_argument("--field", help="the field that holds the text in JSON Lines and Parquet records")
    sub.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=None,
        help="count in this many processes (default: one per core); with --dask, the local cluster's workers",
    )
    sub.add_argument(
        "--dask",
        nargs="?",
        const="local",
        metavar="ADDRESS",
        help="count on Dask: a local cluster of one worker per core, or the scheduler at ADDRESS "
        "(tcp://HOST:8786), whose workers must see the same files",
    )
    sub.add_argument("--quiet", "-q", action="store_true", help="no progress bars or stage lines")


def add_parsers(command: Callable[..., argparse.ArgumentParser]) -> None:
    """Add ``count`` and ``train`` with ``command(name, help, uses_tokenizer)`` of the CLI's parser."""
    count = command("count", "count the chunks of a corpus and write them to a counts file", False)
    _add_counting(count, "+")
    count.add_argument("--output", "-o", required=True, help="where to write the counts (e.g. corpus.counts)")
    count.add_argument("--force", action="store_true", help="replace --output even if it is not a counts file")
    count.set_defaults(run=_count_command)

    train = command("train", "learn a tokenizer from a corpus or counts files and save it as JSON", False)
    _add_counting(train, "*")
    train.add_argument(
        "--counts", nargs="+", metavar="COUNTS", default=[], help="counts files (from glassllm count) to learn from"
    )
    train.add_argument("--vocab-size", type=int, default=1024, help="upper bound on entries (default: 1024)")
    train.add_argument("--output", "-o", required=True, help="where to write the tokenizer JSON")
    train.add_argument("--force", action="store_true", help="replace --output even if it is not a tokenizer file")
    train.set_defaults(run=_train_command)
