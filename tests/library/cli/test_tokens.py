"""``glassllm tokens``, run as a user runs it: counts, budgets, exit statuses, JSON, and
its page (``glassllm/tokens_page.py``)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from glassllm import packaged
from tests.terminal import run_on_terminal

PT, EN = packaged("pt"), packaged("en")
LONG = "Era uma vez uma menina que morava numa casa amarela perto do rio.\n" * 20
SHORT = "Olá, mundo!\n"


def tokens(cwd: Path, *args: str, lang: str = "C.UTF-8") -> subprocess.CompletedProcess[str]:
    environment = {name: value for name, value in os.environ.items() if name not in ("LC_ALL", "LC_MESSAGES")}
    environment |= {"LANG": lang, "XDG_CACHE_HOME": str(cwd.parent / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "glassllm.cli", "tokens", *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "long.md").write_text(LONG, encoding="utf-8")
    (folder / "short.txt").write_text(SHORT, encoding="utf-8")
    return folder


def test_each_file_and_the_total_sorted_with_shares(project):
    result = tokens(project, "docs", "short.txt")
    assert result.returncode == 0, result.stderr
    long, short = len(PT.encode(LONG)), len(PT.encode(SHORT))
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["pt", "share", "budget", "file"]
    assert lines[1].split() == [f"{long:,}", f"{100 * long / (long + short):.1f}%", "docs/long.md"]
    assert lines[2].split() == [f"{short:,}", f"{100 * short / (long + short):.1f}%", "short.txt"]
    assert lines[3].split() == [f"{long + short:,}", "100.0%", "total:", "2", "files"]
    assert result.stderr == ""


def test_max_tokens_fails_naming_each_file_over_and_by_how_much(project):
    long, short = len(PT.encode(LONG)), len(PT.encode(SHORT))
    limit = short + 1
    result = tokens(project, ".", "--max-tokens", str(limit))
    assert result.returncode == 1
    assert f"{math.floor(1000 * long / limit) / 10:.1f}% of {limit:,}  over" in result.stdout
    assert result.stderr.splitlines() == [
        f"docs/long.md: {long:,} tokens, {long - limit:,} over the budget of {limit:,} for ** (pt)",
        "glassllm tokens: files over their budget: 1",
    ]
    at = tokens(project, ".", "--max-tokens", str(long))
    assert at.returncode == 0 and f"100.0% of {long:,}  " in at.stdout  # exactly at the budget passes
    # The use is rounded down: a file under its budget never shows 100.0%.
    under = tokens(project, "docs", "--max-tokens", str(long + 1))
    assert f"{math.floor(1000 * long / (long + 1)) / 10:.1f}% of {long + 1:,}" in under.stdout


def test_the_repositorys_budgets_apply_with_their_severity_and_tokenizer(project):
    (project / "pyproject.toml").write_text(
        "[tool.glassllm]\nmaxTokens = 1\n\n"
        '[[tool.glassllm.budgets]]\nfiles = "docs/"\nmaxTokens = 10\nseverity = "warning"\ntokenizer = "en"\n'
        '[[tool.glassllm.budgets]]\nfiles = "*.toml"\nmaxTokens = 100000\n',
        encoding="utf-8",
    )
    result = tokens(project, "docs")
    assert result.returncode == 0, result.stderr  # a warning only
    assert result.stdout.splitlines()[0].split() == ["pt", "en", "share", "budget", "file"]  # the budget's tokenizer
    long_en = len(EN.encode(LONG))
    assert result.stderr == (
        f"warning: docs/long.md: {long_en:,} tokens, {long_en - 10:,} over the budget of 10 for docs/ (en)\n"
    )
    failed = tokens(project, "short.txt", "pyproject.toml")
    assert failed.returncode == 1  # short.txt has only maxTokens = 1; pyproject.toml is within its budget
    assert failed.stderr.splitlines()[0].startswith("short.txt: ")
    assert len(failed.stderr.splitlines()) == 2


def test_json_for_tools(project):
    result = tokens(project, "docs", "short.txt", "--with", "en", "--max-tokens", "50", "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    long = {"pt": len(PT.encode(LONG)), "en": len(EN.encode(LONG))}
    short = {"pt": len(PT.encode(SHORT)), "en": len(EN.encode(SHORT))}
    assert report["tokenizers"] == ["pt", "en"] and report["config"] == "--max-tokens"
    assert [(f["path"], f["tokens"]) for f in report["files"]] == [("docs/long.md", long), ("short.txt", short)]
    assert report["files"][0]["budget"] == {
        "files": "**",
        "maxTokens": 50,
        "tokenizer": "pt",
        "severity": "error",
        "used": round(long["pt"] / 50, 6),
        "over": long["pt"] - 50,
        "per": "file",
        "lines_over": [],
    }
    assert report["files"][1]["budget"]["over"] == 0
    assert report["total"] == {name: long[name] + short[name] for name in ("pt", "en")}
    assert report["over"] == ["docs/long.md"]
    assert report["skipped"] == [] and report["unreadable"] == [] and report["ignored"] == 0


def test_problems_read_in_portuguese(project):
    result = tokens(project, "docs", "--max-tokens", "5", lang="pt_BR.UTF-8")
    long = len(PT.encode(LONG))
    assert long < 1000  # so that its digits need no grouping
    assert result.stderr.splitlines() == [
        f"docs/long.md: {long} tokens, {long - 5} acima do orçamento de 5 para ** (pt)",
        "glassllm tokens: arquivos acima do orçamento: 1",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nowhere.md"], "glassllm tokens: [Errno 2] cannot read text file: No such file or directory: 'nowhere.md'"),
        (["*.rst"], "glassllm tokens: *.rst: no file matches this pattern"),
        (["short.txt", "--max-tokens", "0"], "glassllm tokens: --max-tokens: --max-tokens must be a positive integer"),
        (["short.txt", "-t", "pt", "--with", "pt"], "glassllm tokens: pt is given twice"),
        (["short.txt", "--jobs", "0"], "glassllm tokens: jobs must be at least 1, got 0"),
        (["short.txt", "--config", "docs/long.md"], "glassllm tokens: docs/long.md: not valid TOML"),
        (["short.txt", "-t", "missing.json"], "glassllm tokens: [Errno 2] cannot read tokenizer file"),
    ],
)
def test_a_bad_path_or_option_is_one_line_and_status_1(project, args, message):
    result = tokens(project, *args)
    assert result.returncode == 1
    assert result.stderr.splitlines()[0].startswith(message)
    assert "Traceback" not in result.stderr


def test_a_bad_configuration_stops_with_one_line(project):
    (project / ".glassllm.toml").write_text('[[budgets]]\nfiles = "*"\nmaxTokens = -3\n', encoding="utf-8")
    result = tokens(project, "short.txt")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (  # the file named relative to the current folder
        "glassllm tokens: .glassllm.toml: budgets[0].maxTokens must be a positive integer, found -3\n"
    )


def test_a_hostile_folder_gives_one_line_each_and_loses_nothing(project):
    (project / "image.bin").write_bytes(b"\0\1\2")
    (project / "latin1.txt").write_bytes(b"ol\xe1")
    os.mkfifo(project / "fifo")
    (project / "loop").symlink_to(project / "loop")
    (project / "huge.txt").write_text("a" * ((1 << 20) + 1), encoding="utf-8")
    result = tokens(project, ".", "--max-file-mb", "1")
    assert result.returncode == 1  # the loop could not be read: its tokens are unknown
    assert "docs/long.md" in result.stdout and "short.txt" in result.stdout
    assert sorted(result.stderr.splitlines()) == sorted(
        [
            "fifo: skipped: not a regular file",
            "huge.txt: skipped: larger than 1 MB",
            "glassllm tokens: paths that could not be read, so their tokens were not counted: 1",
            "glassllm tokens: [Errno 40] cannot read text file: Too many levels of symbolic links: 'loop'",
            "image.bin: skipped: binary (a NUL byte in its first 8,000 bytes)",
            "latin1.txt: skipped: not UTF-8 text (byte 0xe1 at offset 2)",
        ]
    )


def test_a_second_run_reads_the_cache(project):
    first = tokens(project, ".", "--json")
    assert (project.parent / "cache" / "glassllm" / "token-counts.sqlite3").is_file()
    second = tokens(project, ".", "--json")
    assert json.loads(second.stdout) == json.loads(first.stdout)
    (project / "short.txt").write_text(SHORT * 2, encoding="utf-8")  # edited: counted again
    third = json.loads(tokens(project, "short.txt", "--json").stdout)
    assert third["total"] == {"pt": len(PT.encode(SHORT * 2))}


def test_html_writes_the_offline_map_of_the_tokens(project):
    (project / "docs" / "deep").mkdir()
    (project / "docs" / "deep" / "note.md").write_text(SHORT * 3, encoding="utf-8")
    long, short, note = len(PT.encode(LONG)), len(PT.encode(SHORT)), len(PT.encode(SHORT * 3))
    total = long + short + note
    result = tokens(project, ".", "--max-tokens", str(short + 1), "--html", "map.html", "--lang", "en")
    assert result.returncode == 1  # the page does not change the verdict
    assert result.stdout == "map.html: tokens page (en), open it in a browser\n"
    assert "docs/long.md: " in result.stderr
    page = (project / "map.html").read_text(encoding="utf-8")
    assert '<html lang="en">' in page and "default-src 'none'" in page
    assert "<script" not in page and "http" not in page.replace("http-equiv", "")  # nothing to fetch, no script
    assert f"{total:,} tokens (pt)" in page
    # Folders nest, each with its tokens; the largest first.
    assert page.index('<span class="name">docs/</span>') < page.index('<span class="name">short.txt</span>')
    assert page.index('<span class="name">long.md</span>') < page.index('<span class="name">deep/</span>')
    assert f'<span class="count">{long + note:,}</span>' in page  # docs/ holds both
    assert f"{100 * long / total:.1f}% of the total" in page
    assert f"{math.floor(1000 * long / (short + 1)) / 10:.1f}% of {short + 1:,}" in page
    assert f"<code>docs/long.md</code>: {long:,} tokens, {long - short - 1:,} over the budget" in page
    (project / "map.html").unlink()  # not to be counted in the next run
    portuguese = tokens(project, ".", "--html", "../mapa.html", "--max-tokens", "99999", lang="pt_BR.UTF-8")
    assert portuguese.returncode == 0 and portuguese.stdout == "../mapa.html: tokens page (pt), open it in a browser\n"
    page = (project.parent / "mapa.html").read_text(encoding="utf-8")
    assert '<html lang="pt-BR">' in page and "Tokens de um repositório" in page
    assert "Todo arquivo está dentro do seu orçamento." in page
    assert f"{100 * long / total:.1f}% do total".replace(".", ",") in page
    unbudgeted = tokens(project, "short.txt", "--html", "short.html")
    assert "No budget applies to these files" in (project / "short.html").read_text(encoding="utf-8")
    assert unbudgeted.returncode == 0


def test_on_a_terminal_a_progress_bar_shows_the_bytes_tokenized(project):
    environment = {**os.environ, "XDG_CACHE_HOME": str(project.parent / "cache")}
    run = run_on_terminal([sys.executable, "-m", "glassllm.cli", "tokens", ".", "--no-cache"], project, environment)
    assert run.returncode == 0 and b"total: 2 files" in run.stdout
    assert "tokenizing: 100%" in run.screen
    quiet = tokens(project, ".", "--no-cache", "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_a_file_name_that_is_not_utf8_is_shown_escaped_and_counted(project):
    (project / os.fsdecode(b"caf\xe9.txt")).write_text(SHORT, encoding="utf-8")
    (project / os.fsdecode(b"bin\xff.dat")).write_bytes(b"\0")
    result = tokens(project, ".", "--max-tokens", "1")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"{len(PT.encode(SHORT)):,}" in result.stdout and "caf\\xe9.txt" in result.stdout
    assert "bin\\xff.dat: skipped: binary" in result.stderr
    assert "caf\\xe9.txt: " in result.stderr
    report = json.loads(tokens(project, ".", "--json").stdout)
    assert "caf\\xe9.txt" in [entry["path"] for entry in report["files"]]
    assert report["skipped"] == [{"path": "bin\\xff.dat", "reason": "binary"}]
    tokens(project, ".", "--html", "../map.html")
    assert "caf\\xe9.txt" in (project.parent / "map.html").read_text(encoding="utf-8")


def test_a_named_pyproject_without_the_table_is_refused(project):
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    result = tokens(project, "short.txt", "--config", "pyproject.toml")
    assert result.returncode == 1
    assert result.stderr == "glassllm tokens: pyproject.toml: no [tool.glassllm] table to read budgets from\n"
    assert tokens(project, "short.txt").returncode == 0  # found by the search, it is simply no configuration


LLAMA3 = Path(__file__).resolve().parents[2] / "fixtures" / "models" / "llama3" / "tokenizer.json"
CHATS = [
    [{"role": "user", "content": "Olá 🙂"}],
    {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Era uma vez um gato"}]},
    [{"role": "user", "content": "oi"}, {"role": "assistant", "content": "Olá! Como posso ajudar você hoje?"}],
]


def prompt_counts() -> list[int]:
    """The oracle: transformers' apply_chat_template(…, tokenize=True) on Llama 3's template."""
    transformers = pytest.importorskip("transformers")
    hf = transformers.AutoTokenizer.from_pretrained(str(LLAMA3.parent))
    counts = []
    for value in CHATS:
        messages = value["messages"] if isinstance(value, dict) else value
        counts.append(len(hf.apply_chat_template(messages, tokenize=True, return_dict=True)["input_ids"]))
    return counts


def test_a_chat_dataset_counts_its_prompts_and_its_budget_is_each_conversations(project):
    if not LLAMA3.is_file():
        pytest.skip("tests/fixtures/models/llama3 is not there: run tests/fixtures/fetch_models.sh")
    counts = prompt_counts()
    (project / "chats.jsonl").write_text("\n".join(json.dumps(value) for value in CHATS) + "\n", encoding="utf-8")
    limit = sorted(counts)[1]  # the largest conversation alone passes it
    largest = counts.index(max(counts)) + 1
    result = tokens(project, "chats.jsonl", "short.txt", "-t", str(LLAMA3), "--max-tokens", str(limit), "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    chats = next(f for f in report["files"] if f["path"] == "chats.jsonl")
    name = str(LLAMA3)
    assert chats["tokens"] == {name: sum(counts)} and chats["counted_as"] == {name: "chat"}
    assert chats["lines"] == {name: [[number, count] for number, count in enumerate(counts, 1)]}
    # The counts glassllm chat --json gives, line by line.
    chat = subprocess.run(
        [sys.executable, "-m", "glassllm.cli", "chat", "chats.jsonl", "-t", str(LLAMA3), "--json"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    answers = [json.loads(line) for line in chat.stdout.splitlines()]
    assert [[answer["line"], answer["count"]] for answer in answers[:-1]] == chats["lines"][name]
    assert answers[-1]["summary"]["total"] == chats["tokens"][name]
    budget = chats["budget"]
    assert (budget["per"], budget["lines_over"], budget["over"]) == ("line", [largest], max(counts) - limit)
    short = next(f for f in report["files"] if f["path"] == "short.txt")
    assert short["counted_as"] == {name: "text"} and short["budget"]["per"] == "file"
    assert result.stderr.splitlines() == [
        f"chats.jsonl:{largest}: {max(counts):,} tokens, {max(counts) - limit:,} over the budget of {limit:,} "
        f"for ** ({name})",
        "glassllm tokens: files over their budget: 1",
    ]
    # The table says how each file was counted; a second run (from the cache) says the same.
    for _ in range(2):
        table = tokens(project, "chats.jsonl", "short.txt", "-t", str(LLAMA3))
        assert table.returncode == 0, table.stderr
        lines = table.stdout.splitlines()
        assert lines[0].split()[-4:] == ["counted", "as", "budget", "file"]
        assert lines[1].split()[0] == f"{sum(counts):,}" and "chat prompts" in lines[1] and "chats.jsonl" in lines[1]
        assert lines[2].split()[-2:] == ["text", "short.txt"]


def test_without_a_chat_format_chat_files_count_as_text_said_once(project):
    for name in ("a.jsonl", "b.jsonl"):
        (project / name).write_text("\n".join(json.dumps(value) for value in CHATS) + "\n", encoding="utf-8")
    (project / "c.json").write_text(json.dumps(CHATS[1]), encoding="utf-8")
    for _ in range(2):  # counted, then from the cache
        result = tokens(project, "a.jsonl", "b.jsonl", "c.json", "--json")
        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        for file in report["files"]:
            text = (project / file["path"]).read_text(encoding="utf-8")
            assert file["tokens"] == {"pt": len(PT.encode(text))} and file["counted_as"] == {"pt": "chat-as-text"}
        (said,) = result.stderr.splitlines()
        assert said.startswith("glassllm tokens: 3 chat files counted as text with pt, which has no chat format: ")
