"""Training: the fast trainer learns exactly what the obvious slow algorithm learns."""

import gc
import threading
from collections import Counter
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glassllm import Tokenizer
from glassllm.pipeline.bpe import Pair, apply_merges, collector_paused, learn_merges, merge, merge_pieces
from glassllm.tokenizer import SPECIALS, pre_tokenize
from glassllm.training.chunk_counting import count_chunks


def get_stats(symbols: list[str], counts: Counter[Pair], weight: int) -> None:
    """Count adjacent pairs of ``symbols`` (overlapping: ``a a a`` holds ``(a, a)`` twice)."""
    for pair in pairwise(symbols):
        counts[pair] += weight


def reference_train(text: str, vocab_size: int) -> tuple[list[str], list[tuple[str, str]], list[int]]:
    """The textbook loop: recount every pair each round, merge the best one everywhere."""
    chunks = Counter(pre_tokenize(text))
    alphabet = sorted({character for chunk in chunks for character in chunk})
    words = [(list(chunk), count) for chunk, count in chunks.items()]
    merges: list[tuple[str, str]] = []
    counts: list[int] = []
    while len(SPECIALS) + len(alphabet) + len(merges) < vocab_size:
        stats = Counter()
        for symbols, weight in words:
            get_stats(symbols, stats, weight)
        if not stats:
            break
        best = min(stats, key=lambda pair: (-stats[pair], pair))
        merges.append(best)
        counts.append(stats[best])
        words = [(merge(symbols, best), weight) for symbols, weight in words]
    return alphabet, merges, counts


def assert_same_as_reference(text: str, vocab_size: int) -> None:
    alphabet, merges, counts = reference_train(text, vocab_size)
    tok = Tokenizer.train(text, vocab_size)
    assert tok.alphabet == alphabet
    assert tok.merges == merges
    assert tok.merge_counts == counts


# Few distinct characters make long runs, overlapping pairs (``aaaa``) and the same piece
# learned by two different merges, which is where incremental bookkeeping goes wrong.
small_text = st.text(alphabet="ab \nc", max_size=120)
any_text = st.text(st.characters(codec="utf-8", categories=["L", "N", "P", "Zs", "Mn", "So", "Cc"]), max_size=80)


@settings(max_examples=300, deadline=None)
@given(small_text, st.integers(min_value=0, max_value=60))
def test_fast_trainer_equals_reference_on_small_alphabets(text, extra):
    base = len(SPECIALS) + len(set("".join(pre_tokenize(text))))
    assert_same_as_reference(text, base + extra)


@settings(max_examples=100, deadline=None)
@given(any_text, st.integers(min_value=0, max_value=40))
def test_fast_trainer_equals_reference_on_any_text(text, extra):
    base = len(SPECIALS) + len(set("".join(pre_tokenize(text))))
    assert_same_as_reference(text, base + extra)


@pytest.mark.parametrize(
    "text",
    [
        "aaaa aaa aa a",
        "abab ababab abba",
        "aaabaaab",
        "xyzxyz xyz yzx zxy",
        "banana bandana cabana",
    ],
)
def test_fast_trainer_equals_reference_on_tricky_runs(text):
    assert_same_as_reference(text, 200)


def test_a_corpus_prefix_trains_like_the_reference(corpus_text):
    assert_same_as_reference(corpus_text("pt", 40_000), 400)


def test_training_is_deterministic(corpus_text):
    text = corpus_text("en", 60_000)
    first, second = Tokenizer.train(text, 500), Tokenizer.train(text, 500)
    assert first.merges == second.merges and first.merge_counts == second.merge_counts


def reference_apply(chunk: str, ranks: dict[Pair, int]) -> list[str]:
    """The textbook application: merge the best-ranked pair present everywhere, repeat."""
    symbols = list(chunk)
    while present := [pair for pair in pairwise(symbols) if pair in ranks]:
        symbols = merge(symbols, min(present, key=ranks.__getitem__))
    return symbols


@settings(max_examples=300, deadline=None)
@given(small_text, small_text, st.integers(min_value=0, max_value=40))
def test_merging_a_chunk_equals_the_textbook_application(corpus, text, extra):
    tok = Tokenizer.train(corpus, len(SPECIALS) + len(set(corpus)) + extra)
    for chunk in pre_tokenize(text):
        pieces, applied = apply_merges(chunk, tok.ranks)
        assert pieces == merge_pieces(chunk, tok.ranks) == reference_apply(chunk, tok.ranks)
        replayed = list(chunk)
        for pair in applied:
            replayed = merge(replayed, pair)
        assert replayed == pieces


@settings(max_examples=50, deadline=None)
@given(any_text, st.integers(min_value=0, max_value=30))
def test_training_is_deterministic_on_any_text(text, extra):
    size = len(SPECIALS) + len(set("".join(pre_tokenize(text)))) + extra
    assert Tokenizer.train(text, size).merges == Tokenizer.train(text, size).merges


def test_counting_chunks_in_parallel_equals_counting_in_place(corpus_text):
    text = corpus_text("pt", 3_000_000)
    assert count_chunks(text) == Counter(pre_tokenize(text))


def test_progress_reports_every_merge_and_can_stop_training():
    seen = []

    def progress(done, total):
        seen.append((done, total))
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Tokenizer.train("banana bandana cabana", 40, progress=progress)
    assert seen == [(1, 30), (2, 30), (3, 30)]  # 40 - 4 specials - 6 characters


def test_merge_counts_are_the_counts_when_chosen():
    tok = Tokenizer.train("banana banana", vocab_size=12)
    assert tok.merge_counts == [4, 2, 2, 2]


def test_learn_merges_ignores_single_character_chunks():
    assert learn_merges({"a": 10, ",": 5}, 10) == ([], [])


def test_progress_ends_at_one_hundred_percent_when_pairs_run_out():
    seen = []
    Tokenizer.train("ab", 1000, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 994), (1, 1)]


def test_overlapping_pauses_leave_the_collector_as_it_was():
    """A pause that ends while another thread's is open keeps the collector off; the last
    to end turns it back on (the server encodes on its loop and in a worker thread at once)."""
    assert gc.isenabled()
    entered, first_done = threading.Event(), threading.Event()
    seen: list[bool] = []

    def second() -> None:
        with collector_paused():
            entered.set()
            first_done.wait(timeout=30)
            seen.append(gc.isenabled())

    worker = threading.Thread(target=second)
    with collector_paused():
        worker.start()
        assert entered.wait(timeout=30)
    seen.append(gc.isenabled())  # the first pause ended, the second is still open
    first_done.set()
    worker.join(timeout=30)
    assert seen == [False, False] and gc.isenabled()
    with collector_paused(), collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
