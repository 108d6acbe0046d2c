"""Tokenizer files loaded off the event loop, and the moment the client's messages wait.

A tokenizer file named by a setting can take seconds to load: the library's bounded
reader gives up on a silent pipe after 5 s, and a file at the 32 MB bound takes about
6 s of CPU. On the event loop that would stop every answer, so each load runs in a worker
thread (:meth:`Loads.start`). A load that ends quickly should still be seen by the
requests the client sent after the setting, as if it had been applied at once: the
server reads the client's next message only when :meth:`Loads.settled` returns, which
waits for the loads started less than :data:`GRACE_SECONDS` ago. A longer load is not
waited for: requests are answered with the tokenizers in use meanwhile.
No pygls here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["GRACE_SECONDS", "Loads"]

# How long the client's next message may wait for a load: enough for the packaged
# tokenizers, any file of tens of thousands of merges and a real model's tokenizer (Llama 3
# and GPT-4o load in 1 to 2.5 s here), so the editor's next request, its count after the
# settings change, sees the tokenizer the user chose; short enough not to be a hang.
GRACE_SECONDS = 3.0

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


class Loads(Generic[K, T]):
    """Loads by ``load(key)`` in worker threads, one at a time per key."""

    def __init__(self, load: Callable[[K], T]) -> None:
        self._load = load
        # key → (the load, the loop time until which the client's messages wait for it)
        self._running: dict[K, tuple[asyncio.Future[T], float]] = {}

    def start(self, key: K) -> asyncio.Future[T]:
        """The load of ``key``: the one already running, or a new one (on the running loop)."""
        running = self._running.get(key)
        if running is not None:
            return running[0]
        loop = asyncio.get_running_loop()
        future = asyncio.ensure_future(asyncio.to_thread(self._load, key))
        self._running[key] = (future, loop.time() + GRACE_SECONDS)
        future.add_done_callback(lambda _: self._running.pop(key, None))
        return future

    async def settled(self) -> None:
        """Return when every load started less than :data:`GRACE_SECONDS` ago has ended
        (at once when none is running). A load's own callbacks (switching tokenizers)
        run before this returns: a future runs its callbacks in one go, and the waiting
        task resumes after them."""
        loop = asyncio.get_running_loop()
        while True:
            now = loop.time()
            waiting = [(future, until) for future, until in self._running.values() if until > now]
            if not waiting:
                return
            await asyncio.wait(
                [future for future, _ in waiting],
                timeout=min(until for _, until in waiting) - now,
                return_when=asyncio.FIRST_COMPLETED,
            )
