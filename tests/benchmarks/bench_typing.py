"""Benchmark: a day of typing (issue 21) over the real server's stdio.

Run ``python3 tests/benchmarks/bench_typing.py`` from the repository root. It opens a
1 MB document (``pt/heldout.txt`` repeated), makes 50,000 small incremental edits on
random lines (a letter, an accent, ``☂`` or a line break inserted, or one character
deleted; seeded), and asks a hover and ``glassllm/stats`` every 10 edits. It prints:

- the server's resident memory after a fifth of the edits (10,000: warm) and at the end;
- p50 of hover + stats over the first 200 and the last 200 probes, and their ratio, and
  over each tenth of the day (the curve between; the machine's own speed moves a run's
  level by a quarter, a tenth's p50 shows whether the server's drifts);
- the collector's longest pause while starting and opening the document, and while typing,
  timed inside the server process by a ``gc.callbacks`` hook that this script's launcher
  installs before the server starts (the server itself is unchanged), in wall time and in
  the CPU time of the thread collecting (on a machine other processes keep busy, a wall
  pause includes time the server waited for a core), and how many pauses passed 50 ms.

Targets (issue 21): RSS grows < 15 MB between edit 10,000 and 50,000; the last 200
probes' p50 within 1.3× of the first 200's; no collector pause > 50 ms.
``--edits N`` runs a shorter day (the memory is then read at N/5 and N).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_server import HELDOUT, Client, position

URI = "file:///bench/typing.txt"
DOCUMENT_BYTES = 1_000_000
PROBE_EVERY = 10
WINDOW = 200
INSERTS = ["a", "e", "s", "ã", "é", "ç", "☂", "\n"]

# Runs the server as ``python -m glassllm_server`` does, with a hook that times every
# collection, in wall time and in the CPU time of the thread collecting, and appends each
# pause of a millisecond or more to the file in argv[1]: when it ended (time.time()), wall
# and CPU milliseconds, generation.
LAUNCHER = """
import gc, sys, time
report = open(sys.argv.pop(1), "a", buffering=1)
started = [0.0, 0.0]
def timer(phase, info):
    if phase == "start":
        started[:] = time.perf_counter(), time.thread_time()
        return
    wall = (time.perf_counter() - started[0]) * 1000
    if wall >= 1:
        cpu = (time.thread_time() - started[1]) * 1000
        report.write(f"{time.time():.6f} {wall:.3f} {cpu:.3f} {info['generation']}\\n")
gc.callbacks.append(timer)
from glassllm_server.__main__ import main
main()
"""


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


class Typist:
    """The document as the editor holds it, and seeded random edits to it."""

    def __init__(self, text: str, seed: int) -> None:
        self.lines = text.split("\n")
        self.random = random.Random(seed)

    def edit(self) -> dict:
        lines = self.lines
        line = self.random.randrange(len(lines))
        text = lines[line]
        column = self.random.randint(0, len(text))
        start = position(line, utf16(text[:column]))
        if column < len(text) and self.random.random() < 0.2:
            end = position(line, utf16(text[: column + 1]))
            lines[line] = text[:column] + text[column + 1 :]
            return {"range": {"start": start, "end": end}, "text": ""}
        inserted = self.random.choice(INSERTS)
        if inserted == "\n":
            lines[line : line + 1] = [text[:column], text[column:]]
        else:
            lines[line] = text[:column] + inserted + text[column:]
        return {"range": {"start": start, "end": start}, "text": inserted}

    def somewhere(self) -> dict:
        line = self.random.randrange(len(self.lines))
        text = self.lines[line]
        return position(line, utf16(text[: self.random.randint(0, len(text))]))


def pauses(report: Path, typing_started: float) -> tuple[list[tuple[float, float, str]], ...]:
    """The collector's pauses of a millisecond or more, (wall ms, CPU ms, generation),
    before the first edit and since."""
    before: list[tuple[float, float, str]] = []
    since: list[tuple[float, float, str]] = []
    lines = report.read_text().splitlines() if report.exists() else []
    for ended, wall, cpu, generation in (line.split() for line in lines):
        (since if float(ended) >= typing_started else before).append((float(wall), float(cpu), generation))
    return before, since


def describe(pauses: list[tuple[float, float, str]]) -> str:
    """The longest pause in wall time (with its CPU time), then the longest in CPU time."""
    if not pauses:
        return "none over 1 ms"
    wall, cpu, generation = max(pauses)
    longest_cpu = max(pauses, key=lambda pause: pause[1])
    return (
        f"{wall:6.1f} ms ({cpu:.1f} ms of CPU, generation {generation}); "
        f"in CPU time {longest_cpu[1]:.1f} ms (generation {longest_cpu[2]})"
    )


async def start_server(report: Path) -> Client:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        LAUNCHER,
        str(report),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=1 << 26,
    )
    return Client(process)


async def main(edits: int, seed: int) -> None:
    heldout = HELDOUT.read_text(encoding="utf-8")
    text = heldout * -(-DOCUMENT_BYTES // len(heldout.encode("utf-8")))
    typist = Typist(text, seed)
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "collector-pauses"
        client = await start_server(report)
        await client.initialize()
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": URI, "languageId": "plaintext", "version": 1, "text": text}},
        )
        document = {"textDocument": {"uri": URI}}
        await client.request("glassllm/stats", document)
        print(f"document: {len(text.encode('utf-8')):,} bytes, {len(typist.lines):,} lines; {edits:,} edits")
        print(f"RSS after opening:        {client.rss_mb():8.1f} MB")

        probes: list[float] = []
        warm_rss = float("nan")
        started = time.perf_counter()
        typing_started = time.time()
        for version in range(2, edits + 2):
            client.notify(
                "textDocument/didChange",
                {"textDocument": {"uri": URI, "version": version}, "contentChanges": [typist.edit()]},
            )
            done = version - 1
            if done % PROBE_EVERY == 0:
                probe = time.perf_counter()
                hover = {**document, "position": typist.somewhere()}
                await client.request("textDocument/hover", hover)
                await client.request("glassllm/stats", document)
                probes.append((time.perf_counter() - probe) * 1000)
            if done == edits // 5:
                warm_rss = client.rss_mb()
                print(f"RSS after {done:>6,} edits:    {warm_rss:8.1f} MB")
        final_rss = client.rss_mb()
        growth = final_rss - warm_rss
        print(f"RSS after {edits:>6,} edits:    {final_rss:8.1f} MB   ({growth:+.1f} MB since edit {edits // 5:,})")
        first = statistics.median(probes[:WINDOW])
        last = statistics.median(probes[-WINDOW:])
        print(f"hover + stats p50, first {WINDOW} probes: {first:7.2f} ms")
        print(f"hover + stats p50, last {WINDOW} probes:  {last:7.2f} ms   ({last / first:.2f}×)")
        tenth = max(len(probes) // 10, 1)
        tenths = [
            statistics.median(probes[start : start + tenth]) for start in range(0, tenth * min(10, len(probes)), tenth)
        ]
        print("hover + stats p50, each tenth of the day: " + " ".join(f"{p50:.2f}" for p50 in tenths) + " ms")
        opening, typing = pauses(report, typing_started)
        print(f"longest collector pause while starting and opening: {describe(opening)}")
        print(f"longest collector pause while typing:               {describe(typing)}")
        slow, slow_cpu = sum(pause[0] > 50 for pause in typing), sum(pause[1] > 50 for pause in typing)
        print(f"collector pauses over 50 ms while typing: {slow} ({slow_cpu} in CPU time) of {len(typing)} over 1 ms")
        print(f"the whole run took {time.perf_counter() - started:.0f} s")
        await client.stop()


if __name__ == "__main__":
    # This process's own collections would be counted as the server's time.
    gc.disable()
    parser = argparse.ArgumentParser(description="A day of typing over the server's stdio (issue 21).")
    parser.add_argument("--edits", type=int, default=50_000, help="edits to make (default 50,000)")
    parser.add_argument("--seed", type=int, default=21, help="seed of the random edits (default 21)")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.edits, arguments.seed))
