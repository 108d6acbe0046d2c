"""``glassllm tokens`` over a repository of text against Hugging Face ``tokenizers``, in one run.

    bash tests/fixtures/fetch_models.sh
    python3 -m pip install -e ".[bench]" && python3 tests/benchmarks/bench_tokens.py --megabytes 50

The repository is made in a temporary folder: files of about ``--file-kb`` kilobytes cut
at line ends from the corpora's four books (corpora/{pt,en}/{train,heldout}.txt), taken in
turn, round and round, until ``--megabytes`` of text; a third of them in nested folders.
Each side counts every file with Llama 3's ``tokenizer.json``, the tokenizer loaded by the
timed run:

- HF: ``Tokenizer.from_file``, the files read, ``encode_batch`` (all cores, Rust threads)
  without special tokens;
- glassllm cold: :func:`glassllm.file_tokens.count_files` as ``glassllm tokens`` runs it
  (one process per core), with an empty cache, which it fills;
- glassllm cached: the same, a second time, from that cache (no tokenizer loaded);
- the command: ``glassllm tokens DIR --json`` in a fresh process over the cached files,
  start-up included.

The counts of both sides are checked equal, file by file. The ratio printed is glassllm's
time over HF's (the target: at most 2.0 cold; the cached run under a second).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from glassllm.count_cache import CountCache
from glassllm.file_tokens import LazyTokenizer, count_files, find_files

ROOT = Path(__file__).resolve().parents[2]
LLAMA3 = ROOT / "tests" / "fixtures" / "models" / "llama3" / "tokenizer.json"
BOOKS = [ROOT / "corpora" / language / f"{part}.txt" for language in ("pt", "en") for part in ("train", "heldout")]


def make_repository(folder: Path, megabytes: float, file_kb: int) -> list[str]:
    """Files cut from the books at line ends, the books taken in turn, until the size."""
    books = [book.read_text(encoding="utf-8").splitlines(keepends=True) for book in BOOKS]
    positions = [0] * len(books)
    wanted, written, index = int(megabytes * 1e6), 0, 0
    paths = []
    while written < wanted:
        book = index % len(books)
        lines, size = [], 0
        while size < file_kb * 1000:
            line = books[book][positions[book] % len(books[book])]
            positions[book] += 1
            lines.append(line)
            size += len(line.encode("utf-8"))
        path = folder / (f"d{index % 7}/e{index % 3}" if index % 3 == 0 else "") / f"f{index}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(lines), encoding="utf-8")
        paths.append(str(path))
        written += size
        index += 1
    return paths


def hugging_face(paths: list[str]) -> tuple[float, dict[str, int]]:
    from tokenizers import Tokenizer

    started = time.perf_counter()
    tokenizer = Tokenizer.from_file(str(LLAMA3))
    texts = [Path(path).read_text(encoding="utf-8") for path in paths]
    encodings = tokenizer.encode_batch(texts, add_special_tokens=False)
    seconds = time.perf_counter() - started
    return seconds, {path: len(encoding.ids) for path, encoding in zip(paths, encodings, strict=True)}


def glassllm(folder: Path, cache: CountCache) -> tuple[float, dict[str, int]]:
    started = time.perf_counter()
    files = find_files([str(folder)]).files
    counted = count_files(files, [LazyTokenizer(str(LLAMA3))], cache=cache)
    seconds = time.perf_counter() - started
    return seconds, {path: counts[0] for path, counts in counted.counts.items()}


def command(folder: Path, cache_home: Path) -> float:
    environment = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "glassllm.cli", "tokens", str(folder), "-t", str(LLAMA3), "--json", "-q"],
        env=environment,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description="glassllm tokens against HF tokenizers over a made repository")
    parser.add_argument("--megabytes", type=float, default=50, help="the repository's size (default 50)")
    parser.add_argument("--file-kb", type=int, default=20, help="each file's size in kB (default 20)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder, cache_home = Path(scratch) / "repo", Path(scratch) / "cache"
        folder.mkdir()
        paths = make_repository(folder, args.megabytes, args.file_kb)
        size = sum(os.path.getsize(path) for path in paths) / 1e6
        print(f"{len(paths):,} files, {size:.1f} MB, Llama 3, {os.cpu_count()} cores")
        hf_seconds, hf_counts = hugging_face(paths)
        print(f"HF encode_batch: {hf_seconds:.2f} s ({size / hf_seconds:.1f} MB/s)")
        cache = CountCache(cache_home / "glassllm" / "token-counts.sqlite3")
        cold, counts = glassllm(folder, cache)
        assert counts == hf_counts, "glassllm's counts differ from HF's"
        print(f"glassllm cold: {cold:.2f} s ({size / cold:.1f} MB/s), × {cold / hf_seconds:.2f} HF's time (target ≤ 2)")
        cached, counts = glassllm(folder, cache)
        assert counts == hf_counts
        print(f"glassllm from the cache: {cached:.2f} s (target < 1 s)")
        cache.close()
        print(f"glassllm tokens DIR --json, cached, in a fresh process: {command(folder, cache_home):.2f} s")


if __name__ == "__main__":
    main()
