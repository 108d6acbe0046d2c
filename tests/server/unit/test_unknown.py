"""Finding and wording unknown characters, without a server."""

from __future__ import annotations

import pytest

from glassllm import packaged
from glassllm_server.positions import content_length
from glassllm_server.render.diagnostics import describe_characters, unknown_message
from glassllm_server.unknown import UnknownRun, unknown_runs


@pytest.fixture(scope="module")
def tok():
    return packaged("pt")


def runs(tok, line):
    return unknown_runs(tok.encode_spans(line), content_length(line))


def test_consecutive_unknown_characters_are_one_run(tok):
    line = "a 🧪🧪 b 🧪 猫猫猫!\n"
    found, endings = runs(tok, line)
    assert [line[run.start : run.end] for run in found] == ["🧪🧪", "🧪", "猫猫猫"]
    assert [run.tokens for run in found] == [2, 1, 3]
    assert endings == 0


def test_a_run_covers_every_original_code_point_nfc_merged(tok):
    line = "x\u1100\u1161y"  # Hangul jamo that NFC composes into one unknown syllable
    found, _ = runs(tok, line)
    assert found == [UnknownRun(1, 3, 1)]


def test_unknown_line_endings_are_counted_apart(tok):
    assert "\r" not in tok.alphabet
    assert runs(tok, "🧪\r\n") == ([UnknownRun(0, 1, 1)], 1)
    assert runs(tok, "abc\r") == ([], 1)
    assert runs(tok, "abc") == ([], 0)


def test_known_text_has_no_runs(tok):
    assert runs(tok, "Era uma vez\n") == ([], 0)


def test_invisible_characters_are_described_by_the_librarys_one_rule():
    assert describe_characters("🧪") == "'🧪'"
    assert describe_characters("\u200d") == "'⟨U+200D ZERO WIDTH JOINER⟩'"
    assert describe_characters("a\u0301") == "'a\u0301'"  # the accent on its letter
    assert describe_characters("\u0301") == "'◌\u0301'"  # a lone accent on a dotted circle


def test_the_message_fields():
    seen = []

    def say(key, **fields):
        seen.append((key, fields))
        return key

    assert unknown_message(say, "🧪", 1, "Portuguese") == "unknown.one"
    assert seen[-1][1] == {"characters": "'🧪'", "tokenizer": "Portuguese", "unk": "<unk>", "id": 1, "shown": "⁇"}
    unknown_message(say, "🧪🧪", 2, "Portuguese")
    assert seen[-1][0] == "unknown.many" and seen[-1][1]["count"] == "2" and seen[-1][1]["shown"] == "⁇⁇"
    unknown_message(say, "猫" * 20, 20, "Portuguese")
    assert seen[-1][1]["shown"] == "⁇ × 20"
    unknown_message(say, "\r", 1, "Portuguese", line_endings=1)
    assert seen[-1][0] == "unknown.line_ending"
    unknown_message(say, "\r", 1, "Portuguese", line_endings=7)
    assert seen[-1][0] == "unknown.line_endings" and seen[-1][1]["count"] == "7"
    assert seen[-1][1]["characters"] == "'\\r'"
