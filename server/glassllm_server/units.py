"""The units a document is counted in (:class:`~glassllm_server.counted.CountedUnit`):
the whole document, or one per line of a JSONL dataset of ``{"text": …}`` records.

:func:`counted_units` is the one place that decides, by the document's kind. A plain
document counted with its own tokenizer is read from its tokens (kept up to date while
typing); counted with another tokenizer (a budget may name one), or for a record's text
(what a model receives is the decoded string, not its JSON source), the text is encoded
here and each token's code-point offsets are mapped back to the document: through the
record's escapes (:mod:`glassllm_server.json_strings`) for a record. No pygls here.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence

from glassllm.pipeline.any_tokenizer import AnyTokenizer
from glassllm_server.counted import CountedUnit
from glassllm_server.document import ReadOnlyDocument
from glassllm_server.positions import Point

__all__ = ["DocumentUnit", "TextUnit", "counted_units"]


class DocumentUnit:
    """The whole document, counted with its own tokens."""

    template_count = 0
    first_line = 0

    def __init__(self, document: ReadOnlyDocument) -> None:
        self.document = document
        self.count = document.stats().tokens

    def token_range(self, index: int) -> tuple[Point, Point]:
        document = self.document
        # The last line whose tokens before it are at most ``index``: the token starts there.
        line = bisect_right(range(len(document.lines)), index, key=document.tokens_before) - 1
        tokens = document.line_tokens(line)
        number = index - document.tokens_before(line)
        span = tokens.spans()[number - tokens.first]
        if tokens.crosses_lines and span.end == len(document.lines[line]):
            (first_line, first_column), (last_line, last_column) = tokens.extent(number)
            return Point(line + first_line, first_column), Point(line + last_line, last_column)
        return Point(line, span.start), Point(line, span.end)


class TextUnit:
    """A text encoded here: its tokens' code-point offsets, placed in the document by
    ``locate`` (an offset in the text to its document point)."""

    template_count = 0

    def __init__(
        self, starts: Sequence[int], ends: Sequence[int], first_line: int, locate: Callable[[int], Point]
    ) -> None:
        self.starts = starts
        self.ends = ends
        self.first_line = first_line
        self.locate = locate

    @property
    def count(self) -> int:
        return len(self.starts)

    def token_range(self, index: int) -> tuple[Point, Point]:
        return self.locate(self.starts[index]), self.locate(self.ends[index])


def counted_units(document: ReadOnlyDocument, tokenizer: AnyTokenizer | None = None) -> list[CountedUnit]:
    """What ``document`` is counted in, with ``tokenizer`` (None: the document's own):
    the whole document, as ``glassllm tokens`` counts a file."""
    return [whole_document(document, tokenizer)]


def whole_document(document: ReadOnlyDocument, tokenizer: AnyTokenizer | None) -> CountedUnit:
    """The whole document as one unit; its own tokens when ``tokenizer`` is None."""
    if tokenizer is None:
        return DocumentUnit(document)
    spans = tokenizer.encode_spans(document.text)
    starts = document.index.starts

    def locate(offset: int) -> Point:
        line = max(bisect_right(starts, offset) - 1, 0)
        return Point(min(line, len(document.lines) - 1), offset - starts[min(line, len(document.lines) - 1)])

    return TextUnit(tuple(span.start for span in spans), tuple(span.end for span in spans), 0, locate)
