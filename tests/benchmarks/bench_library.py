"""glassllm against Hugging Face `tokenizers`, measured in one run on the same machine.

    python3 -m pip install -e ".[bench]" && python3 tests/benchmarks/bench_library.py

Both train a 1,024-entry BPE tokenizer on corpora/pt/train.txt (NFC, a visible
▁ for spaces, the same four specials), then encode corpora/pt/heldout.txt. The
script prints each figure and the ratios docs/benchmarks.md quotes. Each timing is the best of
``--repeat`` runs (five times as many for encoding), glassllm and HF taking turns.

Training at scale: both languages' corpora (train and held-out), four times over, make a
~57 MB file; each trainer learns 4,096 entries from it in a fresh process of its own
(glassllm as ``glassllm train`` does: ``count_files`` with one process per core, then
``Tokenizer.train_from_counts``; HF ``BpeTrainer`` with its threads), twice: once timed,
once with this script sampling the process tree every 20 ms for the peak memory: the
peak of the tree's summed PSS (shared pages split between the processes that share them,
so forked workers are neither free nor counted twice); the main process's peak RSS too.
``--skip-large`` leaves this part out.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tokenizers import Tokenizer as HFTokenizer
from tokenizers import models, normalizers, pre_tokenizers, trainers

from glassllm import Tokenizer
from glassllm.tokenizer import SPECIALS

CORPORA = Path(__file__).resolve().parents[2] / "corpora"


def best_of(repeat: int, *runs: Callable[[], object]) -> list[tuple[float, object]]:
    """The best time and last result of each run; the runs take turns, so a busy moment
    on the machine slows them alike instead of deciding a ratio."""
    best = [float("inf")] * len(runs)
    results: list[object] = [None] * len(runs)
    for _ in range(repeat):
        for index, run in enumerate(runs):
            started = time.perf_counter()
            results[index] = run()
            best[index] = min(best[index], time.perf_counter() - started)
    return list(zip(best, results, strict=False))


def train_hf(path: Path, vocab_size: int) -> HFTokenizer:
    tok = HFTokenizer(models.BPE(unk_token="<unk>"))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="never")
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIALS, show_progress=False)
    tok.train([str(path)], trainer)
    return tok


def large_corpus(folder: Path, copies: int = 4) -> Path:
    """Both languages' train and held-out text, ``copies`` times over, in one file."""
    path = folder / "large.txt"
    with open(path, "wb") as out:
        for _ in range(copies):
            for language in ("pt", "en"):
                for name in ("train.txt", "heldout.txt"):
                    out.write((CORPORA / language / name).read_bytes())
    return path


def train_large(trainer: str, path: Path, vocab_size: int) -> None:
    """Run in a child process: train with ``trainer`` and print the result as JSON."""
    started = time.perf_counter()
    if trainer == "glassllm":
        from glassllm.training.chunk_counting import count_files

        tok = Tokenizer.train_from_counts(count_files([path], jobs=None), vocab_size)
        size = tok.vocab_size
    else:
        size = train_hf(path, vocab_size).get_vocab_size()
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"seconds": seconds, "vocab_size": size, "main_rss": peak}))


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants, from each process's parent in /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    parent = int(stat.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def _pss(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as rollup:
                for line in rollup:
                    if line.startswith(b"Pss:"):
                        total += int(line.split()[1]) * 1024
                        break
        except OSError:
            continue  # the process ended between the listing and the read
    return total


def measure_large(trainer: str, path: Path, vocab_size: int, sample: bool) -> dict[str, float]:
    """Train in a fresh process: the child's figures, plus ``peak_pss`` when ``sample``
    (reading a process's memory map stalls it a little, so timed runs go unsampled)."""
    child = subprocess.Popen(
        [sys.executable, __file__, "--train-large", trainer, str(path), "--vocab-size", str(vocab_size)],
        stdout=subprocess.PIPE,
        text=True,
    )
    peak = 0
    tree = [child.pid]
    for sample_number in itertools.count():
        if not sample:
            child.wait()
        if child.poll() is not None:
            break
        if sample_number % 10 == 0:  # listing /proc costs most: the tree afresh every 0.2 s
            tree = _tree(child.pid)
        peak = max(peak, _pss(tree))
        time.sleep(0.02)
    result = json.loads(child.communicate()[0])
    result["peak_pss"] = peak
    return result


def report_large(vocab_size: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = large_corpus(Path(folder))
        ours = measure_large("glassllm", path, vocab_size, sample=False)
        hf = measure_large("hf", path, vocab_size, sample=False)
        ours["peak_pss"] = measure_large("glassllm", path, vocab_size, sample=True)["peak_pss"]
        hf["peak_pss"] = measure_large("hf", path, vocab_size, sample=True)["peak_pss"]
        megabytes = path.stat().st_size / 1e6
    mb = 1 << 20
    print(f"large      {megabytes:.1f} MB (pt and en, train and held-out, 4 times), {vocab_size:,} entries:")
    print(
        f"           time       glassllm {ours['seconds']:6.2f} s    HF {hf['seconds']:6.2f} s    "
        f"glassllm/HF = {ours['seconds'] / hf['seconds']:.2f}  (target ≤ 1.0)"
    )
    print(
        f"           peak PSS   glassllm {ours['peak_pss'] / mb:6.0f} MB   HF {hf['peak_pss'] / mb:6.0f} MB   "
        f"glassllm/HF = {ours['peak_pss'] / hf['peak_pss']:.2f}  (target ≤ 1.2; the process and its workers)"
    )
    print(
        f"           peak RSS   glassllm {ours['main_rss'] / mb:6.0f} MB   HF {hf['main_rss'] / mb:6.0f} MB   "
        f"glassllm/HF = {ours['main_rss'] / hf['main_rss']:.2f}  (the main process alone)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--language", default="pt", choices=["pt", "en"])
    parser.add_argument("--vocab-size", type=int, default=1024)
    parser.add_argument("--large-vocab-size", type=int, default=4096)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-large", action="store_true", help="leave out training on the large corpus")
    parser.add_argument("--train-large", nargs=2, metavar=("TRAINER", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.train_large:
        train_large(args.train_large[0], Path(args.train_large[1]), args.vocab_size)
        return

    train_path = CORPORA / args.language / "train.txt"
    heldout = (CORPORA / args.language / "heldout.txt").read_text(encoding="utf-8")
    lines = heldout.splitlines(keepends=True)

    (ours_train, ours), (hf_train, hf) = best_of(
        args.repeat,
        lambda: Tokenizer.train(train_path.read_text("utf-8"), args.vocab_size),
        lambda: train_hf(train_path, args.vocab_size),
    )
    assert isinstance(ours, Tokenizer) and isinstance(hf, HFTokenizer)

    # Encoding: the chunk cache is part of the design, so it is warmed by the first run
    # (the best run is kept); a fresh tokenizer's first pass is reported too, the best of
    # as many fresh tokenizers (a single pass of this 209 KB text is mostly noise).
    ((cold, _),) = best_of(args.repeat, lambda: Tokenizer(ours.alphabet, ours.merges).encode(heldout))
    (ours_encode, ids), (ours_spans, spans), (hf_encode, encodings) = best_of(
        args.repeat * 5,
        lambda: ours.encode(heldout),
        lambda: ours.encode_spans(heldout),
        lambda: hf.encode_batch(lines),
    )
    assert isinstance(ids, list) and isinstance(spans, list) and isinstance(encodings, list)
    hf_tokens = sum(len(encoding.ids) for encoding in encodings)
    megabytes = len(heldout.encode("utf-8")) / 1e6

    print(f"corpus: {train_path} ({train_path.stat().st_size / 1e6:.1f} MB), vocabulary {args.vocab_size}")
    print(
        f"training   glassllm {ours_train:7.3f} s   HF {hf_train:7.3f} s   glassllm/HF = {ours_train / hf_train:.2f}"
        "  (target ≤ 1.0)"
    )
    print(
        f"encode     glassllm {megabytes / ours_encode:7.2f} MB/s   HF encode_batch {megabytes / hf_encode:7.2f} MB/s"
        f"   glassllm/HF = {hf_encode / ours_encode:.2f}  (target ≥ 2.0)"
    )
    print(
        f"           glassllm first pass on a fresh tokenizer (cold cache): {megabytes / cold:.2f} MB/s"
        f"   glassllm/HF = {hf_encode / cold:.2f}  (target ≥ 0.5)"
    )
    print(
        f"spans      glassllm encode_spans {megabytes / ours_spans:7.2f} MB/s = {ours_encode / ours_spans:.2f} × encode"
        "  (target ≥ 0.5)"
    )
    print(
        f"tokens     glassllm {len(ids):,} ({len(spans):,} spans)   HF {hf_tokens:,}   on {len(heldout):,} characters"
    )
    if not args.skip_large:
        report_large(args.large_vocab_size)


if __name__ == "__main__":
    main()
