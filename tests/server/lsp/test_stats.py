"""``glassllm/stats`` end to end, under all three client presets: a document's counts, a
range's (partial tokens counted), bad params answered as invalid."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcException

from glassllm import packaged
from glassllm.tokenizer import UNK_ID
from tests.server.oracle import TEXTS, TRICKY, line_spans, range_of
from tests.server.session import LOOP, open_document, stats

pytestmark = LOOP

PT = packaged("pt")


@pytest.mark.parametrize("name", sorted(TEXTS))
async def test_stats_for_the_document(client, name):
    text = TEXTS[name]
    uri = open_document(client, text, name)
    spans = PT.encode_spans(text)
    assert await stats(client, uri) == {
        "tokens": len(spans),
        "chunks": len({span.chunk for span in spans}),
        "characters": len(text),
        "unknown": sum(span.id == UNK_ID for span in spans),
        "tokenizer": "pt",
    }


async def test_stats_for_ranges_count_partial_tokens(client):
    text = TRICKY
    uri = open_document(client, text)
    spans = line_spans(PT, text)
    for start, end in [(0, 5), (2, 3), (12, 16), (16, 40), (30, len(text)), (0, len(text)), (5, 5)]:
        if start != end and (text[start - 1 : start + 1] == "\r\n" or text[end - 1 : end + 1] == "\r\n"):
            continue
        touched = [span for span in spans if start < end and span[2] < end and span[3] > start]
        answer = await stats(client, uri, range_of(text, start, end, client.encoding))
        assert answer["tokens"] == len(touched), (start, end)
        assert answer["characters"] == end - start
        assert answer["unknown"] == sum(span[0] == UNK_ID for span in touched)


async def test_stats_with_bad_params_answer_invalid_params(client):
    for params in ({}, {"textDocument": {}}, {"textDocument": {"uri": "x"}, "range": {"start": 1}}):
        with pytest.raises(JsonRpcException) as raised:
            await client.protocol.send_request_async("glassllm/stats", params)
        assert raised.value.code == -32602
