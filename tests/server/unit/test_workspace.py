"""The open documents' background tokenizing and the garbage collector: the tokens of a
large document are frozen once, out of the collector's way; an edit collects the garbage
made since the last one (the cycles requests leave while the user types are freed), then
freezes what is alive, so the per-line lists it copies (when a request's snapshot holds
the old version) are never walked."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

import pytest
from lsprotocol import types

from glassllm_server import workspace
from glassllm_server.line_tokenizer import OwnLineTokenizer
from glassllm_server.workspace import OpenDocuments

URI = "file:///typing.txt"
# Distinct lines and numbers: every line and many chunks make new objects.
LINES = 3000
TEXT = "".join(f"Linha {number} de um texto qualquer, com o número {number * 7}.\n" for number in range(LINES))


class _Cycle:
    def __init__(self) -> None:
        self.itself = self


@pytest.fixture
def collector(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # The document above leaves some 10,000 objects: a large one, at this scale.
    monkeypatch.setattr(workspace, "FREEZE_OBJECTS", 2 * LINES)
    gc.collect()
    yield
    gc.enable()
    gc.unfreeze()


async def _background_done() -> None:
    await asyncio.gather(*(asyncio.all_tasks() - {asyncio.current_task()}))


def _typed(documents: OpenDocuments, version: int) -> None:
    start = types.Position(line=version % LINES, character=3)
    change = types.TextDocumentContentChangePartial(range=types.Range(start=start, end=start), text="ã")
    documents.apply_changes(URI, version, [change], "utf-16")


def _young(thing: object) -> bool:
    """Whether the collector's generations (not the frozen objects) hold ``thing``."""
    return any(found is thing for found in gc.get_objects())


async def test_a_large_documents_tokens_are_frozen(collector, tokenizer: OwnLineTokenizer):
    documents = OpenDocuments()
    frozen = gc.get_freeze_count()
    document = documents.open(URI, TEXT, 1, tokenizer)
    await documents.tokenized(document)
    await _background_done()
    assert gc.isenabled()
    assert gc.get_freeze_count() - frozen >= 2 * LINES
    assert not _young(document.line_tokens(LINES // 2))


async def test_an_edits_copies_of_the_line_lists_are_frozen_at_once(collector, tokenizer: OwnLineTokenizer):
    documents = OpenDocuments()
    document = documents.open(URI, TEXT, 1, tokenizer)
    await documents.tokenized(document)
    await _background_done()
    for version in range(2, 12):
        snapshot = document.snapshot()  # a request's: the edit copies the lists
        _typed(documents, version)
        assert document.lines is not snapshot.lines
        del snapshot
        assert gc.is_tracked(document.lines)
        assert not _young(document.lines)
        await _background_done()
    assert gc.isenabled()


async def test_a_garbage_cycle_made_while_typing_is_collected_by_the_next_edit(collector, tokenizer: OwnLineTokenizer):
    documents = OpenDocuments()
    document = documents.open(URI, TEXT, 1, tokenizer)
    await documents.tokenized(document)
    await _background_done()
    for version in range(2, 5):
        cycle = _Cycle()
        gone = weakref.ref(cycle)
        del cycle
        _typed(documents, version)
        assert gone() is None  # freed before the edit froze what was alive
        await _background_done()


async def test_typing_while_a_large_document_is_tokenized_walks_none_of_its_new_objects(
    collector, tokenizer: OwnLineTokenizer, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(workspace, "FREEZE_OBJECTS", LINES // 2)
    documents = OpenDocuments()
    # Lines the tokenizer's line cache has not seen: their tokens are new objects.
    document = documents.open(URI, TEXT.replace("Linha", "Frase"), 1, tokenizer)
    await documents.tokenized(document, LINES // 2)
    assert not document.complete
    collections: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(count)
    try:
        _typed(documents, 2)
    finally:
        gc.callbacks.remove(count)
    assert collections == []
    assert not _young(document.line_tokens(LINES // 4))
    await _background_done()
    assert document.complete
