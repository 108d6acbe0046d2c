"""Loads in worker threads, and how long the client's next message waits for them."""

from __future__ import annotations

import asyncio
import threading

from glassllm_server.loads import Loads


async def test_a_quick_load_is_waited_for_and_its_callbacks_run_first():
    loads: Loads[str, str] = Loads(lambda name: name.upper())
    seen: list[str] = []
    loads.start("pt").add_done_callback(lambda load: seen.append(load.result()))
    await loads.settled()
    assert seen == ["PT"]
    await loads.settled()  # nothing running: at once


async def test_one_load_per_name_at_a_time():
    calls: list[str] = []
    release = threading.Event()

    def load(name: str) -> str:
        calls.append(name)
        release.wait(10)
        return name

    loads: Loads[str, str] = Loads(load)
    first = loads.start("a.json")
    assert loads.start("a.json") is first
    release.set()
    assert await first == "a.json" and calls == ["a.json"]
    assert loads.start("a.json") is not first  # ended: a new load reads the file again
    await loads.settled()


async def test_a_slow_load_is_waited_for_no_longer_than_the_grace():
    release = threading.Event()
    loads: Loads[str, str] = Loads(lambda name: name if release.wait(10) else "")
    slow = loads.start("silent")
    await loads.settled()  # returns after GRACE_SECONDS, the load still waiting
    assert not slow.done()
    await loads.settled()  # past its grace: not waited for again
    release.set()
    assert await asyncio.wait_for(slow, 10) == "silent"
