"""visible: the one rule for showing characters that would vanish or blend in, used by
the command line, the hover, the pages and the diagnostics."""

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glassllm.shown.visible import DOTTED_CIRCLE, visible


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("▁vez", "▁vez"),
        ("a b", "a b"),
        ("\n", "\\n"),
        ("\r\n", "\\r\\n"),
        ("\t", "\\t"),
        ("\\n", "\\\\n"),  # a backslash and an n are not a line break
    ],
)
def test_line_breaks_tabs_and_backslashes_are_escapes(text, shown):
    assert visible(text) == shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\u2028", "⟨U+2028 LINE SEPARATOR⟩"),
        ("\u2029", "⟨U+2029 PARAGRAPH SEPARATOR⟩"),
        ("a\u200db", "a⟨U+200D ZERO WIDTH JOINER⟩b"),
        ("\u00a0", "⟨U+00A0 NO-BREAK SPACE⟩"),
        ("\ufeff", "⟨U+FEFF ZERO WIDTH NO-BREAK SPACE⟩"),
        ("\u00ad", "⟨U+00AD SOFT HYPHEN⟩"),
        ("\x0c", "⟨U+000C FORM FEED⟩"),
        ("\x01", "⟨U+0001⟩"),  # a control Unicode gives no name or common alias
        ("\ue000", "⟨U+E000⟩"),  # private use
        ("\u0378", "⟨U+0378⟩"),  # unassigned
        ("❤\ufe0f", "❤⟨U+FE0F VARIATION SELECTOR-16⟩"),
    ],
)
def test_invisible_and_unusual_characters_are_written_as_code_point_and_name(text, shown):
    assert visible(text) == shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\u0301", DOTTED_CIRCLE + "\u0301"),  # a lone accent
        ("▁\u0301", "▁" + DOTTED_CIRCLE + "\u0301"),  # after the marker: nothing to sit on
        ("\n\u0301", "\\n" + DOTTED_CIRCLE + "\u0301"),
        ("x\u0301", "x\u0301"),  # on its letter, as the text shows it
        ("हिन्दी", "हिन्दी"),
        ("\u093f", DOTTED_CIRCLE + "\u093f"),  # a vowel sign cut from its consonant
        ("e\u0301\u0323", "e\u0301\u0323"),  # marks stack on one base
    ],
)
def test_a_combining_mark_without_a_base_sits_on_a_dotted_circle(text, shown):
    assert visible(text) == shown


@settings(max_examples=500, deadline=None)
@given(st.text(st.characters(codec="utf-8"), max_size=40))
def test_nothing_shown_is_invisible_or_breaks_a_line(text):
    shown = visible(text)
    assert not any(character in shown for character in "\n\r\t\u2028\u2029\u200b\u200d\u00a0")
    assert len(shown) >= len(text)


def test_the_command_line_shows_pieces_by_the_rule():
    text = "a\u2028b\n"
    inspect = subprocess.run(
        [sys.executable, "-m", "glassllm.cli", "inspect", text], capture_output=True, text=True, check=True
    ).stdout
    assert "'⟨U+2028 LINE SEPARATOR⟩'" in inspect and "'\\n'" in inspect
    explain = subprocess.run(
        [sys.executable, "-m", "glassllm.cli", "explain", "\u0301x"], capture_output=True, text=True, check=True
    ).stdout
    assert f"chunk 0: '{DOTTED_CIRCLE}\u0301'" in explain
