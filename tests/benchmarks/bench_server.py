"""Benchmark: the language server over real stdio with ``pt/train.txt`` (7 MB) open.

Run ``python3 tests/benchmarks/bench_server.py`` from the repository root. It starts
``python -m glassllm_server`` as an editor would, speaks JSON-RPC to it with a minimal
client (so the figures are the server's, not a heavy test client's), and prints:

- didOpen → first hover answered, at the top of the document and at its last line
  (the hover's "index in the document" needs every line above it tokenized);
- p50 / p99 of hover, inlay hints for 100 lines (new lines, and the same lines asked
  again as editors do after each edit) and ``glassllm/stats``;
- p99 of a one-character edit followed by ``glassllm/stats``;
- that a request waiting on a long tokenization is cancellable, and that hovers are
  answered while the whole document is still being tokenized;
- the server's resident memory with the document open.

Targets (issue 3): first hover < 1.5 s; p50 < 2 ms and p99 < 10 ms; edit + stats
p99 < 20 ms; < 250 MB RSS. Issue 11: the same with one tokenizer compared, which is the
server's default (``glassllm.compareWith`` absent: ``en`` beside ``pt``, so every hover
splits its chunk with ``en`` too and every ``glassllm/stats`` counts the document with
it). ``--compare-with '[]'`` measures the peer with the comparison off.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / ".." / "shared" / "corpora" / "pt" / "train.txt"
URI = "file:///bench/train.txt"


# The glassllm settings section the client answers workspace/configuration with.
SETTINGS: dict[str, Any] | None = None


class Client:
    """Just enough of an LSP client: requests, notifications, answers to the server."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.next_id = 0
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls) -> Client:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "glassllm_server",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=1 << 26,
        )
        return cls(process)

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, ensure_ascii=False).encode("utf-8")
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def _read(self) -> None:
        stdout = self.process.stdout
        while True:
            length = 0
            while True:
                header = await stdout.readline()
                if not header:
                    return
                if header.lower().startswith(b"content-length:"):
                    length = int(header.split(b":")[1])
                elif header == b"\r\n":
                    break
            message = json.loads(await stdout.readexactly(length))
            if "method" in message and "id" in message:
                # workspace/configuration gets SETTINGS; refreshes get null.
                result = [SETTINGS] * len(message["params"]["items"]) if message["method"] == "workspace/configuration" else None
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            elif "id" in message and message["id"] in self.pending:
                future = self.pending.pop(message["id"])
                if "error" in message:
                    future.set_exception(RuntimeError(message["error"]))
                else:
                    future.set_result(message.get("result"))

    def request_future(self, method: str, params: Any) -> tuple[int, asyncio.Future[Any]]:
        self.next_id += 1
        future = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id, future

    async def request(self, method: str, params: Any) -> Any:
        return await self.request_future(method, params)[1]

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def initialize(self) -> None:
        capabilities = {
            "general": {"positionEncodings": ["utf-16"]},
            "workspace": {"configuration": True, "inlayHint": {"refreshSupport": True}},
            # Pull diagnostics, as VS Code and Neovim 0.11 have (this script pulls none).
            "textDocument": {"inlayHint": {"resolveSupport": {"properties": ["tooltip"]}}, "diagnostic": {}},
        }
        await self.request("initialize", {"processId": None, "rootUri": None, "capabilities": capabilities})
        self.notify("initialized", {})

    async def stop(self) -> None:
        await self.request("shutdown", None)
        self.notify("exit", None)
        await self.process.wait()
        self.reader.cancel()

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")


def position(line: int, character: int) -> dict[str, int]:
    return {"line": line, "character": character}


async def timed(call) -> float:
    start = time.perf_counter()
    await call()
    return (time.perf_counter() - start) * 1000


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p50 = statistics.median(ordered)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return f"p50 {p50:7.2f} ms   p99 {p99:7.2f} ms   (n={len(ordered)})"


async def first_hover(text: str, line: int) -> tuple[float, float]:
    """Seconds from sending didOpen to the first hover's answer, on ``line``; and the
    seconds until the whole document was tokenized (the stats answer)."""
    client = await Client.start()
    await client.initialize()
    start = time.perf_counter()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": URI, "languageId": "plaintext", "version": 1, "text": text}},
    )
    answer = await client.request("textDocument/hover", {"textDocument": {"uri": URI}, "position": position(line, 1)})
    hovered = time.perf_counter() - start
    assert answer is not None
    await client.request("glassllm/stats", {"textDocument": {"uri": URI}})
    complete = time.perf_counter() - start
    await client.stop()
    return hovered, complete


async def main(rounds: int) -> None:
    text = CORPUS.read_text(encoding="utf-8")
    lines = text.split("\n")
    print(f"document: {CORPUS.name}, {len(text):,} characters, {len(lines):,} lines")
    compared = "en (the default)" if SETTINGS is None else ", ".join(SETTINGS["compareWith"]) or "none"
    print(f"tokenizer pt, compared with: {compared}")

    top, complete = await first_hover(text, 0)
    bottom, _ = await first_hover(text, len(lines) - 2)
    print(f"didOpen → first hover, line 0:          {top * 1000:8.1f} ms")
    print(f"didOpen → first hover, last line:       {bottom * 1000:8.1f} ms")
    print(f"didOpen → whole document tokenized:     {complete * 1000:8.1f} ms")

    client = await Client.start()
    await client.initialize()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": URI, "languageId": "plaintext", "version": 1, "text": text}},
    )
    document = {"textDocument": {"uri": URI}}

    # While the document is still being tokenized: hovers near the top are answered at
    # once, and a request that waits for the whole document can be cancelled.
    busy = [await timed(lambda: client.request("textDocument/hover", {**document, "position": position(i, 0)})) for i in range(20)]
    request_id, lens = client.request_future("textDocument/codeLens", document)
    client.notify("$/cancelRequest", {"id": request_id})
    started = time.perf_counter()
    try:
        await lens
        cancelled = "answered (not cancelled)"
    except RuntimeError as error:
        cancelled = f"cancelled with {error.args[0]['code']} after {(time.perf_counter() - started) * 1000:.1f} ms"
    print(f"hover while tokenizing in background:   {percentiles(busy)}")
    print(f"code lens waiting on tokenizing:        {cancelled}")

    await client.request("glassllm/stats", document)  # the whole document is tokenized now
    rng = random.Random(7)

    def random_position() -> dict[str, int]:
        line = rng.randrange(len(lines))
        return position(line, rng.randrange(len(lines[line]) + 1))

    hovers = [
        await timed(lambda: client.request("textDocument/hover", {**document, "position": random_position()}))
        for _ in range(rounds)
    ]
    print(f"hover:                                  {percentiles(hovers)}")

    def hint_range() -> dict[str, Any]:
        first = rng.randrange(len(lines) - 100)
        return {"start": position(first, 0), "end": position(first + 100, 0)}

    hints, counts = [], []

    async def inlay_hints() -> None:
        counts.append(len(await client.request("textDocument/inlayHint", {**document, "range": hint_range()})))

    for _ in range(rounds):
        hints.append(await timed(inlay_hints))
    print(f"inlay hints, 100 lines:                 {percentiles(hints)}")
    print(f"  (hints per answer: median {statistics.median(counts):,.0f}; the corpus averages {len(text) / len(lines):.0f} characters a line)")

    # Editors ask again for the lines in view after every edit and scroll: those lines'
    # hints are already serialized.
    window = hint_range()
    again = [
        await timed(lambda: client.request("textDocument/inlayHint", {**document, "range": window}))
        for _ in range(rounds)
    ]
    print(f"inlay hints, the same 100 lines again:  {percentiles(again)}")

    stats = [await timed(lambda: client.request("glassllm/stats", document)) for _ in range(rounds)]
    print(f"glassllm/stats:                         {percentiles(stats)}")

    ranged = [
        await timed(lambda: client.request("glassllm/stats", {**document, "range": hint_range()})) for _ in range(rounds)
    ]
    print(f"glassllm/stats, 100-line range:         {percentiles(ranged)}")

    edits = []
    for version in range(2, rounds + 2):
        place = random_position()

        async def edit_then_stats(place=place, version=version) -> None:
            client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": URI, "version": version},
                    "contentChanges": [{"range": {"start": place, "end": place}, "text": "a"}],
                },
            )
            await client.request("glassllm/stats", document)

        edits.append(await timed(edit_then_stats))
    print(f"one-character edit + glassllm/stats:    {percentiles(edits)}")
    print(f"server memory with the document open:   {client.rss_mb():8.1f} MB RSS")
    await client.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300, help="requests per measurement (default 300)")
    parser.add_argument(
        "--compare-with", help='glassllm.compareWith as JSON, e.g. \'[]\' (default: absent, so "en" is compared)'
    )
    arguments = parser.parse_args()
    if arguments.compare_with is not None:
        SETTINGS = {"compareWith": json.loads(arguments.compare_with)}
    asyncio.run(main(arguments.rounds))
