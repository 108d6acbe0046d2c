"""Counting on real Dask clusters gives what counting in one process gives, byte for byte:
a LocalCluster of 2 worker processes, a scheduler and 2 workers started as separate
processes on 127.0.0.1, and a cluster that loses a worker (a real kill) in the middle."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from glassllm import Tokenizer  # noqa: E402 (after the skip when Dask is missing)
from glassllm.training import chunk_counting  # noqa: E402
from glassllm.training.chunk_counting import count_chunks, count_files  # noqa: E402
from glassllm.training.cluster import dask_client  # noqa: E402

pytestmark = pytest.mark.timeout(240)

DASK = str(Path(sys.executable).parent / "dask")


def glassllm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "glassllm.cli", *args], capture_output=True, text=True, timeout=200)


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory) -> Iterator[str]:
    """A scheduler and 2 workers (one thread each), started with ``dask scheduler`` and
    ``dask worker`` as separate processes on 127.0.0.1; their address."""
    folder = tmp_path_factory.mktemp("cluster")
    scheduler_file = folder / "scheduler.json"
    processes: list[subprocess.Popen[bytes]] = []
    log = open(folder / "cluster.log", "wb")  # noqa: SIM115 (closed after the processes end)
    command = [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard"]
    try:
        processes.append(
            subprocess.Popen(
                [*command, "--scheduler-file", str(scheduler_file)],
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        )
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() or not scheduler_file.read_text():
            assert time.monotonic() < deadline, (folder / "cluster.log").read_text()
            time.sleep(0.2)
        address = json.loads(scheduler_file.read_text())["address"]
        for _ in range(2):
            processes.append(
                subprocess.Popen(
                    [DASK, "worker", address, "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard"],
                    stdout=log,
                    stderr=log,
                    start_new_session=True,
                )
            )
        with distributed.Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=90)
        yield address
    finally:
        for process in processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        log.close()


def plain_train(files: list[str], folder: Path, field: str | None = None) -> bytes:
    out = folder / "plain.json"
    extra = ["--field", field] if field else []
    result = glassllm("train", *files, *extra, "--vocab-size", "500", "-o", str(out), "--jobs", "1")
    assert result.returncode == 0, result.stderr
    return out.read_bytes()


def test_a_local_cluster_of_two_worker_processes_counts_what_one_process_counts(mixed_corpus):
    expected = count_chunks(mixed_corpus.texts, jobs=1)
    seen: list[tuple[int, int]] = []
    with dask_client(workers=2) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        counts = count_files(mixed_corpus.files, field="text", client=client, progress=lambda *p: seen.append(p))
    assert counts == expected
    total = sum(os.path.getsize(path) for path in mixed_corpus.files)
    assert seen[-1] == (total, total)


def test_glassllm_train_dask_locally_is_byte_identical_to_plain_train(mixed_corpus, tmp_path):
    out = tmp_path / "dask.json"
    result = glassllm(
        "train", *mixed_corpus.files, "--field", "text", "--vocab-size", "500", "-o", str(out), "--dask", "--jobs", "2"
    )
    assert result.returncode == 0, result.stderr
    assert "on Dask (2 workers)" in result.stderr
    assert out.read_bytes() == plain_train(mixed_corpus.files, tmp_path, "text")


def test_a_scheduler_and_workers_in_separate_processes_count_byte_identically(mixed_corpus, scheduler, tmp_path):
    out = tmp_path / "dask.json"
    args = ["--field", "text", "--vocab-size", "500", "-o", str(out)]
    result = glassllm("train", *mixed_corpus.files, *args, "--dask", scheduler)
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() == plain_train(mixed_corpus.files, tmp_path, "text")
    counts = tmp_path / "corpus.counts"
    result = glassllm("count", *mixed_corpus.files, "--field", "text", "-o", str(counts), "--dask", scheduler)
    assert result.returncode == 0, result.stderr
    from_counts = tmp_path / "from-counts.json"
    assert glassllm("train", "--counts", str(counts), "--vocab-size", "500", "-o", str(from_counts)).returncode == 0
    assert from_counts.read_bytes() == out.read_bytes()


def test_a_worker_killed_in_the_middle_is_survived(corpus_text, scheduler, tmp_path, monkeypatch):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(corpus_text("en", 1_500_000) + corpus_text("pt", 1_500_000), encoding="utf-8")
    # Parts of 40 kB: about 75 of them, so most are still to count when the kill comes.
    monkeypatch.setattr(chunk_counting, "_BLOCK", 40_000)
    monkeypatch.setattr(chunk_counting, "_PART_BYTES", 40_000)
    killed: list[int] = []
    with distributed.Client(scheduler, timeout=60) as client:
        client.wait_for_workers(2, timeout=90)
        pids = client.run(os.getpid)

        def kill_one_worker(done: int, total: int) -> None:
            if not killed and 0 < done < total // 2:
                victim = max(pids.values())
                os.kill(victim, signal.SIGKILL)
                killed.append(victim)

        counts = count_files([corpus], client=client, progress=kill_one_worker)
        assert killed, "the kill came too late: counting had finished"
        client.wait_for_workers(2, timeout=90)  # the nanny starts another worker
        assert set(client.run(os.getpid).values()) != set(pids.values())
    expected = count_chunks(corpus.read_text(encoding="utf-8"), jobs=1)
    assert counts == expected
    assert Tokenizer.train_from_counts(counts, 500).merges == Tokenizer.train_from_counts(expected, 500).merges
