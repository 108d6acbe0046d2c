"""Benchmark: the token map of this repository from the server, beside ``glassllm tokens``.

Run ``python3 tests/benchmarks/bench_token_map.py`` from the repository root. With a
fresh cache folder each, it prints:

- ``glassllm tokens REPO --html PAGE``, the command the map reuses (the peer), cold (an
  empty cache) and warm (a second run);
- ``glassllm.tokenMap`` over stdio on the repository as the workspace folder, cold (no
  cache) and warm (every count in the cache), and its ratio to the command;
- hovers on an open document before and while the map is counted (p50/p99): the
  counting runs in a child process, so the server's answers should barely move.
"""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_server import Client, percentiles, timed

REPO = Path(__file__).resolve().parents[2]
TEXT = "Era uma vez uma menina que morava numa casa amarela perto do rio.\n" * 200
URI = (REPO / "bench-token-map.txt").as_uri()  # never written: the text is sent with didOpen


def command_seconds(scratch: Path) -> float:
    """One run of the command, with its cache in ``scratch``."""
    environment = {**os.environ, "XDG_CACHE_HOME": str(scratch / "command-cache")}
    page = scratch / "map.html"
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "glassllm.cli", "tokens", str(REPO), "--html", str(page), "--quiet"],
        env=environment,
        capture_output=True,
        check=False,
        timeout=1800,
    )
    return time.perf_counter() - start


async def hovers(client: Client, generator: random.Random, until: asyncio.Future[object] | None) -> list[float]:
    """Hover times: 50 of them, or as many as fit before ``until`` is done."""
    found = []
    while (until is None and len(found) < 50) or (until is not None and not until.done()):
        position = {"line": generator.randrange(200), "character": generator.randrange(60)}
        found.append(
            await timed(client.request("textDocument/hover", {"textDocument": {"uri": URI}, "position": position}))
        )
        await asyncio.sleep(0.01)
    return found


async def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="glassllm-bench-map-"))
    peers = {run: command_seconds(scratch) for run in ("cold", "warm")}
    for run, seconds in peers.items():
        print(f"glassllm tokens REPO --html, {run}: {seconds:6.2f} s")
    os.environ["XDG_CACHE_HOME"] = str(scratch / "server-cache")
    client = await Client.start()
    await client.request(
        "initialize",
        {
            "processId": None,
            "rootUri": REPO.as_uri(),
            "workspaceFolders": [{"uri": REPO.as_uri(), "name": REPO.name}],
            "capabilities": {"general": {"positionEncodings": ["utf-16"]}},
        },
    )
    client.notify("initialized", {})
    client.notify(
        "textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "plaintext", "version": 1, "text": TEXT}}
    )
    generator = random.Random(1)
    print(f"hover, idle:            {percentiles(await hovers(client, generator, None))}")
    for run in ("cold", "warm"):
        start = time.perf_counter()
        _, pending = client.request_future("workspace/executeCommand", {"command": "glassllm.tokenMap"})
        busy = await hovers(client, generator, pending)
        answer = pending.result()
        seconds = time.perf_counter() - start
        print(
            f"glassllm.tokenMap, {run}: {seconds:6.2f} s ({seconds / peers[run]:.2f}x the command; "
            f"{answer['files']:,} files, {answer['tokens']['pt']:,} tokens, {len(answer['skipped'])} skipped)"
        )
        print(f"hover while mapping ({run}): {percentiles(busy)}")
    await client.stop()


if __name__ == "__main__":
    asyncio.run(main())
