"""Settings without a server: every form a client sends, precedence, invalid values reported."""

from __future__ import annotations

from glassllm_server.settings import Problem, Settings, parse_settings


def test_defaults():
    settings = Settings()
    assert settings.tokenizer == "pt"
    assert (settings.chunk_boundaries, settings.space_markers, settings.token_boundaries) == (True, True, False)
    assert (settings.semantic_tokens, settings.diagnostics, settings.locale) == (True, True, None)


def test_nested_dotted_and_wrapped_forms_all_work():
    nested, problems = parse_settings({"glassllm": {"tokenizer": "en", "inlayHints": {"tokenBoundaries": True}}})
    dotted, _ = parse_settings({"tokenizer": "en", "inlayHints.tokenBoundaries": True})
    assert nested == dotted == Settings(tokenizer="en", token_boundaries=True)
    assert problems == []


def test_later_sources_win_and_null_keeps_the_base():
    base, _ = parse_settings({"tokenizer": "en", "locale": "pt"})
    merged, _ = parse_settings({"tokenizer": None, "semanticTokens": False}, base)
    assert merged == Settings(tokenizer="en", locale="pt", semantic_tokens=False)
    assert parse_settings({"locale": None}, base)[0].locale is None


def test_invalid_values_are_reported_and_fall_back_to_defaults():
    settings, problems = parse_settings(
        {"tokenizer": 3, "diagnostics": "yes", "locale": "fr", "inlayHints": {"spaceMarkers": 0}, "other": 1},
        Settings(diagnostics=False),
    )
    assert settings == Settings()
    assert problems == [
        Problem("glassllm.tokenizer", 3, "expected.tokenizer"),
        Problem("glassllm.diagnostics", "yes", "expected.boolean"),
        Problem("glassllm.locale", "fr", "expected.locale"),
        Problem("glassllm.inlayHints.spaceMarkers", 0, "expected.boolean"),
    ]
    assert parse_settings(["pt"])[1] == [Problem("glassllm", ["pt"], "expected.object")]


def test_locale_setting_accepts_region_variants():
    assert parse_settings({"locale": "pt-BR"})[0].locale == "pt"
    assert parse_settings({"locale": "EN_us"})[0].locale == "en"


def test_budgets_and_max_tokens_are_read_by_the_library_s_parser():
    from glassllm.budgets import Budget

    settings, problems = parse_settings(
        {
            "maxTokens": 4096,
            "budgets": [{"files": "prompts/**", "maxTokens": 100, "severity": "warning", "tokenizer": "m/t.json"}],
        }
    )
    assert problems == []
    assert settings.max_tokens == 4096
    # A tokenizer's relative path stays relative: the workspace root resolves it.
    assert settings.budgets == (Budget("prompts/**", 100, "m/t.json", "warning"),)
    assert parse_settings({"maxTokens": None}, settings)[0].max_tokens is None


def test_a_wrong_budget_is_one_problem_with_the_library_s_words_and_no_budget():
    for wrong, words in [
        (
            [{"files": "*.md", "maxTokens": "4k"}],
            "glassllm.budgets[0].maxTokens must be a positive integer, found '4k'",
        ),
        ([{"files": "*.md"}], "glassllm.budgets[0].maxTokens is missing"),
        ([{"files": "*.md", "maxTokens": 3, "sev": "x"}], "unknown key 'sev' in glassllm.budgets[0]"),
        ({"files": "*.md"}, "glassllm.budgets must be a list of tables, found a table"),
    ]:
        settings, problems = parse_settings({"budgets": wrong, "maxTokens": 5})
        assert settings.budgets == () and settings.max_tokens == 5
        (problem,) = problems
        assert problem.key == "glassllm.budgets" and problem.error is not None
        assert words in str(problem.error)
    for wrong in (0, -1, 2.5, True, "8000"):
        settings, problems = parse_settings({"maxTokens": wrong})
        assert settings.max_tokens is None
        assert problems == [Problem("glassllm.maxTokens", wrong, "expected.max_tokens")]
