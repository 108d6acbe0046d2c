"""Semantic-token bands end to end: one band per token, exact in UTF-8/16/32, alternating
types, range and delta answers consistent with full, and the setting that turns them off."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest
from lsprotocol import types

from tests.server.oracle import TEXTS, TRICKY, bands, expected_bands, offset_of, position_of
from tests.server.session import (
    LOOP,
    GlassClient,
    change_document,
    configure,
    open_document,
    semantic_tokens_full,
)

pytestmark = LOOP


def offsets(text: str, data: Sequence[int], encoding: str) -> list[tuple[int, int, int]]:
    """(start, end, type) of each band as code-point offsets into ``text``."""
    found, line, start = [], 0, 0
    for index in range(0, len(data), 5):
        delta_line, delta_start, length, kind, _ = data[index : index + 5]
        line += delta_line
        start = delta_start if delta_line else start + delta_start
        begin = offset_of(text, types.Position(line=line, character=start), encoding)
        found.append((begin, offset_of(text, types.Position(line=line, character=start + length), encoding), kind))
    return found


async def test_the_legend_has_two_standard_types(client: GlassClient):
    provider = client.server_capabilities.semantic_tokens_provider
    assert isinstance(provider, types.SemanticTokensOptions | types.SemanticTokensRegistrationOptions)
    assert list(provider.legend.token_types) == ["string", "keyword"]
    assert isinstance(provider.full, types.SemanticTokensFullDelta)
    assert provider.full.delta is True and provider.range is True


@pytest.mark.parametrize("name", sorted(TEXTS))
async def test_every_token_is_one_band_that_covers_exactly_its_characters(client: GlassClient, name: str):
    text = TEXTS[name]
    uri = open_document(client, text)
    answer = await semantic_tokens_full(client, uri)
    decoded = bands(text, list(answer.data), client.encoding)
    assert [(line, piece) for line, piece, _ in decoded] == expected_bands(text)
    # Neighbours on a line differ; each line starts with the first type.
    for (line_a, _, kind_a), (line_b, _, kind_b) in itertools.pairwise(decoded):
        assert kind_b == (1 - kind_a if line_a == line_b else 0)


async def test_a_range_answer_is_the_full_answer_cut_to_the_range(client: GlassClient):
    uri = open_document(client, TRICKY)
    whole = list((await semantic_tokens_full(client, uri)).data)
    # From inside "família" on line 1 to inside "banana" on line 2.
    start, end = TRICKY.index("mília"), TRICKY.index("nana")
    answer = await client.text_document_semantic_tokens_range_async(
        types.SemanticTokensRangeParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(
                start=position_of(TRICKY, start, client.encoding), end=position_of(TRICKY, end, client.encoding)
            ),
        )
    )
    touching = [band for band in offsets(TRICKY, whole, client.encoding) if band[0] < end and band[1] > start]
    assert answer is not None and offsets(TRICKY, list(answer.data), client.encoding) == touching
    assert touching[0][0] <= start < touching[0][1] and touching[-1][0] < end <= touching[-1][1]


async def test_a_delta_turns_the_previous_answer_into_the_new_one(client: GlassClient):
    text = "Era uma vez\num gato 🙂\nfim"
    uri = open_document(client, text)
    before = await semantic_tokens_full(client, uri)
    assert before.result_id is not None
    change_document(
        client,
        uri,
        2,
        (types.Range(start=types.Position(line=1, character=3), end=types.Position(line=1, character=7)), "cachorro"),
    )
    delta = await client.text_document_semantic_tokens_full_delta_async(
        types.SemanticTokensDeltaParams(
            text_document=types.TextDocumentIdentifier(uri=uri), previous_result_id=before.result_id
        )
    )
    assert isinstance(delta, types.SemanticTokensDelta)
    data = list(before.data)
    for edit in sorted(delta.edits, key=lambda e: e.start, reverse=True):
        data[edit.start : edit.start + edit.delete_count] = list(edit.data or [])
    new_text = "Era uma vez\num cachorro 🙂\nfim"
    assert [(line, piece) for line, piece, _ in bands(new_text, data, client.encoding)] == expected_bands(new_text)
    # Only the edited line's tokens travel.
    assert sum(len(edit.data or []) for edit in delta.edits) < len(data)
    # A stale result id gets a full answer.
    again = await client.text_document_semantic_tokens_full_delta_async(
        types.SemanticTokensDeltaParams(text_document=types.TextDocumentIdentifier(uri=uri), previous_result_id="stale")
    )
    assert isinstance(again, types.SemanticTokens) and list(again.data) == data


async def test_the_setting_turns_bands_off_and_on(client: GlassClient):
    uri = open_document(client, "Era uma vez")
    configure(client, {"semanticTokens": False})
    assert list((await semantic_tokens_full(client, uri)).data) == []
    configure(client, {})
    assert len((await semantic_tokens_full(client, uri)).data) == 5 * 4
