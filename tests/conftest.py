"""Shared fixtures (the public-domain corpora of ``corpora/``, see its SOURCES.md), and the
one rule that makes CI whole: under ``CI=true`` a skip is a failure, unless the test is
marked ``opt_in`` (documented in tests/README.md)."""

import os
from collections.abc import Callable, Generator
from pathlib import Path

import pytest

CORPORA = Path(__file__).resolve().parents[1] / "corpora"
UNDER_CI = os.environ.get("CI") == "true"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "opt_in: a test that runs only when asked for; it may skip under CI=true")


def _failed_skip(report: pytest.CollectReport | pytest.TestReport, where: str) -> None:
    """Turn a skip into a failure that says why: a missing tool or package must not pass."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    report.outcome = "failed"
    report.longrepr = f"{where} skipped under CI=true, which runs everything but opt-ins: {reason}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if UNDER_CI and report.skipped and not hasattr(report, "wasxfail") and item.get_closest_marker("opt_in") is None:
        _failed_skip(report, item.nodeid)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    # A module-level importorskip skips the whole module at collection.
    report = yield
    if UNDER_CI and report.skipped:
        _failed_skip(report, collector.nodeid)
    return report


@pytest.fixture(scope="session")
def corpus_text() -> Callable[[str, int], str]:
    """``corpus_text(language, characters)``: the start of a training corpus, cut at a line end."""

    def read(language: str, characters: int) -> str:
        text = (CORPORA / language / "train.txt").read_text(encoding="utf-8")
        if len(text) <= characters:
            return text
        return text[: text.index("\n", characters) + 1]

    return read


@pytest.fixture(scope="session")
def mixed_corpus(tmp_path_factory, corpus_text):
    """A corpus in every format glassllm reads, written once: plain and compressed text,
    JSON Lines (plain and compressed) and Parquet of several row groups, whose records
    have the text in ``"text"``. ``texts`` lists what each file or record holds, in order."""
    import bz2
    import gzip
    import json
    import lzma
    from types import SimpleNamespace

    import pyarrow as pa
    import pyarrow.parquet as pq
    import zstandard

    folder = tmp_path_factory.mktemp("mixed")
    en, pt = corpus_text("en", 300_000), corpus_text("pt", 300_000)
    lines = (en + pt).splitlines(keepends=True)
    records = ["".join(lines[index : index + 3]) for index in range(0, 240, 3)]
    # Records that test the seams between them: empty, a line break alone, a leading
    # combining mark (which must not compose with the record before), a carriage return.
    records += ["", "\n", "\u0301s banana", "banana\r", "sem quebra no fim"]
    texts: list[str] = []

    def text_file(name: str, text: str, opener) -> None:
        with opener(folder / name, "wb") as out:
            out.write(text.encode("utf-8"))
        texts.append(text)

    text_file("a-en.txt", en, open)
    text_file("b-pt.txt.zst", pt[:150_000], lambda path, mode: zstandard.open(path, mode))
    text_file("c-pt.txt.gz", pt[150_000:], gzip.open)
    text_file("d.txt.bz2", "Olá, mundo.\nsem quebra", bz2.open)
    text_file("e.txt.xz", "xz: ação\r\n", lzma.open)
    half = len(records) // 2
    jsonl = "".join(json.dumps({"id": index, "text": text}) + "\n" for index, text in enumerate(records[:half]))
    (folder / "f.jsonl").write_text(jsonl, encoding="utf-8")
    with zstandard.open(folder / "g.jsonl.zst", "wb") as out:
        out.write("".join(json.dumps({"text": text}, ensure_ascii=False) + "\n" for text in records[half:]).encode())
    texts += records
    table = pa.table({"id": list(range(len(records))), "text": records})
    pq.write_table(table, folder / "h.parquet", row_group_size=20)
    texts += records
    files = sorted(str(path) for path in folder.iterdir())
    return SimpleNamespace(folder=folder, files=files, texts=texts, field="text")
