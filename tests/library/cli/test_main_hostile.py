"""The glassllm command against hostile and clumsy input, run as a user runs it.

Every case ends with exit status 1 and one line on standard error that names the file
or the stream, without a traceback; none hangs (a generous timeout tells a hang from an
answer) and the ones that could grow are measured: the child's peak memory comes from
``os.wait4``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from glassllm import packaged, packaged_path
from glassllm.formats.files import MAX_MODEL_BYTES

HANG = 120  # seconds: far more than any case takes on a busy machine, so only a hang reaches it
CLI = [sys.executable, "-m", "glassllm.cli"]
MODEL_MB = MAX_MODEL_BYTES >> 20  # the bound on a real model's file, in the messages
# Linux counts the memory a process had when it forked into its child's peak: a command
# forked from this (large, long-running) test process would report the test's memory as
# its own. So a small Python starts the command, waits for it with ``os.wait4`` and writes
# its peak to the file named by its first argument; it ends as the command did.
_MEASURE = """
import os, signal, subprocess, sys
child = subprocess.Popen(sys.argv[2:], close_fds=False)
_, status, usage = os.wait4(child.pid, 0)
with open(sys.argv[1], "w") as peak:
    peak.write(str(usage.ru_maxrss * 1024))
code = os.waitstatus_to_exitcode(status)
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


@dataclass
class Run:
    status: int
    stdout: str
    stderr: str
    peak_bytes: int  # the child's maximum resident set size


def glassllm(
    *args: str | bytes,
    stdin: bytes = b"",
    cwd: Path | None = None,
    pass_fds: tuple[int, ...] = (),
    locale: str = "C.UTF-8",
) -> Run:
    """Run the command and learn its peak memory (see ``_MEASURE``)."""
    with (
        tempfile.TemporaryFile() as given,
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.TemporaryDirectory() as scratch,
    ):
        given.write(stdin)
        given.seek(0)
        peak = Path(scratch) / "peak"
        process = subprocess.Popen(
            [sys.executable, "-c", _MEASURE, str(peak), *CLI, *args],
            stdin=given,
            stdout=out,
            stderr=err,
            cwd=cwd,
            pass_fds=pass_fds,
            env={**os.environ, "LC_ALL": locale},
            start_new_session=True,  # a hang is killed with the command it started
        )
        timer = threading.Timer(HANG, lambda: os.killpg(process.pid, signal.SIGKILL))
        timer.start()
        try:
            process.wait()
        finally:
            timer.cancel()
        out.seek(0)
        err.seek(0)
        return Run(
            process.returncode, out.read().decode(), err.read().decode(), int(peak.read_text()) if peak.exists() else 0
        )


def shell(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run a bash script (for ``<(…)`` and pipelines); ``$GLASSLLM`` is the command."""
    environment = {**os.environ, "GLASSLLM": " ".join(CLI)}
    return subprocess.run(
        ["bash", "-c", script, "bash", *args], capture_output=True, text=True, timeout=HANG, env=environment
    )


def one_clear_line(run: Run, message: str) -> None:
    assert run.status == 1, run
    assert run.stderr.endswith(message + "\n"), run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.splitlines()) == 1, run.stderr


@pytest.fixture
def deep(tmp_path) -> Path:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "command",
    [
        ["encode", "Era uma vez", "--tokenizer"],
        ["decode", "5", "--tokenizer"],
        ["explain", "vez", "--tokenizer"],
        ["inspect", "vez", "--tokenizer"],
        ["compare", "vez", "--with"],
        ["export", "-o", "out.json"],
    ],
)
def test_every_command_names_a_file_nested_too_deeply(tmp_path, deep, command):
    run = glassllm(*command, "deep.json", cwd=tmp_path)
    one_clear_line(run, "deep.json: not valid JSON (nested too deeply)")
    assert not (tmp_path / "out.json").exists()


def test_a_fifo_with_no_writer_is_not_waited_for(tmp_path):
    os.mkfifo(tmp_path / "tok.fifo")
    run = glassllm("encode", "--tokenizer", "tok.fifo", "Era uma vez", cwd=tmp_path)
    one_clear_line(run, "glassllm encode: tok.fifo: not a regular file (a pipe with nothing written to it)")


def test_process_substitution_keeps_working():
    result = shell('$GLASSLLM encode --tokenizer <(cat "$1") "Once upon a time"', str(packaged_path("en")))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(i) for i in packaged("en").encode("Once upon a time")]


def test_dev_zero_is_not_read():
    run = glassllm("encode", "--tokenizer", "/dev/zero", "x")
    one_clear_line(run, "glassllm encode: /dev/zero: not a regular file")
    assert run.peak_bytes < 200 << 20


def test_an_endless_pipe_stops_at_the_size_bound_in_bounded_memory():
    read_end, write_end = os.pipe()

    def write_forever() -> None:
        block = bytes(65536)
        try:
            while True:
                os.write(write_end, block)
        except OSError:
            pass  # the command gave up and its end closed
        finally:
            os.close(write_end)

    writer = threading.Thread(target=write_forever, daemon=True)
    writer.start()
    try:
        run = glassllm("encode", "--tokenizer", f"/dev/fd/{read_end}", "x", pass_fds=(read_end,))
    finally:
        os.close(read_end)
    writer.join(HANG)
    one_clear_line(run, f"glassllm encode: /dev/fd/{read_end}: larger than the {MODEL_MB} MB a tokenizer file may have")
    assert run.peak_bytes < 1 << 30, f"{run.peak_bytes / 2**20:.0f} MB"


def test_a_file_over_the_bound_is_refused_unread(tmp_path):
    with open(tmp_path / "huge.json", "wb") as handle:
        handle.truncate(MAX_MODEL_BYTES + (1 << 20))  # sparse: no disk taken
    run = glassllm("encode", "--tokenizer", "huge.json", "x", cwd=tmp_path)
    one_clear_line(run, f"glassllm encode: huge.json: larger than the {MODEL_MB} MB a tokenizer file may have")
    assert run.peak_bytes < 200 << 20


def test_a_number_of_5000_digits_names_the_file(tmp_path):
    data = json.loads(packaged_path("pt").read_text(encoding="utf-8"))
    text = json.dumps(data).replace(f"[{data['merge_counts'][0]},", "[" + "9" * 5000 + ",", 1)
    (tmp_path / "digits.json").write_text(text, encoding="utf-8")
    run = glassllm("encode", "--tokenizer", "digits.json", "x", cwd=tmp_path)
    one_clear_line(run, "glassllm encode: digits.json: not valid JSON (a number of more than 4,300 digits)")


def test_inspect_names_a_file_that_is_not_utf8(tmp_path):
    (tmp_path / "latin1.txt").write_bytes("olá\n".encode("latin-1"))
    run = glassllm("inspect", "--file", "latin1.txt", cwd=tmp_path)
    one_clear_line(run, "glassllm inspect: latin1.txt: not UTF-8 text (byte 0xe1 at offset 2)")


@pytest.mark.parametrize("command", ["encode", "explain", "inspect", "compare", "decode"])
def test_standard_input_that_is_not_utf8_is_refused(command):
    run = glassllm(command, stdin=b"ab\xff\xfecd\n")
    one_clear_line(run, f"glassllm {command}: standard input is not UTF-8 text (byte 0xff at offset 2)")


def test_an_argument_that_is_not_utf8_is_refused():
    run = glassllm("encode", b"ab\xffcd")
    one_clear_line(run, "glassllm encode: the text argument is not UTF-8 text (byte 0xff at offset 2)")


def test_negative_ids_are_out_of_range():
    run = glassllm("decode", "5", "-1")
    one_clear_line(run, "glassllm decode: IDs out of range for 1024 entries (0 to 1023): [-1]")
    assert run.stdout == ""


def test_training_on_an_empty_corpus_leaves_the_output_alone(tmp_path):
    packaged("en").save(tmp_path / "good.json")
    before = (tmp_path / "good.json").read_bytes()
    (tmp_path / "empty.txt").write_bytes(b"")
    run = glassllm("train", "--quiet", "empty.txt", "-o", "good.json", cwd=tmp_path)
    one_clear_line(run, "glassllm train: empty.txt: no text to learn from; good.json is left as it was")
    assert (tmp_path / "good.json").read_bytes() == before


def counts(text: str) -> tuple[int, int, int]:
    tok = packaged("pt")
    spans = tok.encode_spans(text)
    return len(spans), spans[-1].chunk + 1, sum(span.id == tok.unk_id for span in spans)


def test_inspect_counts_a_long_line_without_memory_per_token(tmp_path):
    """20 MB on one line: 5.8 M tokens. Keeping a record per token took 1.1 GB; counting
    segment by segment keeps the peak near the text's own size."""
    unit, repeats = "Era uma vez uma menina 🧪 bonita, ", 600_000
    (tmp_path / "long.txt").write_text(unit * repeats, encoding="utf-8")
    # Tokens, chunks and unknowns grow by the same amount per repeat past the first.
    one, two = counts(unit), counts(unit * 2)
    expected = [a + (b - a) * (repeats - 1) for a, b in zip(one, two, strict=True)]
    run = glassllm("inspect", "--limit", "20", "--file", "long.txt", cwd=tmp_path)
    assert run.status == 0, run.stderr
    tokens, chunks, unknown = expected
    assert f"… the first 20 of {tokens:,} tokens" in run.stdout
    assert f"{tokens:,} tokens · {chunks:,} chunks · {len(unit) * repeats:,} characters" in run.stdout
    assert f" · {unknown} unknown · " in run.stdout
    table = [line for line in run.stdout.splitlines() if line[:5].strip().isdigit()]
    assert len(table) == 20 and table[-1].split()[0] == "19"
    assert run.peak_bytes < 300 << 20, f"{run.peak_bytes / 2**20:.0f} MB"


def test_inspect_shows_the_same_tokens_segment_by_segment():
    # Long enough for several segments, with spaces, line breaks and NFC changes.
    text = ("Era uma vez, disse-lhe a avó: «Café?»\r\n  e\u0301 tudo 🧪.\n" * 4000).rstrip()
    tok = packaged("pt")
    spans = tok.encode_spans(text)
    run = glassllm("inspect", "--limit", "0", stdin=text.encode())
    assert run.status == 0, run.stderr
    rows = [line.split()[:3] for line in run.stdout.splitlines() if line[:5].strip().isdigit()]
    assert rows == [[str(index), str(span.id), str(span.chunk)] for index, span in enumerate(spans)]
    assert f"{len(spans):,} tokens · {spans[-1].chunk + 1:,} chunks" in run.stdout


def test_a_reader_that_stops_early_ends_the_command_quietly():
    result = shell('set -o pipefail; $GLASSLLM inspect --limit 0 "$1" | head -1', "Era uma vez " * 5000)
    assert result.stdout.startswith("[E][ra][▁uma]")
    assert result.stderr == ""
    assert result.returncode == 141  # as a Unix tool that SIGPIPE ends


@pytest.mark.parametrize("command", [["export", "pt"], ["train", "corpus.txt"]])
def test_an_output_nested_too_deeply_is_not_replaced(tmp_path, deep, command):
    (tmp_path / "corpus.txt").write_text("banana banana\n", encoding="utf-8")
    before = deep.read_bytes()
    run = glassllm(*command, "-o", "deep.json", cwd=tmp_path)
    assert run.status == 1 and "Traceback" not in run.stderr, run.stderr
    assert "deep.json exists and is not a" in run.stderr and len(run.stderr.splitlines()) == 1
    assert deep.read_bytes() == before


def test_the_new_refusals_read_in_portuguese(tmp_path, deep):
    pt = "pt_BR.UTF-8"
    run = glassllm("encode", "--tokenizer", "deep.json", "x", cwd=tmp_path, locale=pt)
    one_clear_line(run, "glassllm encode: deep.json: não é JSON válido (aninhado fundo demais)")
    run = glassllm("encode", stdin=b"ab\xff", locale=pt)
    one_clear_line(run, "glassllm encode: a entrada padrão não é texto UTF-8 (byte 0xff na posição 2)")
    run = glassllm("decode", "-1", locale=pt)
    one_clear_line(run, "glassllm decode: IDs fora do intervalo para 1024 entradas (0 a 1023): [-1]")
    run = glassllm("encode", "--tokenizer", "/dev/zero", "x", locale=pt)
    one_clear_line(run, "glassllm encode: /dev/zero: não é um arquivo comum")


# Where the output goes is checked before the corpus is read: the stage line that counting
# writes when it ends ("counted … MB") must not come before the one line of the refusal.
@pytest.mark.parametrize("command", ["train", "count"])
def test_an_output_in_a_missing_folder_is_refused_before_counting(tmp_path, command):
    (tmp_path / "corpus.txt").write_text("banana banana\n", encoding="utf-8")
    run = glassllm(command, "corpus.txt", "-o", "no_such_dir/deeper/out.json", cwd=tmp_path)
    one_clear_line(
        run, f"glassllm {command}: cannot write no_such_dir/deeper/out.json: there is no folder no_such_dir/deeper"
    )
    assert not (tmp_path / "no_such_dir").exists()


@pytest.mark.parametrize("command", ["train", "count"])
def test_an_output_that_is_a_folder_is_refused_before_counting_even_with_force(tmp_path, command):
    (tmp_path / "corpus.txt").write_text("banana banana\n", encoding="utf-8")
    (tmp_path / "out").mkdir()
    run = glassllm(command, "corpus.txt", "-o", "out", "--force", cwd=tmp_path)
    one_clear_line(run, f"glassllm {command}: cannot write out: it is a folder")
    assert list((tmp_path / "out").iterdir()) == []


def test_an_output_under_a_file_is_refused_before_counting(tmp_path):
    (tmp_path / "corpus.txt").write_text("banana banana\n", encoding="utf-8")
    run = glassllm("train", "corpus.txt", "-o", "corpus.txt/tok.json", cwd=tmp_path)
    one_clear_line(run, "glassllm train: cannot write corpus.txt/tok.json: there is no folder corpus.txt")


def test_the_output_refusals_read_in_portuguese(tmp_path):
    pt = "pt_BR.UTF-8"
    (tmp_path / "corpus.txt").write_text("banana banana\n", encoding="utf-8")
    (tmp_path / "out").mkdir()
    run = glassllm("train", "corpus.txt", "-o", "nada/tok.json", cwd=tmp_path, locale=pt)
    one_clear_line(run, "glassllm train: não é possível gravar nada/tok.json: não existe a pasta nada")
    run = glassllm("count", "corpus.txt", "-o", "out", "--force", cwd=tmp_path, locale=pt)
    one_clear_line(run, "glassllm count: não é possível gravar out: é uma pasta")
