"""Benchmark: explain-and-see features over real stdio with ``pt/train.txt`` (7 MB) open.

Run ``python3 tests/benchmarks/bench_explain_see.py`` from the repository root (after
``bench_server.py``'s minimal client, which it reuses). It prints:

- semantic tokens: the full answer (bands, capped at ``BAND_LIMIT``) and a one-character
  edit followed by ``full/delta`` (p50/p99, and how many integers the delta carries);
- pull diagnostics for the whole document, then the "unchanged" answer;
- document highlight and the explain code action at random places (p50/p99);
- ``glassllm.explainMerges`` on one paragraph and on 100 lines;
- ``glassllm.trainTokenizer`` on the whole file at 1,024 entries, and hovers meanwhile;
- the server's resident memory before and after training.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_server import CORPUS, URI, Client, percentiles, timed


def document(uri: str) -> dict[str, dict[str, str]]:
    return {"textDocument": {"uri": uri}}


async def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="glassllm-bench-"))
    os.environ["XDG_CACHE_HOME"] = str(scratch)  # explanation pages go here, not to ~/.cache
    text = CORPUS.read_text(encoding="utf-8")
    lines = text.split("\n")
    client = await Client.start()
    await client.initialize()
    client.notify(
        "textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "plaintext", "version": 1, "text": text}}
    )
    await client.request("glassllm/stats", document(URI))
    generator = random.Random(1)

    def place() -> dict[str, int]:
        return {"line": generator.randrange(len(lines) - 1), "character": generator.randrange(40)}

    await semantic_tokens(client, lines, generator)
    await diagnostics(client)
    await highlight_and_actions(client, place)
    await explain_merges(client, lines, generator)
    await training(client, scratch, place)
    await client.stop()


async def semantic_tokens(client: Client, lines: list[str], generator: random.Random) -> None:
    """The full answer, then a one-character edit followed by ``full/delta``, 40 times."""
    start = time.perf_counter()
    full = await client.request("textDocument/semanticTokens/full", document(URI))
    print(f"semantic tokens full: {time.perf_counter() - start:6.2f} s for {len(full['data']) // 5:,} bands")

    samples, carried, result_id = [], [], full["resultId"]
    for version in range(2, 42):
        line = generator.randrange(len(lines) // 20)
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": URI, "version": version},
                "contentChanges": [
                    {
                        "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
                        "text": "x",
                    }
                ],
            },
        )
        began = time.perf_counter()
        delta = await client.request(
            "textDocument/semanticTokens/full/delta", {**document(URI), "previousResultId": result_id}
        )
        samples.append((time.perf_counter() - began) * 1000)
        result_id = delta["resultId"]
        carried.append(sum(len(edit["data"]) for edit in delta.get("edits", [])))
    print(f"edit + semantic tokens delta: {percentiles(samples)}; integers carried: max {max(carried)}")


async def diagnostics(client: Client) -> None:
    """Pull diagnostics for the whole document, then the "unchanged" answer."""
    start = time.perf_counter()
    report = await client.request("textDocument/diagnostic", document(URI))
    first = time.perf_counter() - start
    start = time.perf_counter()
    again = await client.request("textDocument/diagnostic", {**document(URI), "previousResultId": report["resultId"]})
    print(
        f"pull diagnostics: {first * 1000:7.1f} ms for {len(report['items'])} items; "
        f"unchanged ({again['kind']}): {(time.perf_counter() - start) * 1000:5.1f} ms"
    )


async def highlight_and_actions(client: Client, place: Callable[[], dict[str, int]]) -> None:
    """Document highlight and the explain code action at 100 random places each."""
    highlight = [
        await timed(client.request("textDocument/documentHighlight", {**document(URI), "position": place()}))
        for _ in range(100)
    ]
    print(f"document highlight: {percentiles(highlight)}")
    actions = []
    for _ in range(100):
        where = place()
        params = {**document(URI), "range": {"start": where, "end": where}, "context": {"diagnostics": []}}
        actions.append(await timed(client.request("textDocument/codeAction", params)))
    print(f"code action: {percentiles(actions)}")


async def explain_merges(client: Client, lines: list[str], generator: random.Random) -> None:
    """``glassllm.explainMerges`` on one paragraph and on 100 lines."""
    for label, span in (("one paragraph", 1), ("100 lines", 100)):
        line = generator.randrange(len(lines) - span)
        selection = {"start": {"line": line, "character": 0}, "end": {"line": line + span, "character": 0}}
        start = time.perf_counter()
        answer = await client.request(
            "workspace/executeCommand", {"command": "glassllm.explainMerges", "arguments": [URI, selection]}
        )
        print(
            f"explain merges, {label}: {(time.perf_counter() - start) * 1000:7.1f} ms, "
            f"{answer['totalChunks']:,} chunks, page {len(answer['markdown']):,} characters"
        )


async def training(client: Client, scratch: Path, place: Callable[[], dict[str, int]]) -> None:
    """``glassllm.trainTokenizer`` on the whole file, hovers meanwhile, and the memory
    before and after."""
    print(f"server memory before training: {client.rss_mb():.0f} MB RSS")
    start = time.perf_counter()
    _, pending = client.request_future(
        "workspace/executeCommand",
        {"command": "glassllm.trainTokenizer", "arguments": [str(CORPUS), 1024, str(scratch / "pt.json")]},
    )
    busy = []
    while not pending.done():
        busy.append(await timed(client.request("textDocument/hover", {**document(URI), "position": place()})))
        await asyncio.sleep(0.01)
    trained = pending.result()
    print(
        f"train 1,024 entries on the 7 MB file from the editor: {time.perf_counter() - start:5.2f} s "
        f"({trained['merges']} merges)"
    )
    print(f"hover while training: {percentiles(busy)}")
    print(f"server memory after training: {client.rss_mb():.0f} MB RSS")


if __name__ == "__main__":
    asyncio.run(main())
