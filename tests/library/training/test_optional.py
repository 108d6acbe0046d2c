"""Optional dependencies: a use whose module is not installed stops with an error that
names what installs it, in English as raised and in Portuguese for a Portuguese reader."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from glassllm.shown.problems import describe
from glassllm.training.cluster import dask_client
from glassllm.training.corpus import corpus_files, corpus_parts
from glassllm.training.counts_files import write_counts


def write_zst_counts(folder: Path) -> None:
    write_counts(Counter({"banana": 1}), folder / "c.counts.zst")


def start_dask(folder: Path) -> None:
    with dask_client():
        pass


def read_parquet(folder: Path) -> None:
    (folder / "t.parquet").write_bytes(b"")
    corpus_parts([str(folder / "t.parquet")], 1 << 20, "text")


def read_url(folder: Path) -> None:
    corpus_files(["s3://bucket/corpus"])


@pytest.mark.parametrize(
    ("module", "use", "english", "portuguese"),
    [
        (
            "zstandard",
            write_zst_counts,
            'reading or writing .zst needs zstandard: pip install "glassllm[zstd]"',
            'ler ou gravar .zst requer o zstandard: pip install "glassllm[zstd]"',
        ),
        (
            "distributed",
            start_dask,
            'counting on Dask needs Dask: pip install "glassllm[dask]"',
            'contar no Dask requer o Dask: pip install "glassllm[dask]"',
        ),
        (
            "pyarrow.parquet",
            read_parquet,
            '{folder}/t.parquet: reading Parquet needs pyarrow: pip install "glassllm[parquet]"',
            '{folder}/t.parquet: ler Parquet requer o pyarrow: pip install "glassllm[parquet]"',
        ),
        (
            "fsspec.core",
            read_url,
            "s3://bucket/corpus: reading URLs needs fsspec (pip install fsspec)",
            "s3://bucket/corpus: ler URLs requer o fsspec (pip install fsspec)",
        ),
    ],
    ids=["zstd", "dask", "parquet", "urls"],
)
def test_a_missing_module_names_what_installs_it(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    module: str,
    use: Callable[[Path], None],
    english: str,
    portuguese: str,
):
    monkeypatch.setitem(sys.modules, module, None)  # what ``import`` finds when it is not installed
    with pytest.raises(ValueError) as caught:
        use(tmp_path)
    assert str(caught.value) == english.format(folder=tmp_path)
    assert describe(caught.value, "pt") == portuguese.format(folder=tmp_path)
    assert list(tmp_path.glob("*.tmp")) == [] and list(tmp_path.glob(".*")) == []  # nothing half written
