"""Inlay hints without a server: where they sit, the switches, the range, their JSON."""

from __future__ import annotations

import json
from typing import cast

import pytest
from lsprotocol import types
from pygls.protocol import default_converter

from glassllm import packaged
from glassllm.formats.load import load_model
from glassllm_server.document import Document, DocumentToken
from glassllm_server.hints import HintCache, hint_window, hints_json, line_hints
from glassllm_server.line_tokenizer import line_tokenizer
from glassllm_server.positions import Encoding, Point, column_units
from glassllm_server.render.hints import LABELS, HintKind
from glassllm_server.settings import Settings
from tests.library.formats.fixtures import model_file
from tests.server.oracle import TRICKY


def token_at(document: Document, point: Point) -> DocumentToken:
    """The token at ``point`` of a document tokenized whole when it was made."""
    token = document.token_at(point)
    assert token is not None, point
    return token


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
    english = line_tokenizer(packaged("en"), "en")
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
    document.focus(700)
    assert hint_window(document, *whole, 150) == (Point(625, 0), Point(774, 12))
    assert hinted_lines(*whole) == set(range(625, 775))
    document.focus(990)  # near the end: the window stays inside the range
    assert hinted_lines(*whole) == set(range(851, 1000))  # 851..1000, and line 1000 is the empty last one
    assert hint_window(document, Point(10, 3), Point(20, 0), 150) == (Point(10, 3), Point(20, 0))


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
@pytest.mark.parametrize("switches", [(True, True, False), (True, True, True)])
@pytest.mark.parametrize("model", ["pt", "llama3"])
def test_the_json_answer_is_what_pygls_makes_of_the_same_hints(tokenizer, model, encoding, switches):
    # The answer is written as JSON text directly; pygls' converter (cattrs, lsprotocol's
    # InlayHint) must make the same objects of the same hints, line cut by a range too.
    shared = tokenizer if model == "pt" else line_tokenizer(load_model(model_file(model)), model)
    text = TRICKY + "Era uma vez, um 🧑‍🔬 e\u0301 café\tfim\r\n" * 3 + ".\n\n  Fim  \n"
    settings = Settings(chunk_boundaries=switches[0], space_markers=switches[1], token_boundaries=switches[2])
    document = Document("file:///pasta/ação.txt", text, 7, shared)
    last = len(document.lines) - 1
    for start, end in [(Point(0, 0), Point(last, len(document.lines[last]))), (Point(1, 2), Point(3, 5))]:
        hints = []
        for line in range(start.line, end.line + 1):
            line_text = document.lines[line]
            low = start.column if line == start.line else 0
            high = end.column if line == end.line else len(line_text)
            for column, kind, token_column in line_hints(line_text, document.line_tokens(line), switches):
                if low <= column <= high:
                    position = types.Position(line=line, character=_units(document, Point(line, column), encoding))
                    data = [document.uri, 7, line, token_column]
                    label = LABELS[cast(HintKind, kind)]
                    hints.append(types.InlayHint(position=position, label=label, data=data))
        answer = hints_json(document, start, end, settings, encoding, HintCache())
        assert hints and json.loads("[" + ",".join(answer) + "]") == default_converter().unstructure(hints)
