"""The token map's pure parts (``token_map.py``): the paths the page shows, the rows, and
the job the child reads; the command itself is tested over stdio (``lsp/test_token_map.py``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from glassllm.budgets import Budget
from glassllm_server.page_files import tokens_page_name
from glassllm_server.token_map import counting_job, file_rows, shown_path


def test_a_path_is_relative_to_its_folder_under_the_folder_s_name_when_there_are_several(tmp_path):
    one, two = tmp_path / "site", tmp_path / "prompts"
    assert shown_path(str(one / "docs" / "a.md"), [one]) == os.path.join("docs", "a.md")
    assert shown_path(str(two / "b.txt"), [one, two]) == os.path.join("prompts", "b.txt")
    # A name that is not UTF-8 shows its bytes escaped, as glassllm tokens shows it.
    assert shown_path(str(one / os.fsdecode(b"caf\xe9.txt")), [one]) == "caf\\xe9.txt"


def test_the_rows_are_the_largest_first_each_with_its_budget_and_column(tmp_path):
    budget = Budget("docs/**", 10, "en")
    counts = {str(tmp_path / "small.md"): [3, 4], str(tmp_path / "docs" / "big.md"): [30, 12]}
    rows = file_rows(counts, {str(tmp_path / "docs" / "big.md"): (budget, 1)}, [tmp_path])
    assert [(row.path, row.counts, row.budget, row.column) for row in rows] == [
        (os.path.join("docs", "big.md"), [30, 12], budget, 1),
        ("small.md", [3, 4], None, 0),
    ]
    assert rows[0].over == 2 and rows[0].failed  # 12 tokens of en against 10


def test_the_job_carries_names_that_are_not_utf8_in_ascii_json(tmp_path):
    name = str(tmp_path / os.fsdecode(b"bin\xff.txt"))
    job = counting_job([name], [("pt", False)], "pt")
    assert job.isascii()
    assert json.loads(job) == {"files": [name], "tokenizers": [["pt", False]], "locale": "pt", "limit": 10 << 20}


def test_the_page_of_a_workspace_keeps_its_name_from_one_map_to_the_next():
    folders = [Path("/home/ana/site"), Path("/home/ana/prompts")]
    assert tokens_page_name(folders) == tokens_page_name(list(folders))
    assert tokens_page_name(folders).startswith("tokens-site-") and tokens_page_name(folders).endswith(".html")
    assert tokens_page_name(folders) != tokens_page_name(folders[:1])
