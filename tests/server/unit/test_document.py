"""A document's tokens without a server: agreement with the library, edits, lookups, stats."""

from __future__ import annotations

import itertools
from bisect import bisect_right
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glassllm import packaged
from glassllm.tokenizer import UNK_ID
from glassllm_server import line_tokenizer as line_tokenizer_module
from glassllm_server import line_tokens as line_tokens_module
from glassllm_server.compare import ComparedTokenizer
from glassllm_server.document import Document, ReadOnlyDocument, Stats
from glassllm_server.line_tokenizer import OwnLineTokenizer, line_tokenizer
from glassllm_server.positions import LineIndex, Point
from tests.server.oracle import TEXTS, TRICKY, lsp_lines


def point_of(index, offset):
    """The line and code-point column of an offset into the text (the server works in points)."""
    line = bisect_right(index.starts, offset, 0, len(index.lines)) - 1
    return Point(line, offset - index.starts[line])


def whole(document):
    return Point(0, 0), Point(len(document.lines) - 1, len(document.lines[-1]))


class Placed(NamedTuple):
    id: int
    piece: str
    start_point: Point
    end_point: Point
    index: int


def every_token(document):
    """Every token of the document with its points and its index in the document: the
    spans of the whole text, numbered from the tokens before each line."""
    return [
        Placed(
            span.id, span.piece, Point(line, span.start), Point(line, span.end), document.tokens_before(line) + number
        )
        for line, number, span in document.spans_in(*whole(document))
    ]


def as_offsets(document, tokens):
    index = LineIndex(document.lines)
    return [
        (token.id, token.piece, index.point_offset(token.start_point), index.point_offset(token.end_point))
        for token in tokens
    ]


def library_spans(tokenizer, text):
    """``encode_spans`` of each LSP line, shifted to document offsets.

    Line by line gives the same IDs and pieces as the whole text (asserted here too);
    offsets can only differ where the library maps a line break and a combining mark
    after it as one NFC run, which a line-based editor cannot show.
    """
    spans, start = [], 0
    for line in lsp_lines(text):
        spans.extend(
            (span.id, span.piece, start + span.start, start + span.end)
            for span in tokenizer.tokenizer.encode_spans(line)
        )
        start += len(line)
    whole_text = [(span.id, span.piece) for span in tokenizer.tokenizer.encode_spans(text)]
    assert [(token_id, piece) for token_id, piece, _, _ in spans] == whole_text
    return spans


_characters = st.sampled_from(list("ab é\u0301\u0958🙂猫\t\r\n\x0c\u2028▁_.,!🧪\u200d"))
_texts = st.text(alphabet=_characters, max_size=40)


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_tokens_agree_with_encode_spans(tokenizer, name):
    text = TEXTS[name]
    document = Document("u", text, 1, tokenizer)
    tokens = every_token(document)
    assert as_offsets(document, tokens) == library_spans(tokenizer, text)
    assert [token.index for token in tokens] == list(range(len(tokens)))


@settings(max_examples=200, deadline=None)
@given(_texts)
def test_tokens_agree_with_encode_spans_on_any_text(tokenizer, text):
    document = Document("u", text, 1, tokenizer)
    tokens = every_token(document)
    assert as_offsets(document, tokens) == library_spans(tokenizer, text)
    spans = tokenizer.tokenizer.encode_spans(text)
    expected_chunks = len({span.chunk for span in spans})
    assert document.stats() == Stats(len(spans), expected_chunks, len(text), sum(span.id == UNK_ID for span in spans))


@settings(max_examples=200, deadline=None)
@given(_texts, st.data())
def test_an_edit_gives_the_same_tokens_as_opening_the_result(tokenizer, text, data):
    document = Document("u", text, 1, tokenizer)
    document.stats()  # tokenize everything first, so the edit must update the totals
    length = len(text)
    start = data.draw(st.integers(0, length))
    end = data.draw(st.integers(start, length))
    inserted = data.draw(_texts)
    index = LineIndex(document.lines)
    document.apply_change(point_of(index, start), point_of(index, end), inserted)
    assert_missing_is_counted(document)
    expected = text[:start] + inserted + text[end:]
    assert document.text == expected
    fresh = Document("u", expected, 2, tokenizer)
    assert document.lines == fresh.lines
    assert document.stats() == fresh.stats()
    assert_missing_is_counted(document)
    assert as_offsets(document, every_token(document)) == library_spans(tokenizer, expected)


@settings(max_examples=150, deadline=None)
@given(_texts, st.data())
def test_snapshots_held_across_edits_keep_their_text_tokens_and_compared_counts(tokenizer, text, data):
    """An edit changes the per-line lists in place only when no snapshot holds them."""
    compared = ComparedTokenizer(packaged("en"), "en")
    document = Document("u", text, 1, tokenizer)
    held: list[tuple[ReadOnlyDocument, str]] = []
    for _ in range(6):
        requests_between_edits(document, compared, held, data)
        length = len(document.text)
        start = data.draw(st.integers(0, length))
        end = data.draw(st.integers(start, length))
        index = LineIndex(document.lines)
        document.apply_change(point_of(index, start), point_of(index, end), data.draw(_texts))
    for kept, kept_text in [*held, (document, document.text)]:
        assert kept.text == kept_text
        tokens = every_token(kept)
        assert as_offsets(kept, tokens) == library_spans(tokenizer, kept_text)
        assert [token.index for token in tokens] == list(range(len(tokens)))
        assert_missing_is_counted(kept)
        counts = compared.document(kept)
        assert counts.count_pending(compared, kept.lines, 10**6)
        assert counts.totals("en").tokens == len(compared.tokenizer.encode(kept_text))


def requests_between_edits(
    document: Document, compared: ComparedTokenizer, held: list[tuple[ReadOnlyDocument, str]], data: st.DataObject
) -> None:
    """What requests may do between two edits: take a snapshot (``held``, with its text),
    let one go, tokenize and count the document now (or leave it for later), ask the
    index of a token on its last line (which sums the tokens of every line above)."""
    if data.draw(st.booleans()):
        held.append((document.snapshot(), document.text))
    if held and data.draw(st.booleans()):
        held.pop(data.draw(st.integers(0, len(held) - 1)))
    if data.draw(st.booleans()):
        document.stats()
        compared.document(document).count_pending(compared, document.lines, 10**6)
    if data.draw(st.booleans()):
        document.tokens_before(len(document.lines) - 1)


def assert_missing_is_counted(document: Document) -> None:
    """The count of lines without tokens, which spares the search for them, is exact."""
    version = document._version
    assert version.gaps.count == version.tokens.count(None)


def test_an_edit_changes_the_lists_in_place_unless_a_snapshot_shares_them(tokenizer):
    document = Document("u", "um\ndois\ntrês\nquatro\n", 1, tokenizer)
    document.stats()
    lines = document.lines
    document.apply_change(Point(3, 0), Point(3, 0), "x")
    assert document.lines is lines  # nothing held the old version: no copy
    snapshot = document.snapshot()
    document.apply_change(Point(0, 0), Point(0, 0), "y\n")
    assert snapshot.lines is lines
    assert snapshot.text == "um\ndois\ntrês\nxquatro\n"
    assert snapshot.stats() == Document("u", snapshot.text, 1, tokenizer).stats()
    assert document.text == "y\num\ndois\ntrês\nxquatro\n"
    assert document.stats() == Document("u", document.text, 1, tokenizer).stats()
    del snapshot
    lines = document.lines
    document.apply_change(Point(0, 0), Point(0, 0), "z")
    assert document.lines is lines
    assert_missing_is_counted(document)


def test_after_a_tokenizer_switch_an_edit_leaves_an_older_snapshot_its_text(tokenizer):
    document = Document("u", "um\ndois\n", 1, tokenizer)
    snapshot = document.snapshot()
    document.set_tokenizer(line_tokenizer(packaged("en"), "en"))
    document.apply_change(Point(0, 0), Point(0, 0), "x")
    assert snapshot.text == "um\ndois\n"
    assert snapshot.stats() == Document("u", "um\ndois\n", 1, tokenizer).stats()
    assert document.text == "xum\ndois\n"


def test_the_lines_of_a_keystroke_take_their_chunks_from_the_lines_they_replace(monkeypatch):
    """A chunk typed long ago may have left the chunk cache: the edited line finds its
    unchanged chunks in the line it replaces, and tokenizes only the changed one."""
    tokenizer = OwnLineTokenizer(packaged("pt"), "pt")
    document = Document("u", "Era uma vez um gato\nque miava\nà noite\n", 1, tokenizer)
    document.stats()
    tokenizer._chunks.clear()
    tokenizer._lines.clear()
    made: list[str] = []
    chunk = OwnLineTokenizer._chunk
    monkeypatch.setattr(OwnLineTokenizer, "_chunk", lambda self, text: made.append(text) or chunk(self, text))
    document.apply_change(Point(1, 4), Point(1, 4), "x")
    assert document.complete  # a keystroke's lines are tokenized at once
    assert made == ["▁xmiava"]
    assert document.stats() == Document("u", document.text, 1, line_tokenizer(packaged("pt"), "pt")).stats()


def test_inserting_a_newline_after_a_lone_cr_makes_one_crlf_line_break(tokenizer):
    document = Document("u", "ab\rcd", 1, tokenizer)
    document.apply_change(Point(1, 0), Point(1, 0), "\n")
    assert document.lines == ["ab\r\n", "cd"]
    document.apply_change(Point(0, 2), Point(0, 2), "x")
    assert document.lines == ["abx\r\n", "cd"]


def test_full_replacement_and_tokenizer_switch(tokenizer):
    document = Document("u", "Era uma vez", 1, tokenizer)
    assert document.stats().tokens == 4
    document.replace_text("")
    assert document.lines == [""]
    assert document.stats() == Stats(0, 0, 0, 0)
    document.replace_text("Once upon a time")
    english = line_tokenizer(packaged("en"), "en")
    document.set_tokenizer(english)
    assert as_offsets(document, every_token(document)) == library_spans(english, "Once upon a time")


def test_token_at_each_character_of_the_tricky_document(tokenizer):
    document = Document("u", TRICKY, 1, tokenizer)
    index = LineIndex(document.lines)
    spans = tokenizer.tokenizer.encode_spans(TRICKY)
    for offset in range(len(TRICKY)):
        token = document.token_at(point_of(index, offset))
        holder = next(number for number, span in enumerate(spans) if span.start <= offset < span.end)
        assert token is not None
        assert token.index == holder
        assert (index.point_offset(token.start_point), index.point_offset(token.end_point)) == (
            spans[holder].start,
            spans[holder].end,
        )
        assert token.chunk.pieces[token.piece_index] == token.piece
    assert document.token_at(point_of(index, len(TRICKY))) is None


def test_composed_accent_is_one_token_covering_both_code_points(tokenizer):
    document = Document("u", "cafe\u0301", 1, tokenizer)
    token = document.token_at(Point(0, 4))  # the combining accent
    assert token is not None and "é" in token.piece
    assert token.end == 5
    assert document.lines[0][token.start : token.end].endswith("e\u0301")


def test_range_stats_count_tokens_cut_by_the_edges(tokenizer):
    document = Document("u", "Era uma vez\nna terra\n", 1, tokenizer)
    # "Era" is E + ra, "▁uma", "▁vez", "\n", "na", "▁terra", "\n"
    assert document.stats(Point(0, 1), Point(0, 5)) == Stats(tokens=2, chunks=2, characters=4, unknown=0)  # ra ▁uma
    assert document.stats(Point(0, 0), Point(0, 0)) == Stats(0, 0, 0, 0)
    assert document.stats(Point(0, 11), Point(1, 1)) == Stats(tokens=2, chunks=2, characters=2, unknown=0)
    assert document.stats(Point(1, 0), Point(2, 0)) == document.stats(Point(1, 0), Point(1, 9))


@settings(max_examples=100, deadline=None)
@given(_texts, st.data())
def test_range_stats_match_the_library_spans_that_overlap(tokenizer, text, data):
    document = Document("u", text, 1, tokenizer)
    index = LineIndex(document.lines)
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    spans, base = [], 0  # (id, start, end, chunk) from the library, line by line
    for number, line in enumerate(lsp_lines(text)):
        spans.extend(
            (s.id, base + s.start, base + s.end, (number, s.chunk)) for s in tokenizer.tokenizer.encode_spans(line)
        )
        base += len(line)
    touched = [
        (token_id, first, last, chunk)
        for token_id, first, last, chunk in spans
        if start < end and (start < first <= end if first == last else first < end and last > start)
    ]
    stats = document.stats(point_of(index, start), point_of(index, end))
    assert stats.tokens == len(touched)
    assert stats.characters == end - start
    assert stats.unknown == sum(token_id == UNK_ID for token_id, _, _, _ in touched)
    assert stats.chunks == len({chunk for _, _, _, chunk in touched})


def test_background_style_tokenizing_is_incremental(tokenizer):
    text = "linha um\n" * 50
    document = Document("u", text, 1, tokenizer)
    assert not document.complete
    assert not document.tokenize_pending(10)
    assert document.tokenized_through(9) and not document.tokenized_through(10)
    assert document.tokens_before(30) == 30 * len(tokenizer.tokenizer.encode("linha um\n"))
    assert document.tokenize_pending(1000)
    assert document.complete


# Long lines are tokenized in segments cut where neither NFC nor the chunk rule can join
# the two sides. The limits are made tiny here so that short texts are cut everywhere.
_spaced = st.lists(st.sampled_from([*list("ab  é́🙂猫\t\r\n▁_.,!\u200d"), "  ", " ́", "é ", "ä"]), max_size=40).map(
    "".join
)


@pytest.fixture()
def tiny_segments(monkeypatch):
    # Where the limits are read (line_tokenizer imports LONG_LINE by name).
    monkeypatch.setattr(line_tokenizer_module, "LONG_LINE", 12)
    monkeypatch.setattr(line_tokens_module, "SEGMENT", 4)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_spaced, edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6), _spaced), max_size=4))
def test_long_lines_in_segments_give_the_library_tokens_before_and_after_edits(tiny_segments, text, edits):
    tokenizer = line_tokenizer(packaged("pt"), "pt")
    document = Document("u", text, 1, tokenizer)
    document.stats()
    for first, second, inserted in edits:
        current = document.text
        start, end = sorted((first % (len(current) + 1), second % (len(current) + 1)))
        index = LineIndex(document.lines)
        if "\r\n" in (current[start - 1 : start + 1], current[end - 1 : end + 1]):
            continue  # no position lies between "\r" and "\n"
        document.apply_change(point_of(index, start), point_of(index, end), inserted)
        expected = current[:start] + inserted + current[end:]
        assert document.text == expected
        assert document.stats() == Document("u", expected, 2, tokenizer).stats()
        assert as_offsets(document, every_token(document)) == library_spans(tokenizer, expected)
        for line in range(len(document.lines)):
            if len(document.lines[line]) > 12:
                # Every token is found from its columns, as hovers find them.
                for span in document.line_spans(line):
                    if span.start < span.end:
                        found = document.span_at(Point(line, span.start))
                        assert found is not None and found[1] == span


def test_a_long_line_is_cut_only_at_safe_places():
    text = "palavra " * 2000 + "x" * 5000 + "  ▁ fim"
    bounds = line_tokens_module.segment_bounds(text)
    assert bounds[0] == 0 and bounds[-1] == len(text)
    cuts = bounds[1:-1]
    assert cuts and all(text[cut] == " " and text[cut - 1] not in " ▁" for cut in cuts)
    assert max(b - a for a, b in itertools.pairwise(bounds)) < 3 * line_tokens_module.SEGMENT + 5000


def test_background_tokenizing_goes_through_a_long_line_in_short_slices(tokenizer):
    text = "linha curta\n" + "palavra e\u0301 outra, " * 2000 + "\nfim"
    document = Document("u", text, 1, tokenizer)
    slices = 1
    while not document.tokenize_for(0.0005):
        slices += 1
    assert slices > 3  # the long line did not go in one slice
    assert as_offsets(document, every_token(document)) == library_spans(tokenizer, text)


def test_only_bounded_caches_grow_while_typing():
    """Issue 21: a day of typing makes new lines and chunks without end; every container
    of the line tokenizer that grows with them is a bounded LruCache."""
    from glassllm.caches import LruCache
    from tests.library.test_caches import new_words, sizes

    tokenizer = OwnLineTokenizer(packaged("pt"), "pt")
    tokenizer.line("warm\n")
    before = sizes(tokenizer)
    document = Document("file:///typing.txt", "uma vez\n" * 50, 1, tokenizer)
    for number, word in enumerate(new_words(300).split()):
        document.apply_change(Point(number % 50, 0), Point(number % 50, 0), word)
        document.line_tokens(number % 50)
    after = sizes(tokenizer)
    grew = {name for name in after if after[name] != before[name]}
    assert grew == {"_chunks", "_lines"}
    assert all(isinstance(getattr(tokenizer, name), LruCache) for name in grew)
    assert tokenizer._lines.limit == line_tokenizer_module.LINE_CACHE_CHARACTERS
    assert tokenizer._chunks.limit == line_tokenizer_module.CHUNK_CACHE_LIMIT


def test_a_snapshot_has_no_way_to_change_the_document(tokenizer):
    document = Document("u", "uma vez\noutra vez\n", 3, tokenizer)
    snapshot = document.snapshot()
    assert type(snapshot) is ReadOnlyDocument
    for edit in ("apply_change", "replace_text", "set_tokenizer", "set_version", "focus", "snapshot"):
        assert not hasattr(snapshot, edit), edit
    with pytest.raises(AttributeError):
        snapshot.focus_line = 1  # type: ignore[misc]
    with pytest.raises(AttributeError):
        snapshot.version = 4  # type: ignore[misc]
    # The live document moves the focus for its snapshots too (one cell).
    document.focus(1)
    document.set_version(4)
    assert snapshot.focus_line == 1 and snapshot.version == 3 and document.version == 4
