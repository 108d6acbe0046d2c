"""The comparison's pure logic (``glassllm_server.compare``), built directly, without a client."""

# The model fixtures are imported from tests/library/formats/fixtures.py (see there why), so a
# test's parameter of the same name is the fixture, not a redefinition.
# ruff: noqa: F811

from __future__ import annotations

import gc
import weakref

import pytest

from glassllm import Tokenizer, by_difference, compare, load_tokenizer, packaged
from glassllm.caches import LruCache
from glassllm.tokenizer import UNK_ID
from glassllm_server.compare import (
    ComparedCounts,
    ComparedTokenizer,
    CompareSet,
    DocumentCounts,
    compare_data,
    compare_explanation,
    default_compare_with,
)
from glassllm_server.compare_child import count_lines
from glassllm_server.compare_process import Counted
from glassllm_server.document import Document
from glassllm_server.explanation import explain_selection
from glassllm_server.line_tokenizer import ModelLineTokenizer, OwnLineTokenizer, line_tokenizer
from glassllm_server.line_tokens import LONG_LINE
from glassllm_server.messages import Messages
from glassllm_server.positions import Point
from glassllm_server.render.comparison import hover_lines, render_compare_markdown
from glassllm_server.render.markdown import code
from tests.conftest import CORPORA
from tests.library.formats.fixtures import UNKNOWN_MODEL, converted, model, model_file  # noqa: F401 (fixtures)
from tests.server.oracle import TEXTS, TRICKY, line_spans, lsp_lines

PT, EN = packaged("pt"), packaged("en")
SAY = Messages("en")
CORPORA_LINES = (CORPORA / "pt" / "heldout.txt").read_text(encoding="utf-8")[:4000]


def test_the_default_is_the_other_packaged_tokenizer():
    assert default_compare_with("pt") == ["en"]
    assert default_compare_with("en") == ["pt"]
    assert default_compare_with("/home/me/mine.json") == ["pt", "en"]


def test_whole_document_counts_are_the_sum_of_each_line():
    tok = ComparedTokenizer(EN, "en")
    for text in [*TEXTS.values(), "Once upon a time\n" * 50]:
        lines = lsp_lines(text)
        counts = tok.counts(lines)
        ids = [token_id for token_id, *_ in line_spans(EN, text)]
        chunks = sum(len(EN.chunk_spans(line)) for line in lines)
        assert counts == ComparedCounts("en", len(ids), chunks, ids.count(UNK_ID))
        assert all(line in _line_counts(tok) for line in lines)  # counted once, kept


def _line_counts(tok: ComparedTokenizer) -> LruCache[str, int]:
    own = tok.lines
    assert isinstance(own, OwnLineTokenizer)
    return own._line_counts


def test_only_lines_counted_are_kept():
    tok = ComparedTokenizer(EN, "en")
    tok.counts(["a b\n", "c\n"])
    assert [line in _line_counts(tok) for line in ["a b\n", "new\n", "c\n"]] == [True, False, True]


@pytest.mark.parametrize("per_line", [False, True], ids=["lines' texts", "the document's per-line counts"])
def test_range_counts_agree_with_the_tokens_that_overlap(per_line):
    tok = ComparedTokenizer(EN, "en")
    lines = lsp_lines(TRICKY)
    counted = DocumentCounts(len(lines)) if per_line else None
    starts = [sum(map(len, lines[:n])) for n in range(len(lines))]
    spans = line_spans(EN, TRICKY)
    for first in range(len(TRICKY) + 1):
        for last in range(first, len(TRICKY) + 1, 7):
            line_a = max(n for n in range(len(lines)) if starts[n] <= first)
            line_b = max(n for n in range(len(lines)) if starts[n] <= last)
            counts = tok.counts_in(lines, (line_a, first - starts[line_a]), (line_b, last - starts[line_b]), 0, counted)
            hit = [
                i
                for i, _, s, e in spans
                if first < last and ((s < e and s < last and e > first) or (s == e and first < s <= last))
            ]
            assert (counts.tokens, counts.unknown) == (len(hit), hit.count(UNK_ID)), (first, last)


def test_the_compare_set_asks_once_skips_the_current_and_remembers_failures():
    asked: list[str] = []
    ready = {"en": EN}

    def load(name: str, match_specials: bool) -> Tokenizer | None:
        assert not match_specials
        asked.append(name)
        return ready.get(name)

    compare_set = CompareSet()
    compared = compare_set.get(["pt", "en", "en", "/x/slow.json"], "pt", load)
    assert [tok.name for tok in compared] == ["en"] and asked == ["en", "/x/slow.json"]
    assert compare_set.get(["en"], "pt", load)[0] is compared[0]  # its caches are kept
    assert asked == ["en", "/x/slow.json"]
    compare_set.fail("/x/slow.json")
    assert compare_set.get(["/x/slow.json", "en"], "pt", load) == compared  # left out, not asked again
    assert asked == ["en", "/x/slow.json"]
    compare_set.forget_failures()  # the settings changed: the file may be fixed
    banana = Tokenizer.train("banana banana", 12)
    compare_set.add("/x/slow.json", banana)
    (loaded,) = compare_set.get(["/x/slow.json"], "pt", load)
    assert loaded.tokenizer is banana and asked == ["en", "/x/slow.json"]


def test_hover_lines_name_each_tokenizer_and_count():
    compared = [ComparedTokenizer(EN, "en"), ComparedTokenizer(Tokenizer.train("banana banana", 12), "/x/banana.json")]
    labels = {"en": "English (en)", "/x/banana.json": "file banana.json"}
    lines = hover_lines("▁menina", compared, labels.__getitem__, SAY, code)
    pieces = [span.piece for span in EN.encode_spans("▁menina")]
    assert lines[0] == f"English (en): `{'·'.join(pieces)}` — {len(pieces)} tokens"
    assert lines[1].startswith("file banana.json: `▁·m·e·n·") and lines[1].endswith(" — 7 tokens")


def test_the_page_orders_chunks_by_difference_and_escapes_table_cells():
    text = "A | menina bonita\n"
    explanation = explain_selection(PT, [text].__getitem__, (0, 0), (0, len(text) - 1))
    compared = [ComparedTokenizer(EN, "en")]
    chunks = compare_explanation(explanation, compared)
    assert [chunk.compared.pieces[1] for chunk in chunks] == [
        tuple(EN.explain(c.compared.chunk)[0].pieces) for c in chunks
    ]
    order = by_difference([chunk.compared for chunk in chunks])
    assert [chunk.spread for chunk in order] == sorted((c.compared.spread for c in chunks), reverse=True)
    totals = [ComparedCounts("pt", 6, 5, 1), ComparedCounts("en", 9, 5, 1)]
    labels = {"pt": "Portuguese (pt)", "en": "English (en)"}
    page = render_compare_markdown(
        explanation, chunks, totals, 17, labels.__getitem__, SAY, SAY.integer, SAY.decimal, "a.txt"
    )
    assert "| Portuguese (pt) | 6 | 5 | 1 | 2.8 |" in page
    assert "`\\|` (1, `<unk>`)" in page  # a "|" would end the table cell
    first = order[0].chunk
    assert f"## Chunk 1: `{first}`" in page
    assert "Every tokenizer splits it the same way." in page
    # Positions as everywhere a person reads them: line:column from 1, ends included.
    assert "a.txt, selection 1:1–1:17" in page
    assert "At 1:4–1:10." in page  # ▁menina


def test_the_page_and_glassllm_compare_agree_on_the_most_different_chunks():
    text = "A menina comeu maçãs, três vezes, com 🧪 e café.\n"
    explanation = explain_selection(PT, [text].__getitem__, (0, 0), (0, len(text) - 1))
    chunks = compare_explanation(explanation, [ComparedTokenizer(EN, "en")])
    data = compare_data(chunks, [ComparedCounts("pt", 0, 0, 0), ComparedCounts("en", 0, 0, 0)], lambda *p: {})
    library = compare(text, {"pt": PT, "en": EN})
    differing = [chunk.index for chunk in library.most_different()]
    assert len(differing) > 3
    assert data["mostDifferent"][: len(differing)] == differing
    assert sorted(data["mostDifferent"]) == list(range(len(chunks)))  # the page lists every chunk


def test_document_counts_follow_edits_and_count_only_what_changed():
    text = "Era uma vez\numa menina\r\nbonita 🧪\n" * 20
    document = Document("file:///a.txt", text, 1, line_tokenizer(PT, "pt"))
    tok = ComparedTokenizer(EN, "en")
    counts = tok.document(document)
    assert tok.document(document) is counts
    assert counts.count_pending(tok, document.lines, 5) is False  # five lines at a time
    assert counts.count_pending(tok, document.lines, 10**6) is True
    ids = EN.encode(text)
    chunks = len(EN.chunk_spans(text))
    assert counts.totals("en") == ComparedCounts("en", len(ids), chunks, ids.count(UNK_ID))
    edits = [
        (Point(4, 3), Point(7, 1), "x\ny 🧪 z\r"),
        (Point(0, 0), Point(0, 0), "Olá\n"),
        (Point(10, 2), Point(10, 2), ""),
    ]
    for start, end, inserted in edits:
        before, snapshot = document.text, document.snapshot()
        document.apply_change(start, end, inserted)
        counts = tok.document(document)
        # Only the edited lines (and one on each side) lack a count in the next version.
        assert counts.count_pending(tok, document.lines, 8) is True
        ids = EN.encode(document.text)
        chunks = len(EN.chunk_spans(document.text))
        assert counts.totals("en") == ComparedCounts("en", len(ids), chunks, ids.count(UNK_ID))
        # A snapshot taken before the edit keeps the counts of its own text.
        assert tok.document(snapshot).totals("en").tokens == len(EN.encode(before))
    document.replace_text("")
    counts = tok.document(document)
    counts.count_pending(tok, document.lines, 10**6)
    assert counts.totals("en").tokens == 0


def test_a_keystroke_leaves_only_its_own_line_to_count_again():
    document = Document("file:///a.txt", "Era uma vez\numa menina\r\nbonita\n" * 3, 1, line_tokenizer(PT, "pt"))
    tok = ComparedTokenizer(EN, "en")
    tok.document(document).count_pending(tok, document.lines, 10**6)
    document.apply_change(Point(4, 3), Point(4, 3), "x")  # the edit replaces lines 3 to 5
    counts = tok.document(document)
    assert counts.count_pending(tok, document.lines, 1) is True
    ids = EN.encode(document.text)
    chunks = len(EN.chunk_spans(document.text))
    assert counts.totals("en") == ComparedCounts("en", len(ids), chunks, ids.count(UNK_ID))


def test_document_counts_are_edited_in_place_unless_another_version_shares_them():
    text = "Era uma vez\numa menina\n" * 10
    document = Document("file:///a.txt", text, 1, line_tokenizer(PT, "pt"))
    tok = ComparedTokenizer(EN, "en")
    tok.document(document).count_pending(tok, document.lines, 10**6)
    snapshot = document.snapshot()
    document.set_tokenizer(line_tokenizer(EN, "en"))
    assert tok.document(document) is tok.document(snapshot)  # the same lines, the same counts
    document.apply_change(Point(3, 0), Point(3, 0), "novo\n")
    counts = tok.document(document)
    assert counts.count_pending(tok, document.lines, 10**6) is True
    assert counts.totals("en").tokens == len(EN.encode(document.text))
    assert tok.document(snapshot).count_pending(tok, snapshot.lines, 10**6) is True
    assert tok.document(snapshot).totals("en").tokens == len(EN.encode(text))
    del snapshot
    kept = counts._counts
    document.apply_change(Point(0, 0), Point(0, 0), "x")
    counts = tok.document(document)
    assert counts._counts is kept  # nothing else held them: no copy
    assert counts.count_pending(tok, document.lines, 10**6) is True
    assert counts.totals("en").tokens == len(EN.encode(document.text))


def test_a_tokenizer_no_longer_compared_lets_go_of_its_document_counts():
    document = Document("file:///b.txt", "um\ndois\n", 1, line_tokenizer(PT, "pt"))
    tok = ComparedTokenizer(EN, "en")
    gone = weakref.ref(tok.document(document))
    del tok
    gc.collect()
    assert gone() is None
    document.apply_change(Point(0, 0), Point(0, 0), "x")  # the lingering listener is harmless
    assert document.text == "xum\ndois\n"


def test_a_long_line_is_counted_and_its_ranges_are_counted_by_segments_as_whole():
    line = "Era uma vez uma menina, cafe\u0301 🧪 e mais.  Outra frase " * 150 + "\n"
    assert len(line) > LONG_LINE
    tok = ComparedTokenizer(EN, "en")
    ids = EN.encode(line)
    chunks = len(EN.chunk_spans(line))
    assert tok.lines.count_block([line], False) == (len(ids) + (ids.count(UNK_ID) << 32) + (chunks << 64),)
    spans = EN.encode_spans(line)
    for low, high in [(0, 10), (5000, 5003), (LONG_LINE - 7, 2 * LONG_LINE), (len(line) - 5, len(line)), (3, 3)]:
        touched = [
            span
            for span in spans
            if (low < span.start <= high if span.start == span.end else span.start < high and span.end > low)
        ]
        counted = tok.counts_in([line], (0, low), (0, high), 0)
        assert (counted.tokens, counted.unknown) == (len(touched), sum(span.id == UNK_ID for span in touched))


@pytest.mark.parametrize("name", ["llama3", "gpt4o", "mistral-v7", "tekken", UNKNOWN_MODEL])
def test_a_models_line_is_counted_from_its_chunks_ids_as_from_its_spans(model, name):
    """A block of one line is counted from ``encode_chunks``: the same tokens, unknown
    tokens and chunks as counting its spans."""
    lines = line_tokenizer(model(name), name)
    assert isinstance(lines, ModelLineTokenizer)
    texts = [*TEXTS.values(), "<|begin_of_text|>[INST] oi [/INST]</s>\n", "猫⿰ ☃\t\n", "  \n"]
    for line in [*texts, *lsp_lines(TRICKY), *lsp_lines(CORPORA_LINES)]:
        for at_start in (True, False):
            assert lines.count_block([line], at_start) == lines._lines_counts([line], line, at_start), line


def test_only_bounded_caches_grow_with_new_text():
    """Issue 21: every container of a compared tokenizer that grows with new text is a
    bounded LruCache."""
    from tests.library.test_caches import new_words, sizes

    compared = ComparedTokenizer(packaged("en"), "en")
    compared.lines.count_block(["warm\n"], False)
    owners = (compared, compared.lines)
    before = [sizes(owner) for owner in owners]
    for line in new_words(300).split():
        compared.lines.count_block([line + "\n"], False)
        compared.chunk(line)
    for owner, sizes_before, names in zip(
        owners, before, [{"_chunks"}, {"_line_counts", "_chunk_counts"}], strict=True
    ):
        after = sizes(owner)
        grew = {name for name in after if after[name] != sizes_before[name]}
        assert grew == names
        assert all(isinstance(getattr(owner, name), LruCache) for name in grew)


@pytest.mark.parametrize("real", [False, True], ids=["pt", "llama3"])
def test_counts_from_elsewhere_and_settled_by_text_equal_those_counted_here(real):
    # What a child process counts (compare_child.count_lines) and what an edited version
    # takes from it by text (Counted.settle's put_known) equal the counts made here.
    tokenizer = load_tokenizer(model_file("llama3")) if real else packaged("pt")
    tok = ComparedTokenizer(tokenizer, "compared")
    text = "".join(TEXTS) + "Era uma vez.\n\n\n  coisa\r\n\r\nfim\n" * 3
    lines = lsp_lines(text)
    document = Document("file:///a.txt", text, 1, line_tokenizer(packaged("pt"), "pt"))
    state = tok.document(document)
    first = state.count_block(tok, lines, 0)  # the lines sent start at a cut
    counts, cuts = count_lines(tok.lines, lines[first:], False)
    assert (cuts is None) == (not real)
    assert state.pending_run() == (first, len(lines))
    state.put_counted(first, counts, cuts)
    assert state.pending_run() == (len(lines), len(lines))
    assert state.totals("compared") == tok.counts(lines)
    counted = Counted(tok, lines[first:], first, counts, cuts)
    known = counted.known()
    # The next version: two lines replaced by a blank one.
    snapshot = document.snapshot()
    document.apply_change(Point(3, 0), Point(5, 0), "\n")
    edited = tok.document(document)
    line = edited.next_pending(0)
    while line < len(document.lines):
        line = edited.next_pending(edited.put_known(tok, document.lines, line, known))
    edited.count_pending(tok, document.lines, len(document.lines))
    assert edited.totals("compared") == tok.counts(document.lines)
    assert tok.document(snapshot).totals("compared") == tok.counts(lines)
