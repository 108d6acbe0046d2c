"""The messages catalogue without a server: both languages, the locale choice, numbers."""

from __future__ import annotations

from glassllm_server.messages import CATALOGUE, choose_locale, format_decimal, format_integer


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
