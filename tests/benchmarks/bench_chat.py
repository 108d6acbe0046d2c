"""``glassllm chat`` counting a JSONL dataset against transformers' ``apply_chat_template``, in one run.

    bash tests/fixtures/fetch_models.sh
    python3 tests/benchmarks/bench_chat.py

Writes a dataset of ``--conversations`` conversations (10,000 by default) into a
temporary folder: each a system prompt, a user's question, an assistant's answer and a
follow-up, their texts lines of the held-out books (corpora/{pt,en}/heldout.txt) taken
in turn. Then counts it with Llama 3's own chat template (tokenizer_config.json beside
its tokenizer.json):

- glassllm: ``glassllm chat DATASET -t llama3/tokenizer.json`` as a new process, all of
  it (loading the tokenizer, starting the template's worker, reading the file, the
  summary);
- transformers: a new process that loads ``AutoTokenizer`` from the same folder, reads
  the same file and calls ``apply_chat_template(…, tokenize=True)`` on all of its
  conversations at once (batched), then once per conversation; its time is loading and
  reading plus the faster of the two.

Both totals must be equal. The ratio printed is transformers' time over glassllm's:
above 1.0, glassllm is faster.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from itertools import cycle
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LLAMA3 = ROOT / "tests" / "fixtures" / "models" / "llama3" / "tokenizer.json"

TRANSFORMERS = """
import json, sys, time
started = time.perf_counter()
from transformers import AutoTokenizer
tokenizer = AutoTokenizer.from_pretrained(sys.argv[1])
with open(sys.argv[2], encoding="utf-8") as lines:
    conversations = [json.loads(line)["messages"] for line in lines]
loaded = time.perf_counter() - started
started = time.perf_counter()
found = tokenizer.apply_chat_template(conversations, tokenize=True, return_dict=True)
batched = time.perf_counter() - started
started = time.perf_counter()
one_by_one = [tokenizer.apply_chat_template(conversation, tokenize=True) for conversation in conversations]
looped = time.perf_counter() - started
assert [len(ids) for ids in found["input_ids"]] == [len(found["input_ids"]) for found in one_by_one]
print(sum(map(len, found["input_ids"])), loaded + min(batched, looped), batched, looped)
"""


def write_dataset(path: Path, conversations: int) -> None:
    lines = [
        line.strip()
        for language in ("pt", "en")
        for line in (ROOT / "corpora" / language / "heldout.txt").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    texts = cycle(lines)
    with path.open("w", encoding="utf-8") as out:
        for _ in range(conversations):
            roles = ("system", "user", "assistant", "user")
            messages = [{"role": role, "content": next(texts)} for role in roles]
            out.write(json.dumps({"messages": messages}, ensure_ascii=False) + "\n")


def glassllm_run(dataset: Path) -> tuple[int, float]:
    started = time.perf_counter()
    command = [sys.executable, "-m", "glassllm.cli", "chat", str(dataset), "-t", str(LLAMA3), "--json"]
    found = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
    seconds = time.perf_counter() - started
    summary = json.loads(found.stdout.splitlines()[-1])["summary"]
    return summary["total"], seconds


def glassllm_count(dataset: Path) -> tuple[int, float]:
    started = time.perf_counter()
    command = [sys.executable, "-m", "glassllm.cli", "chat", str(dataset), "-t", str(LLAMA3)]
    found = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
    seconds = time.perf_counter() - started
    total = int(found.stdout.split(" tokens")[0].split("·")[-1].strip().replace(",", ""))
    return total, seconds


def transformers_run(dataset: Path) -> tuple[int, float, float, float]:
    command = [sys.executable, "-c", TRANSFORMERS, str(LLAMA3.parent), str(dataset)]
    found = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
    total, seconds, batched, looped = found.stdout.split()[-4:]
    return int(total), float(seconds), float(batched), float(looped)


def main() -> None:
    parser = argparse.ArgumentParser(description="glassllm chat counting a JSONL dataset against transformers")
    parser.add_argument("--conversations", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        dataset = Path(folder) / "dataset.jsonl"
        write_dataset(dataset, args.conversations)
        peer_total, peer, batched, looped = transformers_run(dataset)
        total, ours = glassllm_count(dataset)
        traced_total, traced = glassllm_run(dataset)
    assert total == peer_total == traced_total, (total, peer_total, traced_total)
    print(f"{args.conversations:,} conversations, {total:,} tokens (Llama 3's own chat template)")
    calls = f"(batched {batched:.2f} s, one by one {looped:.2f} s)"
    print(f"transformers apply_chat_template, process:         {peer:.2f} s {calls}")
    print(f"glassllm chat (counting), process:                 {ours:.2f} s   ratio {peer / ours:.2f}")
    print(f"glassllm chat --json (every token's source):       {traced:.2f} s   ratio {peer / traced:.2f}")


if __name__ == "__main__":
    main()
