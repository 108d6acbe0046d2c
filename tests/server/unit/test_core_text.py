"""Settings, messages, hover text and inlay hints without a server."""

from __future__ import annotations

import json

import pytest

from glassllm import packaged
from glassllm_server.document import Document, DocumentToken, LineTokenizer, Stats
from glassllm_server.hints import HintCache, hint_window, hints_json
from glassllm_server.messages import CATALOGUE, Messages, choose_locale, format_decimal, format_integer
from glassllm_server.positions import Encoding, Point, column_units
from glassllm_server.render.code_lens import lens_title
from glassllm_server.render.hover import derivation_line, hover_markdown
from glassllm_server.render.markdown import code
from glassllm_server.settings import Problem, Settings, parse_settings
from tests.server.oracle import TRICKY


@pytest.fixture(scope="module")
def tokenizer():
    return LineTokenizer(packaged("pt"), "pt")


# Settings


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


# Messages


def test_every_message_exists_in_both_languages():
    for key, texts in CATALOGUE.items():
        assert set(texts) == {"en", "pt"}, key
        assert all(text.strip() for text in texts.values()), key


def test_locale_choice():
    assert choose_locale("pt-BR", None) == "pt"
    assert choose_locale("pt", None) == "pt"
    assert choose_locale("en-US", None) == "en"
    assert choose_locale(None, None, {}) == "en"
    assert choose_locale("de", None) == "en"
    assert choose_locale("pt-BR", "en") == "en"
    assert choose_locale("en", "pt") == "pt"


def test_without_a_client_locale_the_environment_decides_as_posix_says():
    portuguese = {"LANG": "pt_BR.UTF-8"}
    assert choose_locale(None, None, portuguese) == "pt"
    assert choose_locale("en-US", None, portuguese) == "en"  # the client's locale comes first
    assert choose_locale(None, "en", portuguese) == "en"  # and the setting before both
    assert choose_locale(None, None, {"LANG": "pt_BR.UTF-8", "LC_MESSAGES": "en_US.UTF-8"}) == "en"
    assert choose_locale(None, None, {"LANG": "en_US.UTF-8", "LC_MESSAGES": "pt_PT.UTF-8"}) == "pt"
    assert choose_locale(None, None, {"LC_ALL": "pt_BR.UTF-8", "LC_MESSAGES": "C", "LANG": "C"}) == "pt"
    assert choose_locale(None, None, {"LC_ALL": "", "LC_MESSAGES": "", "LANG": "pt_BR.UTF-8"}) == "pt"  # empty is unset
    assert choose_locale(None, None, {"LANG": "C.UTF-8"}) == "en"


def test_numbers_in_each_language():
    assert format_integer(1234567, "en") == "1,234,567"
    assert format_integer(1234567, "pt") == "1.234.567"
    assert format_decimal(3.94, "en") == "3.9"
    assert format_decimal(3.94, "pt") == "3,9"
    assert format_decimal(1234.5, "pt") == "1.234,5"


def test_lens_title_in_both_languages():
    stats = Stats(tokens=1234, chunks=900, characters=4813, unknown=0)
    assert lens_title(stats, Messages("en")) == "1,234 tokens · 3.9 chars/token"
    assert lens_title(stats, Messages("pt")) == "1.234 tokens · 3,9 caracteres/token"
    assert lens_title(Stats(1, 1, 5, 0), Messages("en")) == "1 token · 5.0 chars/token"
    assert lens_title(Stats(0, 0, 0, 0), Messages("pt")) == "0 tokens"


# Hover text


def test_code_spans_show_invisible_characters_by_the_librarys_rule():
    assert code("a\tb\n\u2028▁") == "`a\\tb\\n⟨U+2028 LINE SEPARATOR⟩▁`"
    assert code("▁vez") == "`▁vez`"
    assert code("a`b") == "``a`b``"
    assert code("`") == "`` ` ``"


def test_derivation_line_follows_the_issue_format():
    assert derivation_line([("▁vez", "▁v", "ez"), ("ez", "e", "z")]) == "▁vez ← ▁v + ez ← e + z"
    assert derivation_line([]) == ""


def token_at(document: Document, point: Point) -> DocumentToken:
    """The token at ``point`` of a document tokenized whole when it was made."""
    token = document.token_at(point)
    assert token is not None, point
    return token


@pytest.mark.parametrize(
    ("locale", "expected"),
    [
        (
            "en",
            [
                "**`▁vez`** · ID",
                " · at 1:8–1:11 · ",
                "index 3 in the document",
                "Chunk `▁vez` → **`▁vez`**",
                "Merges: `▁vez ← ",
                "Tokenizer: Portuguese (pt)",
                "Explain BPE merges",
            ],
        ),
        (
            "pt",
            [
                "**`▁vez`** · ID",
                " · em 1:8–1:11 · ",
                "índice 3 no documento",
                "Trecho `▁vez` → **`▁vez`**",
                "Fusões: `▁vez ← ",
                "Tokenizador: português (pt)",
                "Explicar fusões BPE",
            ],
        ),
    ],
)
def test_hover_markdown(tokenizer, locale, expected):
    document = Document("u", "Era uma vez", 1, tokenizer)
    token = token_at(document, Point(0, 8))
    derivation = tokenizer.tokenizer.derivation(token.piece)
    messages = Messages(locale)
    label = f"{messages('tokenizer.pt')} (pt)"
    text = hover_markdown(token, derivation, label, messages)
    for part in expected:
        assert part in text
    assert derivation_line(derivation) in text


def test_hover_markdown_for_an_unknown_character_and_a_single_character(tokenizer):
    document = Document("u", "a🧪", 1, tokenizer)
    unknown = token_at(document, Point(0, 1))
    text = hover_markdown(unknown, [], "x", Messages("en"))
    assert "**`🧪`** · ID 1 · not in the alphabet: `<unk>`, decoded as ⁇ · at 1:2 · " in text
    assert "A single character: no merges." in text


# Inlay hints


def hint_list(document, start, end, settings, encoding: Encoding = "utf-32", cache=None):
    """The hints the server answers for ``[start, end]``: (point, label, token column)
    (in UTF-32 a position's character is the code-point column)."""
    parts = hints_json(document, start, end, settings, encoding, HintCache() if cache is None else cache)
    return [
        (Point(hint["position"]["line"], hint["position"]["character"]), hint["label"], hint["data"][3])
        for hint in json.loads("[" + ",".join(parts) + "]")
    ]


def test_default_hints_mark_chunk_boundaries_and_space_markers(tokenizer):
    document = Document("u", "Era uma vez.\n", 1, tokenizer)
    hints = hint_list(document, Point(0, 0), Point(1, 0), Settings())
    # chunks: Era | ▁uma | ▁vez | . | \n ; no hint at the line start nor before "\n"
    assert [(point, label) for point, label, _ in hints] == [
        (Point(0, 3), "¦"),
        (Point(0, 4), "▁"),
        (Point(0, 7), "¦"),
        (Point(0, 8), "▁"),
        (Point(0, 11), "¦"),
    ]
    # each hint resolves to the token it describes
    assert [token_at(document, Point(0, column)).piece for _, _, column in hints] == [
        "▁uma",
        "▁uma",
        "▁vez",
        "▁vez",
        ".",
    ]


def test_token_boundaries_and_switches(tokenizer):
    document = Document("u", "Era uma", 1, tokenizer)
    only_tokens = Settings(chunk_boundaries=False, space_markers=False, token_boundaries=True)
    assert [(point, label) for point, label, _ in hint_list(document, Point(0, 0), Point(0, 7), only_tokens)] == [
        (Point(0, 1), "·")  # E · ra
    ]
    nothing = Settings(chunk_boundaries=False, space_markers=False)
    assert hint_list(document, Point(0, 0), Point(0, 7), nothing) == []


def test_hints_only_for_the_requested_range(tokenizer):
    text = "Era uma vez\n" * 100
    document = Document("u", text, 1, tokenizer)
    hints = hint_list(document, Point(50, 5), Point(52, 4), Settings())
    assert hints
    assert all(Point(50, 5) <= point <= Point(52, 4) for point, _, _ in hints)
    assert not document.tokenized_through(0)  # lines outside the range stay untokenized


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
@pytest.mark.parametrize("switches", [(True, True, False), (True, True, True), (False, False, True)])
def test_serialized_hints_are_the_hints(tokenizer, encoding, switches):
    text = TRICKY + "Era uma vez, um 🧑‍🔬 e\u0301 café\tfim\r\n" * 3
    settings = Settings(chunk_boundaries=switches[0], space_markers=switches[1], token_boundaries=switches[2])
    document = Document("file:///x.txt", text, 7, tokenizer)
    cache = HintCache(limit=3)
    last = len(document.lines) - 1
    for start, end in [(Point(0, 0), Point(last, len(document.lines[last]))), (Point(1, 2), Point(3, 5))] * 2:
        # In code points and serialized afresh, the hints; in the client's units through a cache, the same.
        expected = [
            {
                "position": {"line": point.line, "character": _units(document, point, encoding)},
                "label": label,
                "data": ["file:///x.txt", 7, point.line, column],
            }
            for point, label, column in hint_list(document, start, end, settings)
        ]
        answer = json.loads("[" + ",".join(hints_json(document, start, end, settings, encoding, cache)) + "]")
        assert answer == expected
    assert len(cache._entries) == 3  # bounded


def _units(document, point, encoding):
    units = column_units(document.lines[point.line], encoding)
    return point.column if units is None else units[point.column]


def test_serialized_hints_follow_the_tokenizer(tokenizer):
    cache = HintCache()
    english = LineTokenizer(packaged("en"), "en")
    document = Document("u", "Era uma vez\n", 1, tokenizer)
    whole = (Point(0, 0), Point(0, 12))
    before = hints_json(document, *whole, Settings(token_boundaries=True), "utf-16", cache)
    document.set_tokenizer(english)
    after = hints_json(document, *whole, Settings(token_boundaries=True), "utf-16", cache)
    assert before != after
    assert json.loads("[" + after[0] + "]") == [
        {
            "position": {"line": point.line, "character": point.column},
            "label": label,
            "data": ["u", 1, 0, column],
        }
        for point, label, column in hint_list(document, *whole, Settings(token_boundaries=True))
    ]


def test_a_long_range_gets_hints_around_the_focus_line(tokenizer):
    document = Document("u", "Era uma vez\n" * 1000, 1, tokenizer)

    def hinted_lines(start, end):
        window = hint_window(document, start, end, 150)
        return {point.line for point, _, _ in hint_list(document, *window, Settings())}

    whole = (Point(0, 0), Point(1000, 0))
    assert hinted_lines(*whole) == set(range(150))
    document.focus_line = 700
    assert hint_window(document, *whole, 150) == (Point(625, 0), Point(774, 12))
    assert hinted_lines(*whole) == set(range(625, 775))
    document.focus_line = 990  # near the end: the window stays inside the range
    assert hinted_lines(*whole) == set(range(851, 1000))  # 851..1000, and line 1000 is the empty last one
    assert hint_window(document, Point(10, 3), Point(20, 0), 150) == (Point(10, 3), Point(20, 0))
