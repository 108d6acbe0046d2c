"""Loading a tokenizer file is bounded: no file hangs the reader, none exhausts its memory.

Deep nesting, FIFOs with and without a writer, devices, endless pipes, oversized files,
numbers Python will not convert, and lone surrogates: each gets the documented exception
with a message that names the file, and each returns at once (a thread joined with a
generous timeout tells a hang from an answer).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from glassllm import Tokenizer, load_tokenizer, packaged_path
from glassllm.formats import files
from glassllm.formats.hf_bpe import HFByteLevelBPE
from glassllm.shown.problems import describe
from tests.library.formats.fixtures import large_bpe_file

HANG = 60  # seconds: far more than any case takes, so only a hang reaches it


def answer(load: Callable[[], object]) -> object:
    """What ``load()`` returns or raises, from a thread: a hang fails the test instead of
    blocking the suite."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(load())
        except Exception as error:  # the outcome under test
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(HANG)
    assert not thread.is_alive(), "the load did not return"
    return outcome[0]


def failure(load: Callable[[], object]) -> Exception:
    outcome = answer(load)
    assert isinstance(outcome, Exception), f"expected an error, got {outcome!r}"
    return outcome


@pytest.fixture
def pipe() -> Iterator[tuple[str, int]]:
    """An anonymous pipe as a path (``/dev/fd/N``, as ``<(…)`` gives one) and its write end."""
    read_end, write_end = os.pipe()
    try:
        yield f"/dev/fd/{read_end}", write_end
    finally:
        os.close(read_end)
        with contextlib.suppress(OSError):  # the test may have closed it
            os.close(write_end)


def test_deep_nesting_is_invalid_json_naming_the_file(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000, encoding="utf-8")
    error = failure(lambda: Tokenizer.load(path))
    assert isinstance(error, json.JSONDecodeError)
    assert str(error) == f"{path}: not valid JSON (nested too deeply)"


def test_deep_nesting_in_a_worker_thread_is_the_same_error(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"version": 1, "alphabet": ' + "[" * 50_000, encoding="utf-8")
    error = failure(lambda: asyncio.run(asyncio.to_thread(Tokenizer.load, path)))
    assert isinstance(error, json.JSONDecodeError) and "nested too deeply" in str(error)


def test_a_fifo_no_one_writes_to_is_refused_at_once(tmp_path):
    fifo = tmp_path / "tok.json"
    os.mkfifo(fifo)
    error = failure(lambda: Tokenizer.load(fifo))
    assert isinstance(error, ValueError)
    assert str(error) == f"{fifo}: not a regular file (a pipe with nothing written to it)"


def test_a_pipe_is_read_to_its_end_as_process_substitution_gives_it(pipe):
    path, write_end = pipe
    contents = packaged_path("en").read_bytes()

    def write_slowly() -> None:
        for start in range(0, len(contents), 4096):
            os.write(write_end, contents[start : start + 4096])
            time.sleep(0.001)
        os.close(write_end)

    threading.Thread(target=write_slowly, daemon=True).start()
    loaded = answer(lambda: Tokenizer.load(path))
    assert isinstance(loaded, Tokenizer)
    assert loaded.vocab == Tokenizer.load(packaged_path("en")).vocab


def test_a_pipe_that_stays_silent_is_given_up(pipe, monkeypatch):
    path, write_end = pipe
    monkeypatch.setattr(files, "PIPE_IDLE_SECONDS", 0.2)
    os.write(write_end, b'{"version": 1,')  # then nothing, and the writer stays
    error = failure(lambda: Tokenizer.load(path))
    assert isinstance(error, ValueError)
    assert str(error) == f"{path}: a pipe that sent nothing for 0.2 s"


def test_an_endless_pipe_stops_at_the_size_bound(pipe):
    path, write_end = pipe

    def write_forever() -> None:
        block = b"0" * 65536
        try:
            while True:
                os.write(write_end, block)
        except OSError:
            pass  # the reader gave up and closed its end

    writer = threading.Thread(target=write_forever, daemon=True)
    writer.start()
    error = failure(lambda: Tokenizer.load(path))
    assert isinstance(error, ValueError)
    assert str(error) == f"{path}: larger than the 32 MB a tokenizer file may have"


def test_a_device_is_not_read_at_all():
    error = failure(lambda: Tokenizer.load("/dev/zero"))
    assert isinstance(error, ValueError)
    assert str(error) == "/dev/zero: not a regular file"


def test_a_folder_is_an_os_error_naming_it(tmp_path):
    error = failure(lambda: Tokenizer.load(tmp_path))
    assert isinstance(error, IsADirectoryError) and str(tmp_path) in str(error)


def test_a_file_over_the_size_bound_is_refused_unread(tmp_path):
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as handle:
        handle.truncate(200 << 20)  # sparse: 200 MB on paper, nothing on disk
    error = failure(lambda: Tokenizer.load(huge))
    assert isinstance(error, ValueError)
    assert str(error) == f"{huge}: larger than the 32 MB a tokenizer file may have"


def test_more_entries_than_the_bound_are_refused(monkeypatch):
    monkeypatch.setattr(files, "MAX_ENTRIES", 100)
    path = packaged_path("pt")
    error = failure(lambda: Tokenizer.load(path))
    assert isinstance(error, ValueError)
    assert str(error) == f"{path}: 1,024 vocabulary entries, more than the 100 a tokenizer may have"


def test_a_number_of_5000_digits_is_invalid_json_naming_the_file(tmp_path):
    data = json.loads(packaged_path("pt").read_text(encoding="utf-8"))
    text = json.dumps(data).replace(f"[{data['merge_counts'][0]},", "[" + "9" * 5000 + ",", 1)
    path = tmp_path / "digits.json"
    path.write_text(text, encoding="utf-8")
    error = failure(lambda: Tokenizer.load(path))
    assert isinstance(error, json.JSONDecodeError)
    assert str(error) == f"{path}: not valid JSON (a number of more than 4,300 digits)"


def test_a_lone_surrogate_in_the_alphabet_is_refused(tmp_path):
    path = tmp_path / "surrogate.json"
    path.write_text('{"version": 1, "alphabet": ["a", "\\ud800"], "merges": []}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"surrogate\.json: alphabet\[1\] is a lone surrogate \(U\+D800\)"):
        Tokenizer.load(path)


def test_training_refuses_a_lone_surrogate_saying_where():
    with pytest.raises(ValueError, match=r"lone surrogate \(U\+D800\) at offset 2"):
        Tokenizer.train("ab\ud800cd abcd", 20)
    with pytest.raises(ValueError, match=r"chunk 'a\\udfff' holds a lone surrogate \(U\+DFFF\)"):
        Tokenizer.train_from_counts({"a\udfff": 3}, 20)


def test_saving_what_utf8_cannot_hold_names_the_file_and_writes_nothing(tmp_path):
    path = tmp_path / "tok.json"
    with pytest.raises(ValueError, match=r"tok\.json: cannot write tokenizer file: surrogates not allowed \(U\+D800\)"):
        Tokenizer(["a", "\ud800"], []).save(path)
    assert list(tmp_path.iterdir()) == []


def test_encoding_takes_a_lone_surrogate_as_an_unknown_character():
    # Encoding accepts every str (the seeds: a piece absent from the vocabulary is unk).
    tok = Tokenizer.train("abc abc", 20)
    assert tok.encode("a\ud800") == [tok.encode("a")[0], tok.unk_id]


def test_loading_in_a_thread_leaves_the_event_loop_free(pipe, monkeypatch):
    """What the language server does: load off the event loop while it keeps answering.
    Waiting on a silent pipe releases the interpreter, so the loop keeps running."""
    path, write_end = pipe
    monkeypatch.setattr(files, "PIPE_IDLE_SECONDS", 1.0)
    os.write(write_end, b"{")

    async def load_while_ticking() -> tuple[int, BaseException]:
        ticks = 0
        loading = asyncio.ensure_future(asyncio.to_thread(load_tokenizer, path))
        while not loading.done():
            ticks += 1
            await asyncio.sleep(0.01)
        error = loading.exception()
        assert error is not None
        return ticks, error

    outcome = answer(lambda: asyncio.run(load_while_ticking()))
    assert isinstance(outcome, tuple), outcome
    ticks, error = outcome
    assert isinstance(error, ValueError) and "sent nothing" in str(error)
    assert ticks > 2  # the loop went on turning while the thread waited


def test_reading_a_named_path_keeps_the_documented_errors(tmp_path):
    missing = tmp_path / "nowhere.json"
    with pytest.raises(FileNotFoundError, match=r"nowhere\.json"):
        Tokenizer.load(missing)
    unreadable = tmp_path / "bad.json"
    unreadable.write_bytes(b'{"version": 1, "alphabet": ["\xe1"]}')
    with pytest.raises(ValueError, match=r"bad\.json: not UTF-8 text"):
        Tokenizer.load(unreadable)


# Real models' files: the larger bound of files.MAX_MODEL_BYTES and MAX_MODEL_VALUES.


def test_a_tokenizer_json_past_the_old_bound_loads_and_encodes_as_hf_reads_it(tmp_path):
    """The largest vocabularies' files are over 32 MB (the old bound): one of 150,000
    entries and 36 MB, written by HF, loads and gives HF's IDs (the 2,000,000-entry,
    128 MB one is tests/benchmarks/bench_kinds.py's: generating it takes a minute)."""
    tokenizers = pytest.importorskip("tokenizers")
    path = large_bpe_file(tmp_path / "tokenizer.json", 150_000, longest=100)
    assert path.stat().st_size > 32 << 20
    loaded = answer(lambda: load_tokenizer(path))
    assert isinstance(loaded, HFByteLevelBPE) and loaded.vocab_size == 150_000
    hf = tokenizers.Tokenizer.from_file(str(path))
    draw = random.Random(29)
    text = "".join(draw.choice("abcdefghij klmnopqrstuvwxyz\n") for _ in range(20_000)) + " Era uma vez, ç ✓"
    assert loaded.encode(text) == hf.encode(text, add_special_tokens=False).ids


def test_a_model_file_over_its_size_bound_is_refused_unread(tmp_path):
    huge = tmp_path / "tokenizer.json"
    with open(huge, "wb") as handle:
        handle.truncate(300 << 20)  # sparse
    error = failure(lambda: load_tokenizer(huge))
    assert isinstance(error, ValueError)
    assert str(error) == f"{huge}: larger than the 256 MB a tokenizer file may have"


def test_an_endless_pipe_stops_at_the_model_size_bound(pipe):
    path, write_end = pipe

    def write_forever() -> None:
        block = b"[" + b"0," * (1 << 19)
        try:
            while True:
                os.write(write_end, block)
        except OSError:
            pass  # the reader gave up and closed its end

    threading.Thread(target=write_forever, daemon=True).start()
    error = failure(lambda: load_tokenizer(path))
    assert isinstance(error, ValueError)
    assert str(error) == f"{path}: larger than the 256 MB a tokenizer file may have"


def test_json_of_more_values_than_the_bound_is_refused_before_parsing(tmp_path):
    # 36 MB and 18 million numbers: within the size bound, past the values' one.
    path = tmp_path / "tokenizer.json"
    path.write_bytes(b'{"model": {"vocab": [' + b"0," * 18_000_000 + b"0]}}")
    error = failure(lambda: load_tokenizer(path))
    assert isinstance(error, ValueError)
    assert str(error) == (
        f"{path}: too many JSON values for a tokenizer file"
        " (18,000,005 commas, colons and brackets, at most 16,777,216)"
    )
    assert describe(error, "pt") == (
        f"{path}: valores JSON demais para um arquivo de tokenizador (18.000.005 vírgulas, dois-pontos e colchetes,"
        " no máximo 16.777.216)"
    )


def test_glassllm_s_own_format_keeps_its_bound_through_every_loader(tmp_path):
    path = tmp_path / "tok.json"
    path.write_bytes(b'{"version": 1, "alphabet": [], "merges": []' + b" " * (33 << 20) + b"}")
    error = failure(lambda: load_tokenizer(path))
    assert isinstance(error, ValueError)
    assert str(error) == f"{path}: larger than the 32 MB a glassllm tokenizer file may have"
    assert describe(error, "pt") == f"{path}: maior que os 32 MB que um arquivo de tokenizador do glassllm pode ter"
