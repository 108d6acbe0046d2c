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

The whole document's times are set beside the library's cold ``encode`` of the corpus in a
fresh process, on two cores as it runs by default (issue 32's reference) and held to one
core: while the server tokenizes the document, a compared tokenizer counts on the other.

Then the same for documents of another shape (issue 8, item 5): a single line of
2,000,000 characters (``pt/heldout.txt`` with its line breaks turned into spaces,
repeated to that length), 100,000 empty lines, and lines alternating ``\r`` and ``\n``
endings: didOpen → first hover and → whole document tokenized, a one-character edit
followed by a hover or ``glassllm/stats``, and inlay hints, semantic tokens and pulled
diagnostics for a visible range (60 lines, or 6,000 characters of the long line).

Targets (issues 3 and 8): hover on any line right after didOpen p99 < 10 ms; whole
document tokenized < 1.5 s after didOpen; inlay hints for 100 lines p50 < 25 ms; edit
+ stats p99 < 20 ms; < 250 MB RSS. The long line: first hover < 2 s; edit + hover or
stats p99 < 50 ms; hints, bands and diagnostics of a visible range < 50 ms. Issue 11:
the same with one tokenizer compared, which is the server's default
(``glassllm.compareWith`` absent: ``en`` beside ``pt``, so every hover splits its chunk
with ``en`` too and every ``glassllm/stats`` counts the document with it).
``--compare-with '[]'`` measures the peer with the comparison off.

Issue 30: ``--only chat`` opens a chat dataset, 10,000 conversations of four messages
(``bench_chat.py``'s, 13.6 MB of JSONL), with Llama 3's ``tokenizer.json`` and its own
chat template (``bash tests/fixtures/fetch_models.sh``): didOpen → the code lenses, →
the visible 60 lines' lenses resolved (their prompts counted) and → a hover on a
visible message, beside didOpen → the whole dataset counted (``glassllm/stats``); then
p50 / p99 of an edit in a message followed by its lens resolved, and the RSS.

Issue 17: ``--tokenizer PATH`` makes a real model's tokenizer the document's (Llama 3's
``tokenizer.json``: hover p99 < 10 ms from didOpen, inlay hints for 100 lines p50 < 25 ms,
edit + stats p99 < 20 ms, RSS < 400 MB); ``--tokenizer pt --compare-with '["PATH"]'``
compares it beside ``pt``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpora" / "pt" / "train.txt"
HELDOUT = ROOT / "corpora" / "pt" / "heldout.txt"
LONG_LINE = 2_000_000
URI = "file:///bench/train.txt"


# The glassllm settings section the client answers workspace/configuration with.
SETTINGS: dict[str, Any] | None = None


class Client:
    """Just enough of an LSP client: requests, notifications, answers to the server."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None, "start() pipes both"
        self.process = process
        self.stdin, self.stdout = process.stdin, process.stdout
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.next_id = 0
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls) -> Client:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            *PROFILE,
            "-m",
            "glassllm_server",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=1 << 26,
        )
        return cls(process)

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, ensure_ascii=False).encode("utf-8")
        self.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def _read(self) -> None:
        stdout = self.stdout
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
                result = (
                    [SETTINGS] * len(message["params"]["items"])
                    if message["method"] == "workspace/configuration"
                    else None
                )
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
        await self.request(
            "initialize",
            {"processId": None, "rootUri": None, "capabilities": capabilities, "initializationOptions": SETTINGS},
        )
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


def tokenizer_setting() -> str:
    return (SETTINGS or {}).get("tokenizer", "pt")


def position(line: int, character: int) -> dict[str, int]:
    return {"line": line, "character": character}


async def timed(request: Awaitable[object]) -> float:
    """Milliseconds until ``request`` (a coroutine not started yet) is done."""
    start = time.perf_counter()
    await request
    return (time.perf_counter() - start) * 1000


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p50 = statistics.median(ordered)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return f"p50 {p50:7.2f} ms   p99 {p99:7.2f} ms   (n={len(ordered)})"


async def first_hover(text: str, line: int) -> tuple[float, float, float]:
    """Seconds from sending didOpen to the first hover's answer, on ``line``; to the whole
    document tokenized (the code lens's answer, which waits for it); and to the first
    whole-document ``glassllm/stats``, which the compared tokenizers count too."""
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
    await client.request("textDocument/codeLens", {"textDocument": {"uri": URI}})
    complete = time.perf_counter() - start
    await client.request("glassllm/stats", {"textDocument": {"uri": URI}})
    counted = time.perf_counter() - start
    await client.stop()
    return hovered, complete, counted


async def library_cold(one_core: bool = False) -> float:
    """Seconds the library takes to encode the corpus in a fresh process (its caches cold);
    ``one_core``: held to one core (no fork: see glassllm.pipeline.two_cores), as the
    document's own tokenizing is in the server while a compared tokenizer counts on the other."""
    script = "\n".join(
        (
            "import os, sys, time",
            "from glassllm import load_tokenizer",
            "if sys.argv[3] == '1':",
            "    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})",
            "text = open(sys.argv[1], encoding='utf-8').read()",
            "tokenizer = load_tokenizer(sys.argv[2])",
            "start = time.perf_counter()",
            "tokenizer.encode(text)",
            "print(time.perf_counter() - start)",
        )
    )
    arguments = (str(CORPUS), tokenizer_setting(), "1" if one_core else "0")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, *arguments, stdout=asyncio.subprocess.PIPE
    )
    output, _ = await process.communicate()
    return float(output)


async def main(rounds: int) -> None:
    text = CORPUS.read_text(encoding="utf-8")
    lines = text.split("\n")
    print(f"document: {CORPUS.name}, {len(text):,} characters, {len(lines):,} lines")
    names = (SETTINGS or {}).get("compareWith")
    compared = "the other packaged one (the default)" if names is None else ", ".join(names) or "none"
    print(f"tokenizer {tokenizer_setting()}, compared with: {compared}")
    await opening(text, lines)

    client = await Client.start()
    await client.initialize()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": URI, "languageId": "plaintext", "version": 1, "text": text}},
    )
    await while_tokenizing(client, lines)
    await client.request("glassllm/stats", DOCUMENT)  # the whole document is tokenized now
    rng = random.Random(7)
    await requests(client, text, lines, rng, rounds)
    await edits(client, lines, rng, rounds)
    print(f"server memory with the document open:   {client.rss_mb():8.1f} MB RSS")
    await client.stop()


DOCUMENT = {"textDocument": {"uri": URI}}


async def opening(text: str, lines: list[str]) -> None:
    """didOpen → the first hover at the top and at the bottom, the whole document
    tokenized and counted, beside the library encoding the corpus cold."""
    top, complete, counted = await first_hover(text, 0)
    bottom, _, _ = await first_hover(text, len(lines) - 2)
    library = await library_cold()
    print(f"didOpen → first hover, line 0:          {top * 1000:8.1f} ms")
    print(f"didOpen → first hover, last line:       {bottom * 1000:8.1f} ms")
    print(f"didOpen → whole document tokenized:     {complete * 1000:8.1f} ms")
    print(
        f"  the library alone, cold (encode):     {library * 1000:8.1f} ms   "
        f"(server / library: {complete / library:.2f})"
    )
    print(f"didOpen → first whole-document stats:   {counted * 1000:8.1f} ms   (with the compared tokenizers)")
    print(f"  / the library alone, cold:            {counted / library:8.2f}")
    if hasattr(os, "sched_setaffinity"):
        alone = await library_cold(one_core=True)
        print(
            f"  the library on one core, cold:        {alone * 1000:8.1f} ms   "
            f"(tokenized / it: {complete / alone:.2f}, stats / it: {counted / alone:.2f})"
        )


async def while_tokenizing(client: Client, lines: list[str]) -> None:
    """While the document is still being tokenized: hovers anywhere are answered at once
    (the first one also waits for the server to read the 7 MB didOpen), and a request
    that waits for the whole document can be cancelled."""
    spread = random.Random(3)
    reading = await timed(client.request("textDocument/hover", {**DOCUMENT, "position": position(0, 0)}))
    busy = []
    for _ in range(50):
        line = spread.randrange(len(lines))
        busy.append(await timed(client.request("textDocument/hover", {**DOCUMENT, "position": position(line, 1)})))
    request_id, lens = client.request_future("textDocument/codeLens", DOCUMENT)
    client.notify("$/cancelRequest", {"id": request_id})
    started = time.perf_counter()
    try:
        await lens
        cancelled = "answered (not cancelled)"
    except RuntimeError as error:
        cancelled = f"cancelled with {error.args[0]['code']} after {(time.perf_counter() - started) * 1000:.1f} ms"
    print(f"first hover after didOpen (reads it):   {reading:8.1f} ms")
    print(f"hover, any line, while tokenizing:      {percentiles(busy)}")
    print(f"code lens waiting on tokenizing:        {cancelled}")


def random_position(rng: random.Random, lines: list[str]) -> dict[str, int]:
    line = rng.randrange(len(lines))
    return position(line, rng.randrange(len(lines[line]) + 1))


def hint_range(rng: random.Random, lines: list[str]) -> dict[str, Any]:
    first = rng.randrange(len(lines) - 100)
    return {"start": position(first, 0), "end": position(first + 100, 0)}


async def requests(client: Client, text: str, lines: list[str], rng: random.Random, rounds: int) -> None:
    """Hovers, inlay hints (new lines, and the same lines again) and stats on the
    tokenized document."""
    hovers = [
        await timed(client.request("textDocument/hover", {**DOCUMENT, "position": random_position(rng, lines)}))
        for _ in range(rounds)
    ]
    print(f"hover:                                  {percentiles(hovers)}")

    hints, counts = [], []

    async def inlay_hints() -> None:
        found = await client.request("textDocument/inlayHint", {**DOCUMENT, "range": hint_range(rng, lines)})
        counts.append(len(found))

    for _ in range(rounds):
        hints.append(await timed(inlay_hints()))
    print(f"inlay hints, 100 lines:                 {percentiles(hints)}")
    print(
        f"  (hints per answer: median {statistics.median(counts):,.0f}; "
        f"the corpus averages {len(text) / len(lines):.0f} characters a line)"
    )

    # Editors ask again for the lines in view after every edit and scroll: those lines'
    # hints are already serialized.
    window = hint_range(rng, lines)
    again = [
        await timed(client.request("textDocument/inlayHint", {**DOCUMENT, "range": window})) for _ in range(rounds)
    ]
    print(f"inlay hints, the same 100 lines again:  {percentiles(again)}")

    stats = [await timed(client.request("glassllm/stats", DOCUMENT)) for _ in range(rounds)]
    print(f"glassllm/stats:                         {percentiles(stats)}")

    ranged = [
        await timed(client.request("glassllm/stats", {**DOCUMENT, "range": hint_range(rng, lines)}))
        for _ in range(rounds)
    ]
    print(f"glassllm/stats, 100-line range:         {percentiles(ranged)}")


async def edits(client: Client, lines: list[str], rng: random.Random, rounds: int) -> None:
    """A one-character edit at a random place, then ``glassllm/stats``."""

    async def edit_then_stats(place: dict[str, int], version: int) -> None:
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": URI, "version": version},
                "contentChanges": [{"range": {"start": place, "end": place}, "text": "a"}],
            },
        )
        await client.request("glassllm/stats", DOCUMENT)

    found = [await timed(edit_then_stats(random_position(rng, lines), version)) for version in range(2, rounds + 2)]
    print(f"one-character edit + glassllm/stats:    {percentiles(found)}")


PROFILE = ["-m", "cProfile", "-o", "/tmp/srv.prof"] if os.environ.get("BENCH_PROFILE") else []
LLAMA3 = ROOT / "tests" / "fixtures" / "models" / "llama3" / "tokenizer.json"
CHAT_URI = "file:///bench/dataset.jsonl"


async def chat_dataset(rounds: int) -> None:
    """The visible lines of a 10,000-conversation dataset counted at once, the rest later."""
    global SETTINGS
    from bench_chat import write_dataset  # beside this script

    SETTINGS = {"tokenizer": str(LLAMA3), "compareWith": []}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "dataset.jsonl"
        write_dataset(path, 10_000)
        text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    print(f"\nchat dataset: {len(text):,} characters, {len(lines) - 1:,} conversations, Llama 3's template")
    client = await Client.start()
    await client.initialize()
    document = {"textDocument": {"uri": CHAT_URI}}
    start = time.perf_counter()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": CHAT_URI, "languageId": "jsonl", "version": 1, "text": text}},
    )
    lenses = await client.request("textDocument/codeLens", document)
    listed = time.perf_counter() - start
    visible = [lens for lens in lenses if lens["range"]["start"]["line"] < 60]
    resolved = await asyncio.gather(*(client.request("codeLens/resolve", lens) for lens in visible))
    counted = time.perf_counter() - start
    assert all(lens.get("command") for lens in resolved), resolved[:1]
    await client.request("textDocument/hover", {**document, "position": position(30, 60)})
    hovered = time.perf_counter() - start
    await client.request("glassllm/stats", document)
    whole = time.perf_counter() - start
    print(f"  didOpen → code lenses listed ({len(lenses):,}):   {listed * 1000:8.1f} ms")
    print(f"  didOpen → the visible 60 lines' lenses counted: {counted * 1000:8.1f} ms")
    print(f"  didOpen → hover on a visible message:     {hovered * 1000:8.1f} ms")
    print(f"  didOpen → the whole dataset counted:      {whole * 1000:8.1f} ms")
    await chat_edits(client, lines, rounds)
    print(f"  server memory:                            {client.rss_mb():8.1f} MB RSS")
    await client.stop()


async def chat_edits(client: Client, lines: list[str], rounds: int) -> None:
    """A letter typed inside a message's content, then that line's lens resolved."""
    rng = random.Random(13)
    samples = []
    for version in range(2, rounds + 2):
        line = rng.randrange(len(lines) - 1)
        column = lines[line].index('"content": "') + len('"content": "') + 1
        place = position(line, column)
        started = time.perf_counter()
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": CHAT_URI, "version": version},
                "contentChanges": [{"range": {"start": place, "end": place}, "text": "a"}],
            },
        )
        lenses = await client.request("textDocument/codeLens", {"textDocument": {"uri": CHAT_URI}})
        (lens,) = [lens for lens in lenses if lens["range"]["start"]["line"] == line]
        if not lens.get("command"):
            await client.request("codeLens/resolve", lens)
        samples.append((time.perf_counter() - started) * 1000)
    print(f"  edit in a message + its lens counted:     {percentiles(samples)}")


def shapes() -> dict[str, str]:
    """Documents whose shape, not size, is the difficulty."""
    heldout = HELDOUT.read_text(encoding="utf-8").replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    long_line = (heldout * (LONG_LINE // len(heldout) + 1))[:LONG_LINE]
    prose = CORPUS.read_text(encoding="utf-8")[:2_000_000].split("\n")
    alternating = "".join(line + ("\r" if number % 2 else "\n") for number, line in enumerate(prose))
    return {
        "one 2,000,000-character line": long_line,
        "100,000 empty lines": "\n" * 100_000,
        "\\r and \\n alternating": alternating,
    }


async def shape(name: str, text: str, rounds: int) -> None:
    lines = text.replace("\r", "\n").split("\n")
    rng = random.Random(11)
    print(f"\n{name}: {len(text):,} characters, {len(lines):,} lines")

    def random_position() -> dict[str, int]:
        line = rng.randrange(len(lines))
        return position(line, rng.randrange(len(lines[line]) + 1))

    client = await Client.start()
    await client.initialize()
    document = {"textDocument": {"uri": URI}}
    start = time.perf_counter()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": URI, "languageId": "plaintext", "version": 1, "text": text}},
    )
    await client.request("textDocument/hover", {**document, "position": random_position()})
    hovered = time.perf_counter() - start
    await client.request("textDocument/codeLens", document)
    complete = time.perf_counter() - start
    await client.request("glassllm/stats", document)
    counted = time.perf_counter() - start
    print(f"  didOpen → first hover:                {hovered * 1000:8.1f} ms")
    print(f"  didOpen → whole document tokenized:   {complete * 1000:8.1f} ms")
    print(f"  didOpen → first whole-document stats: {counted * 1000:8.1f} ms")

    async def edit_then_ask(method: str, place: dict[str, int], version: int) -> None:
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": URI, "version": version},
                "contentChanges": [{"range": {"start": place, "end": place}, "text": "a"}],
            },
        )
        params = {**document, "position": place} if method == "textDocument/hover" else document
        await client.request(method, params)

    versions = iter(range(2, 1 << 30))
    for method in ("textDocument/hover", "glassllm/stats"):
        samples = [await timed(edit_then_ask(method, random_position(), next(versions))) for _ in range(rounds)]
        label = "hover" if method == "textDocument/hover" else "glassllm/stats"
        print(f"  one-character edit + {label + ':':16s} {percentiles(samples)}")

    def visible() -> dict[str, Any]:
        if len(lines) == 1:
            column = rng.randrange(len(lines[0]))
            return {"start": position(0, column), "end": position(0, column + 6_000)}
        first = rng.randrange(max(len(lines) - 60, 1))
        return {"start": position(first, 0), "end": position(first + 60, 0)}

    for label, method, extra in (
        ("inlay hints", "textDocument/inlayHint", lambda: {"range": visible()}),
        ("semantic tokens, range", "textDocument/semanticTokens/range", lambda: {"range": visible()}),
        ("pulled diagnostics", "textDocument/diagnostic", dict),
    ):
        samples = [await timed(client.request(method, {**document, **extra()})) for _ in range(max(rounds // 3, 10))]
        print(f"  {label + ', visible range:':36s} {percentiles(samples)}")
    print(f"  server memory:                        {client.rss_mb():8.1f} MB RSS")
    await client.stop()


if __name__ == "__main__":
    # This process parses answers of up to a megabyte of JSON: its own garbage collector
    # passes over them would be counted as the server's time.
    gc.disable()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=300, help="requests per measurement (default 300)")
    parser.add_argument("--only", choices=["corpus", "shapes", "chat"], help="run one part only")
    parser.add_argument(
        "--compare-with", help="glassllm.compareWith as JSON, e.g. '[]' (default: absent, so \"en\" is compared)"
    )
    parser.add_argument(
        "--tokenizer", help="glassllm.tokenizer: pt, en, a tokenizer file (Llama 3's tokenizer.json) or hf:ORG/NAME"
    )
    arguments = parser.parse_args()
    if arguments.compare_with is not None or arguments.tokenizer is not None:
        SETTINGS = {}
        if arguments.compare_with is not None:
            SETTINGS["compareWith"] = json.loads(arguments.compare_with)
        if arguments.tokenizer is not None:
            SETTINGS["tokenizer"] = arguments.tokenizer

    async def run() -> None:
        if arguments.only == "chat":
            await chat_dataset(max(arguments.rounds // 3, 10))
            return
        if arguments.only != "shapes":
            await main(arguments.rounds)
        if arguments.only != "corpus":
            for name, text in shapes().items():
                await shape(name, text, max(arguments.rounds // 3, 10))

    asyncio.run(run())
