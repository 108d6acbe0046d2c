"""A stateful property test over the real server: random incremental edits on tricky
text, in each client's position encoding, against a model of the text.

After each step the server's ``glassllm/stats`` (whole and of a random range), its
semantic tokens and hovers at random places equal what the library computes on the
model text — with glassllm's own tokenizer, and with real models' (Llama 3, whose
pre-tokenizer crosses line breaks; Mistral's SentencePiece, whose dummy prefix opens the
text only; the Metaspace tokenizer.json HF converts it to) as the document's tokenizer,
the library's tokens of the whole text as the oracle. Hypothesis drives the machine from
a worker thread; every exchange with the server runs on the test's event loop, where the
pytest-lsp client lives.
"""

# The converted fixture is imported from tests/library/formats/fixtures.py (see there why), so a
# test's parameter of that name is the fixture, not a redefinition.
# ruff: noqa: F811

from __future__ import annotations

import asyncio
import functools
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test
from lsprotocol import types

from glassllm import AnyTokenizer, load_tokenizer, packaged
from tests.library.formats.fixtures import CONVERTED, converted, model_file  # noqa: F401 (the converted fixture)
from tests.server.oracle import covered, every_offset, lsp_lines, position_of, range_of
from tests.server.session import LOOP, GlassClient, change_document, configure_and_wait, markdown, open_document, stats

pytestmark = LOOP

# Decomposed accents and stray marks, emoji with ZWJ (surrogate pairs in UTF-16), CJK,
# tabs, CRLF, lone CR and LF, U+2028, characters the tokenizer does not know, runs of
# spaces, and a long line.
FRAGMENTS = [
    "Era",
    "uma",
    "vez",
    "ca",
    "fe\u0301",
    "e\u0301",
    "\u0301",
    "n\u0303",
    "\u00e7",
    " ",
    " ",
    "  ",
    "   ",
    "\t",
    "\r\n",
    "\r",
    "\n",
    "\u2028",
    "\x0c",
    "🙂",
    "👩\u200d👩\u200d👧",
    "猫",
    "漢字",
    "🧪",
    "Ω",
    ".",
    "—",
    "12",
    "_",
    # What a real model's pre-tokenizer joins across a line break.
    ".\n\n",
    "  \n",
    "\n  ",
    "\r\n\r\n",
    "<|endoftext|>",
]
# Long lines for the text opened (edits insert short text, so the time stays bounded):
# the last is past the server's long-line limit (4,096 characters), tokenized in segments.
LONG_FRAGMENTS = ["palavra " * 120, "palavra cafe\u0301 " * 222]
fragments = st.lists(st.sampled_from(FRAGMENTS), max_size=8).map("".join)
texts = st.lists(st.sampled_from(FRAGMENTS + LONG_FRAGMENTS), max_size=8).map("".join)


# The tokenizer the machine runs with (set by the test), as the library reads it.
TOK: AnyTokenizer = packaged("pt")


@functools.lru_cache(maxsize=4)
def library_spans(tok: AnyTokenizer, text: str) -> list[tuple[int, int, int, tuple[int, int]]]:
    """``(id, start, end, (line, chunk))`` of every token (kept for the last few texts:
    several checks follow each edit). glassllm's own, line by line; a real model's, of
    the whole text (its chunks can cross a line break)."""
    if not isinstance(tok, type(packaged("pt"))):
        return [(s.id, s.start, s.end, (0, s.chunk)) for s in tok.encode_spans(text)]
    spans, base = [], 0
    for number, line in enumerate(lsp_lines(text)):
        spans.extend((s.id, base + s.start, base + s.end, (number, s.chunk)) for s in tok.encode_spans(line))
        base += len(line)
    return spans


def expected_bands(tok: AnyTokenizer, text: str) -> list[tuple[int, str]]:
    """(line, text) of each band: every token's part on each line it reaches, without
    the line ending, empty NFC leftovers or a character a token before already holds."""
    lines = lsp_lines(text)
    starts = [sum(map(len, lines[:number])) for number in range(len(lines) + 1)]
    found = []
    covered_until = [0] * len(lines)
    for _, start, end, _ in library_spans(tok, text):
        for number, line in enumerate(lines):
            content_end = starts[number] + len(line.rstrip("\r\n"))
            low, high = max(start, starts[number]), min(end, content_end)
            if low < high and low >= covered_until[number] + starts[number]:
                found.append((number, text[low:high]))
                covered_until[number] = high - starts[number]
    return sorted(found, key=lambda band: band[0])


def expected_stats(text: str, start: int, end: int) -> dict[str, int]:
    """Counts of the tokens and chunks that overlap ``[start, end)`` (a token NFC left
    empty goes with the character it ends), from the library."""
    spans = library_spans(TOK, text)
    touched = [
        (token_id, chunk)
        for token_id, first, last, chunk in spans
        if start < end and (start < first <= end if first == last else first < end and last > start)
    ]
    return {
        "tokens": len(touched),
        "chunks": len({chunk for _, chunk in touched}),
        "characters": end - start,
        "unknown": sum(token_id == TOK.unk_id for token_id, _ in touched),
    }


def decoded_bands(text: str, data: list[int], encoding: str) -> list[tuple[int, str]]:
    """(line, covered text) of each band: ``tests.server.oracle.bands`` with each
    line's code-unit offsets counted once (that one recounts the text per band)."""
    lines = lsp_lines(text)
    columns: dict[int, dict[int, int]] = {}

    def column(line: int, units: int) -> int:
        if line not in columns:
            counted, total = {0: 0}, 0
            for index, character in enumerate(lines[line].rstrip("\r\n")):
                if encoding == "utf-32":
                    total += 1
                elif encoding == "utf-16":
                    total += len(character.encode("utf-16-le")) // 2
                else:
                    total += len(character.encode("utf-8"))
                counted[total] = index + 1
            columns[line] = counted
        return columns[line][units]

    found, line, start = [], 0, 0
    for index in range(0, len(data), 5):
        delta_line, delta_start, length, _, _ = data[index : index + 5]
        line += delta_line
        start = delta_start if delta_line else start + delta_start
        found.append((line, lines[line][column(line, start) : column(line, start + length)]))
    return found


class Editing(RuleBasedStateMachine):
    """One document in the server and its model text; ``client`` and ``loop`` are set
    on the class by the test."""

    client: GlassClient
    loop: asyncio.AbstractEventLoop

    def run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=20)

    def send(self, call: Any) -> None:
        """Run a plain client call (a notification) on the loop."""

        async def sent() -> None:
            call()

        self.run(sent())

    @property
    def encoding(self) -> str:
        return self.client.encoding

    @initialize(text=texts)
    def open(self, text: str) -> None:
        self.text = text
        self.version = 1
        self.uri = self.run(_open(self.client, text))

    def _change(self, edits: list[tuple[int, int, str]]) -> None:
        """One didChange with these edits, each on the text the ones before left."""
        changes = []
        for start, end, inserted in edits:
            changes.append((range_of(self.text, start, end, self.encoding), inserted))
            self.text = self.text[:start] + inserted + self.text[end:]
        self.version += 1
        self.send(lambda: change_document(self.client, self.uri, self.version, *changes))

    def _place(self, data: st.DataObject) -> int:
        """An offset an LSP position can name (never between ``\\r`` and ``\\n``)."""
        return data.draw(st.sampled_from([*every_offset(self.text), len(self.text)]))

    @rule(data=st.data(), inserted=fragments, count=st.integers(1, 3))
    def edit(self, data: st.DataObject, inserted: str, count: int) -> None:
        edits = []
        text = self.text
        for _ in range(count):
            places = [*every_offset(text), len(text)]
            start = data.draw(st.sampled_from(places))
            end = data.draw(st.sampled_from([place for place in places if place >= start]))
            edits.append((start, end, inserted))
            text = text[:start] + inserted + text[end:]
        self._change(edits)

    @rule(data=st.data(), typed=fragments)
    def type_characters(self, data: st.DataObject, typed: str) -> None:
        """Typing: one didChange per character (code point), at a moving cursor."""
        place = self._place(data)
        for character in typed:
            self._change([(place, place, character)])
            place += 1
            if self.text[place - 1 : place + 1] == "\r\n":
                break  # the cursor cannot stand between "\r" and "\n"

    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        start = self._place(data)
        end = data.draw(
            st.sampled_from([place for place in [*every_offset(self.text), len(self.text)] if place >= start])
        )
        self._change([(start, end, "")])

    @invariant()
    def whole_stats_match_the_library(self) -> None:
        answer = self.run(stats(self.client, self.uri))
        ids = TOK.encode(self.text)
        assert (answer["tokens"], answer["characters"], answer["unknown"]) == (
            len(ids),
            len(self.text),
            ids.count(TOK.unk_id) if TOK.unk_id is not None else 0,
        )
        assert answer["chunks"] == len(TOK.chunk_spans(self.text))

    @rule(data=st.data())
    def range_stats(self, data: st.DataObject) -> None:
        start = self._place(data)
        end = data.draw(
            st.sampled_from([place for place in [*every_offset(self.text), len(self.text)] if place >= start])
        )
        answer = self.run(stats(self.client, self.uri, range_of(self.text, start, end, self.encoding)))
        answer.pop("tokenizer")
        answer.pop("model", None)
        assert answer == expected_stats(self.text, start, end)

    @rule()
    def semantic_tokens(self) -> None:
        answer = self.run(
            self.client.text_document_semantic_tokens_full_async(
                types.SemanticTokensParams(text_document=types.TextDocumentIdentifier(uri=self.uri))
            )
        )
        assert decoded_bands(self.text, answer.data, self.encoding) == expected_bands(TOK, self.text)

    @rule(data=st.data())
    def hover(self, data: st.DataObject) -> None:
        offsets = every_offset(self.text)
        if not offsets:
            return
        offset = data.draw(st.sampled_from(offsets))
        answer = self.run(
            self.client.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=self.uri),
                    position=position_of(self.text, offset, self.encoding),
                )
            )
        )
        holders = [
            (index, token_id, start, end)
            for index, (token_id, start, end, _) in enumerate(library_spans(TOK, self.text))
            if start <= offset < end
        ]
        assert answer is not None and holders
        index = holders[0][0]
        # A character split over several tokens (a real model's bytes) names them all.
        assert all(f"ID {token_id}" in markdown(answer) for _, token_id, _, _ in holders)
        # The whole-document invariant ran after the last edit: every line is counted.
        assert f"index {index:,} in the document" in markdown(answer)
        start, end = min(holder[2] for holder in holders), max(holder[3] for holder in holders)
        if answer.range is not None:
            assert covered(self.text, answer.range, self.encoding) == self.text[start:end]


async def _open(client: GlassClient, text: str) -> str:
    return open_document(client, text, "stateful")


# Besides glassllm's own: Llama 3's byte-level tokenizer.json, Mistral's .model, and the
# Metaspace tokenizer.json HF converts it to (prefix "first": none before a leading space).
@pytest.mark.parametrize("name", ["pt", "llama3", "mistral-v1", "hf-metaspace-first"])
async def test_random_edits_keep_the_server_equal_to_the_library(client, converted, name):
    global TOK
    if name == "pt":
        TOK, setting = packaged("pt"), "pt"
    else:
        path = converted(name) if name in CONVERTED else model_file(name)
        TOK, setting = load_tokenizer(path), str(path)
    await configure_and_wait(client, {"tokenizer": setting})
    Editing.client = client
    Editing.loop = asyncio.get_running_loop()
    Editing.TestCase.settings = settings(
        max_examples=15,
        stateful_step_count=10,
        deadline=None,
        # Every current check: HealthCheck's metaclass iterates without a type annotation.
        suppress_health_check=cast("list[HealthCheck]", list(HealthCheck)),
    )
    await asyncio.get_running_loop().run_in_executor(None, run_state_machine_as_test, Editing)
