"""A large first pass shares its chunks with a forked child (glassllm/pipeline/two_cores.py):
the same values in every case, the child's only when it ended well, no fork where one is
unsafe. Each case runs in a fresh interpreter, whose single thread makes forking allowed
(a test process may hold other threads, where it never forks)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from tests.conftest import CORPORA
from tests.library.formats.fixtures import model_file

_COUNTED_FORKS = """
import json, os, sys
from glassllm.pipeline import two_cores
forks = []
_fork = os.fork
def counted():
    pid = _fork()
    if pid:
        forks.append(pid)
    return pid
os.fork = counted
"""


def _run(script: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_COUNTED_FORKS) + textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_a_large_first_pass_forks_once_and_gives_the_same_ids():
    path = model_file("llama3")
    found = _run(f"""
        from glassllm.formats.load import load_model
        text = open({str(CORPORA / "pt" / "heldout.txt")!r}, encoding="utf-8").read()
        text += open({str(CORPORA / "en" / "heldout.txt")!r}, encoding="utf-8").read()
        ids = load_model({str(path)!r}).encode(text)
        again = len(forks)
        two_cores.FORK_FROM = 10**9
        alone = load_model({str(path)!r}).encode(text)
        print(json.dumps({{"forks": again, "same": ids == alone, "count": len(ids)}}))
    """)
    assert found["forks"] == 1 and found["same"] and found["count"] > 100_000


def test_an_own_tokenizers_large_first_pass_forks_once_and_gives_the_same_ids():
    found = _run(f"""
        from glassllm import packaged
        from glassllm.tokenizer import Tokenizer
        text = open({str(CORPORA / "pt" / "heldout.txt")!r}, encoding="utf-8").read()
        tokenizer = packaged("pt")
        ids = tokenizer.encode(text)
        again = len(forks)
        spans = tokenizer.encode_spans(text)  # the child's chunks are in this process's caches
        two_cores.FORK_FROM = 10**9
        alone = Tokenizer(tokenizer.alphabet, tokenizer.merges).encode(text)
        print(json.dumps({{"forks": again, "same": ids == alone == [span.id for span in spans]}}))
    """)
    assert found == {"forks": 1, "same": True}


@pytest.mark.parametrize("child", ["fails", "dies", "sends garbage"])
def test_a_child_that_fails_leaves_the_parent_to_make_its_values(child):
    found = _run(f"""
        parent = os.getpid()
        def make(item):
            if os.getpid() != parent:
                if {child!r} == "fails":
                    raise ValueError(item)
                if {child!r} == "dies":
                    os.kill(os.getpid(), 9)
            return item.upper()
        if {child!r} == "sends garbage":
            two_cores.pickle.dumps = lambda value, protocol: b"not a pickle"
        items = [f"chunk {{number}}" for number in range(5000)]
        made = two_cores.each_of(items, make)
        print(json.dumps({{"forks": len(forks), "same": made == [item.upper() for item in items]}}))
    """)
    assert found == {"forks": 1, "same": True}


def test_an_error_in_the_parent_ends_the_child_and_propagates():
    # The child sleeps for an hour: the case ends only if the parent kills it.
    found = _run("""
        import time
        parent = os.getpid()
        def make(item):
            if os.getpid() != parent:
                time.sleep(3600)
            if item == "chunk 100":
                raise KeyError(item)
            return item
        try:
            two_cores.each_of([f"chunk {number}" for number in range(5000)], make)
        except KeyError as error:
            raised = str(error)
        try:
            os.waitpid(-1, os.WNOHANG)
            left = True
        except ChildProcessError:
            left = False
        print(json.dumps({"raised": raised, "forks": len(forks), "child left": left}))
    """)
    assert found == {"raised": "'chunk 100'", "forks": 1, "child left": False}


def test_a_child_reaped_by_someone_else_still_counts_when_it_sent_everything():
    found = _run("""
        import signal
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped as they end
        items = [f"chunk {number}" for number in range(5000)]
        made = two_cores.each_of(items, str.upper)
        print(json.dumps({"forks": len(forks), "same": made == [item.upper() for item in items]}))
    """)
    assert found == {"forks": 1, "same": True}


@pytest.mark.parametrize("case", ["few items", "another thread", "a pool's worker"])
def test_no_fork_where_it_is_not_worth_it_or_not_safe(case):
    found = _run(f"""
        import multiprocessing, threading
        items = [f"chunk {{number}}" for number in range(100 if {case!r} == "few items" else 5000)]
        def work(_):
            return two_cores.each_of(items, str.upper), len(forks)
        if {case!r} == "a pool's worker":
            with multiprocessing.get_context("fork").Pool(1) as pool:
                made, forked = pool.map(work, [0])[0]
        else:
            if {case!r} == "another thread":
                stop = threading.Event()
                threading.Thread(target=stop.wait, daemon=True).start()
            made, forked = work(0)
        # The pool forked its worker: only forks in the worker count.
        print(json.dumps({{"forks": forked, "same": made == [item.upper() for item in items]}}))
    """)
    assert found == {"forks": 0, "same": True}
