"""A compared tokenizer counting a large part of a document in a child process, on
another core, while the server tokenizes the document for its own tokenizer.

``python -m glassllm_server.compare_child NAME MATCH_SPECIALS`` loads the tokenizer
``NAME`` ("pt", "en", "hf:…" or an absolute path; ``MATCH_SPECIALS`` "1" or "0") once,
writes ``{"ready": true}`` (or ``{"error": …}`` and ends), then serves jobs read from
standard input: a document's lines in parts (never whole in one string), each a line of
JSON, ``{"lengths": [...], "bytes": N}``, then the lines' text, ``N`` bytes of UTF-8
(JSON would cost the server five times as long to write); then ``{"count": AT_START}``
(whether the first line opens the document). It answers each job with one line,
``{"counts": [...], "cuts": [...]}``: every line's packed counts (see
:data:`~glassllm_server.line_tokenizer.UNKNOWN_SHIFT`), as
:class:`~glassllm_server.compare.DocumentCounts` keeps them, and where each block
starts (None where every line is a block). The lines it gets begin and end at cuts
between blocks. It ends at the end of its input, and when the server that started it
is gone (a crash leaves the pipe open only as long as it takes to notice). No pygls here.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any, BinaryIO

from glassllm import PACKAGED, load_tokenizer, packaged
from glassllm_server.line_tokenizer import LineTokenizer, line_tokenizer

__all__ = ["count_lines", "main", "part"]

# How often the child checks that the server that started it still runs.
_PARENT_SECONDS = 0.5
# How much lower the child's priority is than the server's (POSIX ``nice``).
_NICENESS = 5


def count_lines(tokenizer: LineTokenizer, lines: Sequence[str], at_start: bool) -> tuple[list[int], list[int] | None]:
    """Each line's packed counts, block by block, and where each block starts (None where
    every line is one); ``lines`` begin and end at cuts between blocks."""
    if tokenizer.lines_alone:
        return [count for line in lines for count in tokenizer.count_block((line,), False)], None
    counts: list[int] = []
    cuts: list[int] = []
    can_cut = tokenizer.can_cut
    first = 0
    while first < len(lines):
        stop = first + 1
        while stop < len(lines) and not can_cut(lines[stop - 1], lines[stop]):
            stop += 1
        cuts.append(first)
        counts.extend(tokenizer.count_block(lines[first:stop], at_start and first == 0))
        first = stop
    return counts, cuts


def part(lines: Sequence[str]) -> bytes:
    """A part of a job, as the child reads it: its lines' lengths, then their text."""
    # A lone surrogate (a JSON escape the client sent) travels as is.
    text = "".join(lines).encode("utf-8", "surrogatepass")
    return b"%s\n%s" % (json.dumps({"lengths": list(map(len, lines)), "bytes": len(text)}).encode("ascii"), text)


def _read_part(header: dict[str, Any], stream: BinaryIO) -> list[str]:
    """The lines of the part ``header`` announces, read from ``stream``."""
    text = stream.read(header["bytes"]).decode("utf-8", "surrogatepass")
    bounds = list(itertools.accumulate(header["lengths"], initial=0))
    return [text[start:stop] for start, stop in itertools.pairwise(bounds)]


def _write(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _watch_parent(parent: int) -> None:
    """End this process once the server that started it is gone (its pipes may stay open
    in a process it left behind)."""
    while os.getppid() == parent:
        time.sleep(_PARENT_SECONDS)
    os._exit(1)


def main() -> None:
    """Load the tokenizer of ``sys.argv``, then count the jobs on standard input."""
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    if hasattr(os, "nice"):
        # On a busy machine the server's own answers (hovers, tokens) come first: its
        # count only completes the stats.
        os.nice(_NICENESS)
    name, match_specials = sys.argv[1], sys.argv[2] == "1"
    try:
        loaded = packaged(name) if name in PACKAGED else load_tokenizer(name, match_specials=match_specials)
    except (OSError, ValueError, KeyError) as error:
        _write({"error": str(error)})
        return
    tokenizer = line_tokenizer(loaded, name)
    _write({"ready": True})
    lines: list[str] = []
    stdin = sys.stdin.buffer
    for raw in stdin:
        message = json.loads(raw)
        if "lengths" in message:
            lines += _read_part(message, stdin)
            continue
        counts, cuts = count_lines(tokenizer, lines, message["count"])
        lines = []
        _write({"counts": counts, "cuts": cuts})


if __name__ == "__main__":
    main()
