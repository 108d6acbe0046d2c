"""The corpora in ``corpora/`` are the files their page describes: the sha256, bytes and
lines of each, as corpora/SOURCES.md's table gives them, and its format (UTF-8 without a
BOM, NFC, ``\\n`` line ends, a final newline). The packaged tokenizers are trained from
them (tests/library/test_packaged.py), so a changed byte must not go unnoticed."""

from __future__ import annotations

import hashlib
import re
import unicodedata

import pytest

from tests.conftest import CORPORA

ROW = re.compile(
    r"^\| `(?P<file>[a-z]{2}/\w+\.txt)` +\| +(?P<bytes>[\d,]+) \| +(?P<lines>[\d,]+) \|.*\| `(?P<sha>[0-9a-f]{64})` \|$"
)


def _table() -> dict[str, dict[str, str]]:
    rows = (ROW.match(line) for line in (CORPORA / "SOURCES.md").read_text(encoding="utf-8").splitlines())
    return {row["file"]: row.groupdict() for row in rows if row}


def test_the_page_lists_the_four_files_and_nothing_else():
    listed = set(_table())
    present = {path.relative_to(CORPORA).as_posix() for path in CORPORA.glob("*/*.txt")}
    assert listed == present == {"pt/train.txt", "pt/heldout.txt", "en/train.txt", "en/heldout.txt"}


@pytest.mark.parametrize("name", sorted(_table()))
def test_each_file_is_the_one_the_page_describes(name: str):
    row = _table()[name]
    data = (CORPORA / name).read_bytes()
    assert hashlib.sha256(data).hexdigest() == row["sha"]
    assert len(data) == int(row["bytes"].replace(",", ""))
    assert data.count(b"\n") == int(row["lines"].replace(",", ""))
    text = data.decode("utf-8")
    assert not text.startswith("\ufeff") and "\r" not in text and text.endswith("\n")
    assert unicodedata.is_normalized("NFC", text)
