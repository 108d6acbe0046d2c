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
