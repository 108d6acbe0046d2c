"""The line under the title of a page opened in the browser: which document, which
selection, which tokenizer, and whether the page shows less than the selection."""

from __future__ import annotations

from collections.abc import Callable

from glassllm.shown.places import place
from glassllm.shown.places import span as shown_span
from glassllm_server.explanation import Explanation
from glassllm_server.messages import Say
from glassllm_server.render.explanation import selection_header

__all__ = ["page_note"]


def page_note(
    kind: str, explanation: Explanation, say: Say, number: Callable[[int], str], document: str, tokenizer: str
) -> str:
    """The note for the ``kind`` ("explain" or "compare") page of ``explanation``, worded
    as the server's own page words its header."""
    if kind == "explain":
        parts = [selection_header(explanation, say, tokenizer, document)]
    elif explanation.last is None:
        parts = [say("compare.header_at", document=document, at=place(*explanation.start))]
    else:
        parts = [say("compare.header", document=document, span=shown_span(explanation.start, explanation.last))]
    if explanation.truncated:
        parts.append(say("explain.truncated", shown=number(len(explanation.chunks)), chunks=number(explanation.total)))
    if explanation.cut:
        parts.append(say("explain.cut"))
    return " ".join(parts)
