"""Counting on Dask, from compressed and Parquet corpora, against ``--jobs`` and HF, in one run.

    python3 -m pip install -e ".[bench]" && python3 tests/benchmarks/bench_corpora.py

The corpus is bench_library.py's large one: both languages' corpora (train and held-out)
four times over, 58.9 MB; every run learns 4,096 entries from it in a fresh process,
while this script samples the process tree's summed PSS every 50 ms (Dask's workers and
nanny are in that tree). The runs:

- ``--jobs 2``: ``count_files`` in 2 forked processes, as ``glassllm train --jobs 2``;
- ``--dask``: a LocalCluster of 2 worker processes started in the run, its start
  counted (that is Dask's overhead, as a user meets it);
- HF ``tokenizers``' ``BpeTrainer``, for memory;
- the same text as 8 Zstandard shards (one compressed stream cannot be entered in the
  middle, so a single ``.zst`` file is counted by one process; datasets ship as shards),
  and as one Parquet file of 16,384-row row groups, one record per line, ``--jobs 2``.

Then the counting throughput of one worker (MB/s, one process on the plain text), the
figure for estimating a cluster, and the learning step alone (4,096 entries) on counts
with more and more distinct chunks, the part that stays on one machine.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_library import CORPORA, _pss, _tree, large_corpus, train_hf

from glassllm import Tokenizer
from glassllm.training.chunk_counting import count_files

VOCAB = 4096
SHARDS = 8


def run(variant: str, paths: list[str]) -> None:
    """In a child process: count and learn as ``variant`` says; print the figures as JSON."""
    started = time.perf_counter()
    figures: dict[str, float] = {}
    if variant == "hf":
        train_hf(Path(paths[0]), VOCAB)
    else:
        field = "text" if variant == "parquet" else None
        if variant == "dask":
            from glassllm.training.cluster import dask_client

            with dask_client(workers=2) as client:
                figures["cluster_start"] = time.perf_counter() - started
                counted = time.perf_counter()
                counts = count_files(paths, client=client)
                figures["count_seconds"] = time.perf_counter() - counted
        else:
            counted = time.perf_counter()
            counts = count_files(paths, jobs=1 if variant == "one" else 2, field=field)
            figures["count_seconds"] = time.perf_counter() - counted
        if variant != "one":
            Tokenizer.train_from_counts(counts, VOCAB)
    figures["seconds"] = time.perf_counter() - started
    print(json.dumps(figures))


def measure(variant: str, paths: list[Path]) -> dict[str, float]:
    child = subprocess.Popen(
        [sys.executable, __file__, "--run", variant, *map(str, paths)], stdout=subprocess.PIPE, text=True
    )
    peak, tree = 0, [child.pid]
    for sample in itertools.count():
        if child.poll() is not None:
            break
        if sample % 4 == 0:
            tree = _tree(child.pid)
        peak = max(peak, _pss(tree))
        time.sleep(0.05)
    assert child.returncode == 0, f"{variant} failed"
    result = json.loads(child.stdout.read() if child.stdout else "{}")
    result["peak_pss"] = peak
    return result


def shard_zst(path: Path, folder: Path) -> list[Path]:
    import zstandard

    lines = path.read_bytes().splitlines(keepends=True)
    step = -(-len(lines) // SHARDS)
    shards = []
    for index in range(SHARDS):
        shard = folder / f"shard-{index}.txt.zst"
        text = b"".join(lines[index * step : (index + 1) * step])
        shard.write_bytes(zstandard.ZstdCompressor(level=3).compress(text))
        shards.append(shard)
    return shards


def to_parquet(path: Path, folder: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = folder / "corpus.parquet"
    records = path.read_text(encoding="utf-8").split("\n")[:-1]
    pq.write_table(pa.table({"text": records}), out, row_group_size=16_384)
    return out


def learning_growth() -> None:
    """Learning 4,096 entries in this process, on counts of growing corpora."""
    from glassllm.training.chunk_counting import count_chunks

    text = ""
    for name in ("en/heldout.txt", "en/train.txt", "pt/train.txt"):
        text += (CORPORA / name).read_text(encoding="utf-8")
        counts = count_chunks(text, jobs=1)
        started = time.perf_counter()
        Tokenizer.train_from_counts(counts, VOCAB)
        seconds = time.perf_counter() - started
        print(f"           {len(counts):>9,} distinct chunks ({len(text.encode()) / 1e6:5.1f} MB): {seconds:6.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--run", nargs="+", metavar=("VARIANT", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        run(args.run[0], args.run[1:])
        return
    mb = 1e6
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        path = large_corpus(folder)
        size = path.stat().st_size
        shards, parquet = shard_zst(path, folder), to_parquet(path, folder)
        jobs = measure("jobs", [path])
        dask = measure("dask", [path])
        hf = measure("hf", [path])
        zst = measure("zst", shards)
        table = measure("parquet", [parquet])
        one = measure("one", [path])
        compressed = sum(shard.stat().st_size for shard in shards)
    print(f"corpus     {size / mb:.1f} MB (pt and en, train and held-out, 4 times), {VOCAB:,} entries, 2 workers")
    print(
        f"time       --dask {dask['seconds']:6.2f} s   --jobs 2 {jobs['seconds']:6.2f} s   "
        f"dask/jobs = {dask['seconds'] / jobs['seconds']:.2f}  (target ≤ 1.3; the cluster's start "
        f"{dask['cluster_start']:.2f} s included)"
    )
    print(
        f"counting   --dask {dask['count_seconds']:6.2f} s   --jobs 2 {jobs['count_seconds']:6.2f} s   "
        f"dask/jobs = {dask['count_seconds'] / jobs['count_seconds']:.2f}"
    )
    for label, figures in (("--dask", dask), ("--jobs 2", jobs)):
        print(
            f"peak PSS   {label:8s} {figures['peak_pss'] / 2**20:6.0f} MB   HF {hf['peak_pss'] / 2**20:6.0f} MB   "
            f"ratio = {figures['peak_pss'] / hf['peak_pss']:.2f}  (target ≤ 1.2; the whole process tree)"
        )
    print(
        f"formats    .zst ({SHARDS} shards, {compressed / mb:.1f} MB) {zst['seconds']:6.2f} s   "
        f"Parquet {table['seconds']:6.2f} s   plain {jobs['seconds']:6.2f} s   "
        f"zst/plain = {zst['seconds'] / jobs['seconds']:.2f}   parquet/plain = {table['seconds'] / jobs['seconds']:.2f}"
        "  (target ≤ 1.2)"
    )
    print(
        f"throughput one worker {size / mb / one['count_seconds']:5.2f} MB/s (one process, plain text);   "
        f"per worker with --dask {size / mb / dask['count_seconds'] / 2:5.2f} MB/s, "
        f"with --jobs 2 {size / mb / jobs['count_seconds'] / 2:5.2f} MB/s"
    )
    print(f"learning   {VOCAB:,} entries on one machine, as distinct chunks grow:")
    learning_growth()


if __name__ == "__main__":
    main()
