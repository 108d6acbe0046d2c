"""The explanation of a selection, without a server: agreement with the library, cut chunks,
the token under the cursor, and the Markdown page."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glassllm import packaged
from glassllm_server.explanation import explain_selection, explanation_data
from glassllm_server.positions import split_lines
from glassllm_server.render.explanation import render_markdown, shown

TRICKY = (
    "Era uma vez, 🧪 caf\u00e9 cafe\u0301\r\n"
    "\tfam\u00edlia 👩\u200d👩\u200d👧 um\u2028dois\x0ctr\u00eas\r"
    "ana  banana   b — 猫!\n"
    "\n"
    "sem fim"
)


@pytest.fixture(scope="module")
def tok():
    return packaged("pt")


def whole(text):
    lines = split_lines(text)
    return lines, (0, 0), (len(lines) - 1, len(lines[-1]))


def explain(tok, text, start, end, **options):
    lines = split_lines(text)
    return explain_selection(tok, lines.__getitem__, start, end, **options)


def test_whole_document_agrees_with_encode_verbose_and_encode(tok):
    _lines, start, end = whole(TRICKY)
    explanation = explain(tok, TRICKY, start, end)
    verbose = [
        {
            "chunk": item.explanation.chunk,
            "steps": [item.explanation.characters] + [s.pieces for s in item.explanation.steps],
        }
        for item in explanation.chunks
    ]
    assert verbose == tok.encode_verbose(TRICKY)
    assert [i for item in explanation.chunks for i in item.explanation.ids] == tok.encode(TRICKY)
    assert not explanation.cut and not explanation.truncated
    assert "".join(item.text for item in explanation.chunks) == TRICKY


def test_chunk_columns_are_original_code_points(tok):
    explanation = explain(tok, TRICKY, (0, 0), (0, 31))
    texts = [item.text for item in explanation.chunks]
    assert "\u00a0" not in "".join(texts)
    decomposed = [item for item in explanation.chunks if item.text == " cafe\u0301"]
    assert len(decomposed) == 1
    assert decomposed[0].explanation.chunk == "▁caf\u00e9"
    line = split_lines(TRICKY)[0]
    assert line[decomposed[0].start : decomposed[0].end] == " cafe\u0301"


def test_a_selection_that_cuts_a_chunk_explains_the_whole_chunk(tok):
    text = "Era uma vez"
    explanation = explain(tok, text, (0, 9), (0, 10))  # the "e" of " vez"
    (item,) = explanation.chunks
    assert item.text == " vez"
    assert item.cut and explanation.cut
    assert item.selected == text[9:10]
    assert item.explanation.pieces == [piece for piece in tok.encode_verbose(" vez")[0]["steps"][-1]]
    assert [token_id for _, token_id in item.alone] == tok.encode(text[9:10])


def test_a_selection_across_lines_includes_the_line_breaks(tok):
    text = "ab cd\r\nef gh"
    explanation = explain(tok, text, (0, 2), (1, 2))
    assert [item.text for item in explanation.chunks] == [" cd", "\r", "\n", "ef"]
    assert [item.line for item in explanation.chunks] == [0, 0, 0, 1]
    assert not explanation.cut


@pytest.mark.parametrize(
    ("column", "expected"),
    [(0, "Era"), (4, " uma"), (5, " uma"), (11, " vez"), (99, " vez")],
)
def test_an_empty_selection_explains_the_token_under_the_cursor(tok, column, expected):
    text = "Era uma vez\n"
    explanation = explain(tok, text, (0, min(column, 11)), (0, min(column, 11)))
    assert [item.text for item in explanation.chunks] == [expected]
    start, end = explanation.start, explanation.end
    token = text[start[1] : end[1]]
    assert token in [span.piece.replace("▁", " ") for span in tok.encode_spans(text)]


def test_an_empty_line_has_nothing_to_explain(tok):
    explanation = explain(tok, "a\n\nb", (1, 0), (1, 0))
    assert explanation.chunks == [] and explanation.total == 0


def test_long_selections_are_truncated_and_counted(tok):
    text = "um dois três quatro\n" * 10
    lines, start, end = whole(text)
    explanation = explain(tok, text, start, end, limit=7)
    assert len(explanation.chunks) == 7
    assert explanation.total == 50  # four words and a line break, ten times
    assert explanation.truncated
    counted = explain(tok, text, start, end, limit=7, chunk_count=lambda line: len(tok.explain(lines[line])))
    assert counted == explanation


@settings(max_examples=150, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("ab é\u0301e\u0301\r\n\t🧪.,ção\u2028"), max_size=40),
    st.data(),
)
def test_any_selection_explains_exactly_the_chunks_it_touches(tok, text, data):
    lines = split_lines(text)
    a_line = data.draw(st.integers(0, len(lines) - 1))
    b_line = data.draw(st.integers(a_line, len(lines) - 1))
    a_column = data.draw(st.integers(0, len(lines[a_line])))
    b_column = data.draw(st.integers(a_column if a_line == b_line else 0, len(lines[b_line])))
    explanation = explain(tok, text, (a_line, a_column), (b_line, b_column))
    (s_line, s_column), (e_line, e_column) = explanation.start, explanation.end
    expected = []
    for number in range(s_line, e_line + 1):
        first = s_column if number == s_line else 0
        last = e_column if number == e_line else len(lines[number])
        for item in tok.explain(lines[number]):
            if item.start < last and first < item.end:
                expected.append((number, item))
    assert [(item.line, item.explanation) for item in explanation.chunks] == expected


def test_structured_data_replays_encode_verbose(tok):
    text = "Era uma vez 🧪\n"
    explanation = explain(tok, text, (0, 1), (0, 6))
    data = explanation_data(explanation, lambda line, column: {"line": line, "character": column})
    assert data["cut"] is True
    assert data["selection"] == {"start": {"line": 0, "character": 1}, "end": {"line": 0, "character": 6}}
    chunks = data["chunks"]
    assert [c["range"] for c in chunks] == [
        {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}},
        {"start": {"line": 0, "character": 3}, "end": {"line": 0, "character": 7}},
    ]
    replay = [{"chunk": c["chunk"], "steps": [c["characters"]] + [s["pieces"] for s in c["steps"]]} for c in chunks]
    assert replay == tok.encode_verbose("Era uma")
    assert [i for c in chunks for i in c["ids"]] == tok.encode("Era uma")
    step = chunks[1]["steps"][0]
    assert step["rank"] == tok.ranks[tuple(step["pair"])]
    assert step["count"] == tok.merge_counts[step["rank"]]


def test_markdown_lists_every_step_with_rank_pair_result_and_count(tok):
    text = "Era uma vez"
    explanation = explain(tok, text, (0, 7), (0, 11))
    calls = []

    def say(key, **fields):
        calls.append((key, fields))
        return key + "|" + "|".join(f"{k}={v}" for k, v in sorted(fields.items()))

    page = render_markdown(explanation, say, lambda n: f"<{n}>", "pt", "doc.txt")
    steps = tok.explain(" vez")[0].steps
    for number, step in enumerate(steps, 1):
        assert f"{number}. explain.step|evidence=explain.count|count=<{step.count}>" in page
        assert f"rank=<{step.rank}>" in page
        assert f"left={shown(step.pair[0])}" in page and f"result={shown(step.result)}" in page
    assert f"{shown('▁vez')} ({tok.encode(' vez')[0]})" in page
    assert ("explain.header", {"document": "doc.txt", "tokenizer": "pt", "span": "1:8–1:11"}) in calls


@pytest.mark.parametrize(
    ("piece", "expected"),
    [
        ("▁vez", "`▁vez`"),
        ("\n", "`\\n`"),
        ("\r", "`\\r`"),
        ("\t\t", "`\\t\\t`"),
        ("a`b", "``a`b``"),
        ("`", "`` ` ``"),
        ("\u2028", "`⟨U+2028 LINE SEPARATOR⟩`"),
        ("\u00a0x", "`⟨U+00A0 NO-BREAK SPACE⟩x`"),
        ("\u200d", "`⟨U+200D ZERO WIDTH JOINER⟩`"),
        ("\u0301", "`◌\u0301`"),
    ],
)
def test_pieces_are_shown_as_code_with_invisible_characters_spelled_out(piece, expected):
    assert shown(piece) == expected


def test_pages_go_to_the_xdg_cache_folder_and_only_the_newest_are_kept(tmp_path, monkeypatch):
    from glassllm_server import page_files

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert page_files.cache_folder() == tmp_path / "glassllm"
    monkeypatch.setattr(page_files, "PAGES_KEPT", 3)
    paths = [page_files.write_page(f"# page {n}\n", "my notes.txt") for n in range(5)]
    assert len(set(paths)) == 5
    assert all(path.parent == tmp_path / "glassllm" and path.name.startswith("explain-my_notes-") for path in paths)
    left = sorted((tmp_path / "glassllm").iterdir())
    assert left == sorted(paths[-3:])
    assert paths[-1].read_text(encoding="utf-8") == "# page 4\n"


def test_the_english_page_marks_unknown_pieces_and_shows_a_selected_space_as_the_marker(tok):
    from glassllm_server.messages import Messages

    text = "Era 🧪 a"
    explanation = explain(tok, text, (0, 3), (0, 6))
    messages = Messages("en")
    page = render_markdown(explanation, messages, messages.integer, "Portuguese (pt)", "x.txt")
    assert "Tokens (ID): `▁` (134) · `🧪` (1, `<unk>`)" in page
    assert "The selection covers only `▁` of this chunk; on its own that would be `▁` (134)." in page
    assert page.startswith("# Explain BPE merges\n\nx.txt, selection 1:4–1:6 · tokenizer: Portuguese (pt)\n")


def test_the_page_shows_every_position_one_way_first_and_last_character_counted_from_1(tok):
    from glassllm_server.messages import Messages

    messages = Messages("en")
    text = "Era uma vez.\r\nCaiu na chuva\nfim"
    # From "na" to the end of "chuva": the selection and the chunk "▁chuva" end at the
    # same character, so the page gives both the same last column (13).
    page = render_markdown(explain(tok, text, (1, 5), (1, 13)), messages, messages.integer, "pt", "x.txt")
    assert "x.txt, selection 2:6–2:13 · tokenizer: pt\n" in page
    assert "At 2:5–2:7." in page and "At 2:8–2:13." in page
    assert page.count("counted from 1") == 1
    # A selection that ends at the start of a line ends with the line ending before it,
    # which sits right after that line's content, whatever its length ("\r\n" here).
    page = render_markdown(explain(tok, text, (0, 8), (1, 0)), messages, messages.integer, "pt", "x.txt")
    assert "x.txt, selection 1:9–1:13 · tokenizer: pt\n" in page
    # An empty selection on an empty line has no characters: the page says where it is.
    page = render_markdown(explain(tok, "a\n\nb", (1, 0), (1, 0)), messages, messages.integer, "pt", "x.txt")
    assert "x.txt, at 2:1 · tokenizer: pt\n" in page
