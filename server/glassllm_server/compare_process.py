"""A compared tokenizer's child process (:mod:`glassllm_server.compare_child`), from the
server's side: the large pending part of a document (one just opened, a large paste) is
counted there, on the other core, while the server tokenizes the document for its own
tokenizer; an edit's few lines are counted in the server's own process, which costs less
than sending them.

A job counts one version of a document (a snapshot: later edits do not change what it
sent) and puts its counts into that version's per-line counts. A version edited
meanwhile takes the counts of the lines (a real model's blocks) it shares with the one
counted, matched by their text (:meth:`Counted.settle`); the others stay pending, to be
counted as if no job had run. The child is started once per compared tokenizer, at its
first job, and stopped with the server; if it fails (it does not start, it crashes, it
is killed), the user is told once and that tokenizer counts in the server's own process
from then on. No pygls here.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import sys
from collections.abc import Callable, Sequence
from functools import partial
from time import perf_counter
from typing import Any

from glassllm_server import compare_child
from glassllm_server.compare import ComparedTokenizer
from glassllm_server.document import Document, ReadOnlyDocument

__all__ = ["CHILD_CHARACTERS", "Counted", "CountingChild"]

logger = logging.getLogger(__name__)

# A pending part of a document at least this long (in characters) is counted in the
# child: sending it costs a few percent of counting it (see docs/server.md).
CHILD_CHARACTERS = 1 << 18
# Lines sent in one message (some 500 KB of the 7 MB corpus, a millisecond to
# encode): the event loop is given back between messages.
_PART_LINES = 2_000
# Settling a version's counts from a job gives the event loop back after this long.
_SLICE_SECONDS = 0.002
# The child's answer is one line: a count per line, some 20 bytes each.
_READ_LIMIT = 1 << 28


class ChildFailed(Exception):
    """The child could not count: it did not start, or it stopped."""


class Counted:
    """A job's counts: lines ``first..`` of the version it counted, ``cuts`` where their
    blocks start (None: a line each). Kept only while versions are settled from it."""

    def __init__(
        self, tokenizer: ComparedTokenizer, lines: Sequence[str], first: int, counts: list[int], cuts: list[int] | None
    ) -> None:
        self.tokenizer = tokenizer
        self._lines, self._first, self._counts, self._cuts = lines, first, counts, cuts
        self._known: dict[Any, Any] | None = None

    def known(self) -> dict[Any, Any]:
        """The counts by text: a line's (where every line is a block), or a block's
        ``(text, whether it opens the document)``."""
        if self._known is None:
            lines, counts, cuts = self._lines, self._counts, self._cuts
            if cuts is None:
                self._known = dict(zip(lines, counts, strict=True))
            else:
                bounds = [*cuts, len(lines)]
                self._known = {
                    ("".join(lines[start:stop]), self._first + start == 0): tuple(counts[start:stop])
                    for start, stop in itertools.pairwise(bounds)
                }
        return self._known

    async def settle(self, document: ReadOnlyDocument) -> None:
        """Give ``document``'s pending lines (a snapshot's) the counts of the lines or
        blocks of the same text here, a slice at a time."""
        tokenizer = self.tokenizer
        state, lines = tokenizer.document(document), document.lines
        known = self.known()
        deadline = perf_counter() + _SLICE_SECONDS
        line = state.next_pending(0)
        while line < len(lines):
            line = state.next_pending(state.put_known(tokenizer, lines, line, known))
            if perf_counter() > deadline:
                await asyncio.sleep(0)
                deadline = perf_counter() + _SLICE_SECONDS


class CountingChild:
    """The child process that counts for the compared tokenizer ``name`` (resolved, as
    :class:`~glassllm_server.compare.ComparedTokenizer` names it); ``problem(name,
    detail)`` tells the user, once, that it failed."""

    def __init__(self, name: str, match_specials: bool, problem: Callable[[str, str], None]) -> None:
        self.name = name
        self._arguments = [name, "1" if match_specials else "0"]
        self._problem = problem
        self._process: asyncio.subprocess.Process | None = None
        self._lock: asyncio.Lock | None = None  # one job at a time over the pipes
        self._jobs: dict[str, asyncio.Task[Counted | None]] = {}  # running, by document
        self.failed = False

    def job(
        self,
        tokenizer: ComparedTokenizer,
        document: ReadOnlyDocument,
        live: Callable[[str], ReadOnlyDocument | None] | None = None,
    ) -> asyncio.Task[Counted | None] | None:
        """The job counting ``document``'s pending part: the one running for it (maybe
        for an earlier version), or a new one if that part is large; None otherwise, or
        once the child failed. ``live(uri)``, the open document, is settled from the job
        when it ends if it was edited meanwhile."""
        running = self._jobs.get(document.uri)
        if running is not None and running.done():
            running = None  # its counts are in: its done callback has not run yet
        if running is not None or self.failed:
            return running
        lines = document.lines
        first, stop = tokenizer.document(document).pending_run()
        if first >= stop:
            return None
        first, stop = tokenizer.block_of(lines, first)[0], tokenizer.block_of(lines, stop - 1)[1]
        if sum(map(len, lines[first:stop])) < CHILD_CHARACTERS:
            return None
        if isinstance(document, Document):  # what is sent must not change meanwhile
            document = document.snapshot()
        task = asyncio.ensure_future(self._count(tokenizer, document, first, stop, live))
        uri = document.uri
        self._jobs[uri] = task
        task.add_done_callback(partial(self._ended_job, uri))
        return task

    def _ended_job(self, uri: str, task: asyncio.Task[Counted | None]) -> None:
        # Only its own entry: a job made after it ended, before this ran, may be there.
        if self._jobs.get(uri) is task:
            del self._jobs[uri]

    async def _count(
        self,
        tokenizer: ComparedTokenizer,
        document: ReadOnlyDocument,
        first: int,
        stop: int,
        live: Callable[[str], ReadOnlyDocument | None] | None,
    ) -> Counted | None:
        """Count lines ``first..stop-1`` of ``document`` in the child, into its counts;
        None if the child failed (then nothing was put)."""
        lines = document.lines[first:stop]
        try:
            counts, cuts = await self._exchange(lines, first == 0)
        except ChildFailed as failure:
            self._fail(str(failure))
            return None
        tokenizer.document(document).put_counted(first, counts, cuts)
        counted = Counted(tokenizer, lines, first, counts, cuts)
        now = live(document.uri) if live is not None else None
        if isinstance(now, Document) and not now.same_text(document):
            await counted.settle(now.snapshot())
        return counted

    async def _exchange(self, lines: list[str], at_start: bool) -> tuple[list[int], list[int] | None]:
        """Send ``lines`` to the child and read its counts back."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            process = await self._started()
            assert process.stdin is not None and process.stdout is not None, "started with pipes"
            try:
                for start in range(0, len(lines), _PART_LINES):
                    process.stdin.write(compare_child.part(lines[start : start + _PART_LINES]))
                    await process.stdin.drain()
                process.stdin.write(b'{"count": %s}\n' % (b"true" if at_start else b"false"))
                await process.stdin.drain()
                answer = await process.stdout.readline()
            except (OSError, ValueError) as error:  # a broken pipe; an answer past the limit
                raise ChildFailed(str(error) or type(error).__name__) from error
            except BaseException:
                # Cancelled mid-job (the server stops): the pipes are mid-message.
                self.close()
                raise
            if not answer:
                raise ChildFailed(await self._ended(process))
        try:
            found = json.loads(answer)
            counts, cuts = found["counts"], found["cuts"]
        except (ValueError, KeyError, TypeError) as error:
            raise ChildFailed(f"an answer that is not counts: {error}") from error
        if len(counts) != len(lines):
            raise ChildFailed(f"{len(counts)} counts for {len(lines)} lines")
        return counts, cuts

    async def _started(self) -> asyncio.subprocess.Process:
        """The child, started now if it was not yet, ready to count."""
        process = self._process
        if process is not None:
            if process.returncode is not None:
                raise ChildFailed(await self._ended(process))
            return process
        process = self._process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "glassllm_server.compare_child",
            *self._arguments,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=_READ_LIMIT,
        )
        assert process.stdout is not None, "started with pipes"
        hello = await process.stdout.readline()
        if not hello:
            raise ChildFailed(await self._ended(process))
        found = json.loads(hello)
        if "error" in found:
            raise ChildFailed(found["error"])
        return process

    async def _ended(self, process: asyncio.subprocess.Process) -> str:
        status = await process.wait()
        return f"exit status {status}"

    def _fail(self, detail: str) -> None:
        self.failed = True
        self.close()
        logger.warning("the child counting for %s failed: %s", self.name, detail)
        self._problem(self.name, detail)

    def close(self) -> None:
        """Stop the child (the server stops, or the tokenizer is no longer compared)."""
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):  # it ended on its own
                process.kill()
