"""Token budgets: the configuration's reading, its validation and which budget applies."""

from __future__ import annotations

import pytest

from glassllm.budgets import Budget, BudgetConfig, find_budgets, glob_regex, parse_budgets, read_budgets
from glassllm.shown.problems import describe


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("*.md", "README.md", True),
        ("*.md", "docs/deep/page.md", True),  # no "/": a name at any depth
        ("*.md", "README.mdx", False),
        ("docs/*.md", "docs/page.md", True),
        ("docs/*.md", "docs/deep/page.md", False),  # "*" never crosses a "/"
        ("docs/*.md", "other/docs/page.md", False),  # a "/": anchored at the root
        ("docs/**/*.md", "docs/page.md", True),  # "**" is any number of folders, none too
        ("docs/**/*.md", "docs/a/b/page.md", True),
        ("**/prompts/*.txt", "prompts/a.txt", True),
        ("**/prompts/*.txt", "x/y/prompts/a.txt", True),
        ("/README.md", "README.md", True),
        ("/README.md", "docs/README.md", False),
        ("prompts", "prompts/system/a.txt", True),  # a folder covers what is under it
        ("prompts/", "prompts/a.txt", True),
        ("prompts/", "prompts", False),  # a trailing "/" names only a folder
        ("page?.md", "page1.md", True),
        ("page?.md", "page/.md", False),
        ("[ab].md", "a.md", True),
        ("[!ab].md", "c.md", True),
        ("[!ab].md", "a.md", False),
        ("[a-c].md", "b.md", True),
        ("a+b(1).md", "a+b(1).md", True),  # regex characters are literal
        ("a+b(1).md", "aab1.md", False),
    ],
)
def test_globs_follow_gitignore_rules(glob, path, matches):
    assert (glob_regex(glob).fullmatch(path) is not None) is matches


def test_the_last_matching_budget_applies_and_max_tokens_covers_the_rest(tmp_path):
    config = parse_budgets(
        {
            "maxTokens": 9000,
            "budgets": [
                {"files": "docs/**", "maxTokens": 4000},
                {"files": "docs/intro.md", "maxTokens": 1000, "severity": "warning", "tokenizer": "en"},
            ],
        },
        "settings",
        tmp_path,
    )
    assert config.budget_for(tmp_path / "docs" / "a" / "b.md") == Budget("docs/**", 4000)
    assert config.budget_for(tmp_path / "docs" / "intro.md") == Budget("docs/intro.md", 1000, "en", "warning")
    assert config.budget_for(tmp_path / "src" / "x.py") == Budget("**", 9000)
    assert config.budget_for(tmp_path.parent / "elsewhere.md") == Budget("**", 9000)  # outside the root
    assert BudgetConfig().budget_for("anything.md") is None


def test_a_tokenizer_path_is_relative_to_the_configuration(tmp_path):
    config = parse_budgets({"tokenizer": "models/tok.json", "budgets": []}, "settings", tmp_path)
    assert config.tokenizer == str(tmp_path / "models" / "tok.json")
    packaged = parse_budgets({"tokenizer": "en"}, "settings", tmp_path)
    assert packaged.tokenizer == "en"
    assert parse_budgets({"tokenizer": "hf:org/name"}, "settings", tmp_path).tokenizer == "hf:org/name"


def test_pyproject_and_glassllm_toml_are_read_and_found_from_below(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.glassllm]\nmaxTokens = 100\n\n'
        '[[tool.glassllm.budgets]]\nfiles = "*.md"\nmaxTokens = 50\n',
        encoding="utf-8",
    )
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    found = find_budgets(deep)
    assert found is not None and found.source == str(tmp_path / "pyproject.toml")
    assert found.root == tmp_path and found.max_tokens == 100 and found.budgets == (Budget("*.md", 50),)
    # A .glassllm.toml nearer the files wins; its keys are at its top level.
    (tmp_path / "a" / ".glassllm.toml").write_text("maxTokens = 7\n", encoding="utf-8")
    nearer = find_budgets(deep)
    assert nearer is not None and nearer.max_tokens == 7 and nearer.root == tmp_path / "a"


def test_a_pyproject_without_the_table_is_no_configuration_and_the_search_stops_at_the_repository(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.glassllm]\nmaxTokens = 5\n", encoding="utf-8")
    repository = tmp_path / "repo"
    (repository / ".git").mkdir(parents=True)
    (repository / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    assert read_budgets(repository / "pyproject.toml") is None
    assert find_budgets(repository) is None  # the file above the repository is not its configuration


@pytest.mark.parametrize(
    ("toml", "english", "portuguese"),
    [
        ("maxTokens = 0", "tool.glassllm.maxTokens must be a positive integer, found 0", "inteiro positivo"),
        ('maxTokens = "9"', "tool.glassllm.maxTokens must be a positive integer, found '9'", "encontrou '9'"),
        ("maxtokens = 9", "unknown key 'maxtokens' in tool.glassllm (known: tokenizer, maxTokens, budgets)", "chave"),
        ('budgets = "x"', "tool.glassllm.budgets must be a list of tables, found a string", "lista de tabelas"),
        ("budgets = [1]", "tool.glassllm.budgets[0] must be a table, found int", "deve ser uma tabela"),
        ("[[tool.glassllm.budgets]]\nmaxTokens = 3", "tool.glassllm.budgets[0].files is missing", "falta"),
        ('[[tool.glassllm.budgets]]\nfiles = "*"', "tool.glassllm.budgets[0].maxTokens is missing", "falta"),
        (
            '[[tool.glassllm.budgets]]\nfiles = "*"\nmaxTokens = 3\n'
            '[[tool.glassllm.budgets]]\nfiles = "/"\nmaxTokens = 3',
            "tool.glassllm.budgets[1].files must be a non-empty string, found '/'",
            "string não vazia",
        ),
        (
            '[[tool.glassllm.budgets]]\nfiles = "*"\nmaxTokens = 3\nseverity = "fatal"',
            "tool.glassllm.budgets[0].severity must be 'warning' or 'error', found 'fatal'",
            "deve ser 'warning' ou 'error'",
        ),
        (
            '[[tool.glassllm.budgets]]\nfiles = "*"\nmaxTokens = 3\nfile = "x"',
            "unknown key 'file' in tool.glassllm.budgets[0] (known: files, maxTokens, tokenizer, severity)",
            "chave desconhecida",
        ),
        ("tokenizer = 3", "tool.glassllm.tokenizer must be a non-empty string, found 3", "string não vazia"),
        ("maxTokens = = 3", "not valid TOML (", "não é TOML válido"),
    ],
)
def test_a_bad_configuration_is_one_line_naming_the_file_and_the_key(tmp_path, toml, english, portuguese):
    path = tmp_path / "pyproject.toml"
    body = toml if toml.startswith("[[") else f"[tool.glassllm]\n{toml}\n"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        read_budgets(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and english in message and "\n" not in message
    assert portuguese in describe(caught.value, "pt") and str(path) in describe(caught.value, "pt")


def test_a_glassllm_toml_names_keys_at_its_top_level(tmp_path):
    path = tmp_path / ".glassllm.toml"
    path.write_text("[[budgets]]\nfiles = 3\nmaxTokens = 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"\.glassllm\.toml: budgets\[0\]\.files must be a non-empty string"):
        read_budgets(path)
    path.write_text("maxtokens = 3\n", encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        read_budgets(path)
    assert str(caught.value) == f"{path}: unknown key 'maxtokens' (known: tokenizer, maxTokens, budgets)"


def test_a_configuration_that_is_not_utf8_or_cannot_be_read_says_so(tmp_path):
    path = tmp_path / ".glassllm.toml"
    path.write_bytes(b"maxTokens = 3 # \xff\n")
    with pytest.raises(ValueError, match="not valid TOML"):
        read_budgets(path)
    with pytest.raises(FileNotFoundError, match="cannot read configuration file"):
        read_budgets(tmp_path / "missing.toml")
