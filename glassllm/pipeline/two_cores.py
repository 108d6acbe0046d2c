"""A large first pass on two cores: the distinct chunks it must merge, shared with a fork.

Merging the chunks a text brings for the first time is most of a first ``encode`` of a
large text (61,000 distinct chunks in the 7 MB Portuguese corpus), for glassllm's own
tokenizers and real models alike, and it is pure Python: one core does it at a time.
:func:`each_of` hands the second half of them (a little less) to a forked copy of this
process, which already holds the tokenizer (a fork takes a few milliseconds, where loading
a real model again would take a second), and merges the first half meanwhile; the child
sends its results back through a pipe.

The values are the same in every case: the child's are used only when it ended well and
sent one for each of its chunks; otherwise this process makes them itself. It forks only
where the library's other workers do (``file_tokens``, ``chunk_counting``:
:func:`fork_is_safe`), and never in one of those workers, which already share the cores
out.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import threading
from collections.abc import Callable, Sequence
from typing import NoReturn, TypeVar

__all__ = ["FORK_FROM", "each_of", "fork_is_safe"]

_T = TypeVar("_T")

# Fewer distinct chunks than this are merged here alone: a fork and the pipe cost a few
# milliseconds, half of these chunks' merging more (about 15 µs a chunk on this project's machine).
FORK_FROM = 2048
# The child's share of the items: it merges about 15 % slower than this process (its
# reference counts write to pages it must first copy), so both end about together.
CHILD_SHARE = 0.465


def each_of(items: Sequence[str], make: Callable[[str], _T]) -> list[_T]:
    """``[make(item) for item in items]``, the second half made in a forked child where
    that is safe and worth it. ``make`` must not depend on what it made before (each
    process fills its own caches)."""
    if len(items) < FORK_FROM or not _may_fork():
        return list(map(make, items))
    half = len(items) - int(len(items) * CHILD_SHARE)
    theirs = items[half:]
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(reading)
        _child(theirs, make, writing)
    os.close(writing)
    try:
        made = list(map(make, items[:half]))
        sent = _received(reading)
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        raise
    finally:
        os.close(reading)
        status = _reaped(pid)
    if status != 0 or not isinstance(sent, list) or len(sent) != len(theirs):
        sent = list(map(make, theirs))
    return made + sent


def _reaped(pid: int) -> int:
    """The child's exit status once it has ended; 0 if something else reaped it (a
    ``SIGCHLD`` ignored, a handler that waits for any child): what it sent then tells."""
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return 0


def fork_is_safe() -> bool:
    """Whether this process may fork: ``fork`` exists, and this process has a single
    thread (a fork copies only the thread that calls it: a lock another thread held would
    never be released in the child). The rule of every worker the library forks."""
    return threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods()


def _may_fork() -> bool:
    # A pool's worker (``glassllm tokens`` over many files) is one of several already:
    # another process per worker would only crowd the cores.
    if multiprocessing.parent_process() is not None or not fork_is_safe():
        return False
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores > 1


def _child(items: Sequence[str], make: Callable[[str], _T], writing: int) -> NoReturn:
    """In the child: make each value and send them all; end without running the parent's
    exit handlers or flushing its buffers (``os._exit``). Any failure ends it with status 1,
    and the parent makes the values itself."""
    status = 1
    try:
        # The parent's handlers (the server's set a flag) must not keep it alive.
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        data = pickle.dumps(list(map(make, items)), pickle.HIGHEST_PROTOCOL)
        with os.fdopen(writing, "wb") as out:
            out.write(data)
        status = 0
    finally:
        os._exit(status)


def _received(reading: int) -> object:
    """What the child sent (``None`` if it sent nothing readable)."""
    parts = []
    while part := os.read(reading, 1 << 20):
        parts.append(part)
    try:
        return pickle.loads(b"".join(parts))
    except Exception:  # a child cut short: the parent makes its values
        return None
