"""Comparing tokenizers end to end: the hover lines, ``compare`` in ``glassllm/stats``, the
``glassllm.compareTokenizers`` command and its code action, and the ``compareWith`` setting."""

from __future__ import annotations

import asyncio
import random
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from glassllm import Tokenizer, packaged, packaged_path
from glassllm.tokenizer import UNK_ID, pre_tokenize
from tests.server.oracle import TRICKY, line_spans, lsp_lines, offset_of, position_of, range_of
from tests.server.session import (
    LOOP,
    PRESETS,
    WORKSPACE,
    GlassClient,
    change_document,
    code_actions,
    command_of,
    configure,
    file_of,
    hover,
    markdown,
    open_document,
    session_fixture,
)

pytestmark = LOOP

PT, EN = packaged("pt"), packaged("en")
# The server writes pages to $XDG_CACHE_HOME/glassllm: a folder of this module's own.
CACHE = tempfile.mkdtemp(prefix="glassllm-test-compare-")

client = session_fixture(cache=CACHE, code_actions=True)


async def full_stats(client: GlassClient, uri: str, lsp_range: types.Range | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"textDocument": {"uri": uri}}
    if lsp_range is not None:
        params["range"] = client.protocol._converter.unstructure(lsp_range)
    answer = await client.protocol.send_request_async("glassllm/stats", params)
    return plain(answer)


def plain(value: Any) -> Any:
    """A JSON answer that pygls hands over as named tuples, as plain dicts and lists."""
    if hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def oracle(tok: Tokenizer, text: str, start: int, end: int) -> tuple[int, int]:
    """Tokens and unknown tokens of ``tok`` that overlap ``[start, end)``, from
    ``encode_spans`` of each line: a token cut by an edge counts; a token NFC left empty
    goes with the character it ends; an empty range holds none."""
    tokens = unknown = 0
    for token_id, _, s, e in line_spans(tok, text):
        if start < end and ((s < e and s < end and e > start) or (s == e and start < s <= end)):
            tokens += 1
            unknown += token_id == UNK_ID
    return tokens, unknown


# Hover


async def test_the_hover_shows_how_the_compared_tokenizer_splits_the_chunk(client):
    text = "A menina bonita"
    uri = open_document(client, text)
    answer = await hover(client, uri, position_of(text, 4, client.encoding))
    pieces = [span.piece for span in EN.encode_spans(" menina")]
    value = markdown(answer)
    assert f"English (en): `{'·'.join(pieces)}` — {len(pieces)} tokens" in value
    # After the token's own lines: its tokenizer comes first.
    assert value.index("Tokenizer: Portuguese (pt)") < value.index("English (en):")


async def test_one_compared_line_per_tokenizer_and_a_file_by_its_name(client):
    WORKSPACE.mkdir(parents=True, exist_ok=True)
    name = f"banana-{uuid.uuid4().hex}.json"
    Tokenizer.train("banana banana", vocab_size=12).save(WORKSPACE / name)
    configure(client, {"compareWith": ["en", name]})
    text = "banana"
    uri = open_document(client, text)
    value = markdown(await hover(client, uri, types.Position(line=0, character=0)))
    assert "English (en): " in value
    assert f"file {name}: `banana` — 1 token" in value
    configure(client, {})
    (WORKSPACE / name).unlink()


# glassllm/stats


async def test_stats_compare_the_whole_document(client):
    uri = open_document(client, TRICKY)
    answer = await full_stats(client, uri)
    chunks = sum(len(pre_tokenize(line)) for line in lsp_lines(TRICKY))
    ids = [token_id for token_id, *_ in line_spans(EN, TRICKY)]
    assert answer["tokenizer"] == "pt" and answer["chunks"] == chunks
    assert answer["compare"] == [
        {"tokenizer": "en", "tokens": len(ids), "chunks": chunks, "unknown": ids.count(UNK_ID)}
    ]


async def test_stats_compare_ranges_exactly(client):
    text = TRICKY
    uri = open_document(client, text)
    rng = random.Random(11)
    cases = [(0, len(text)), (0, 0), (3, 9), (14, 30)] + [
        tuple(sorted(rng.sample(range(len(text) + 1), 2))) for _ in range(12)
    ]
    for start, end in cases:
        lsp_range = range_of(text, start, end, client.encoding)
        # The oracle works on what the range denotes (a position inside "\r\n" cannot be named).
        start, end = offset_of(text, lsp_range.start, client.encoding), offset_of(text, lsp_range.end, client.encoding)
        answer = await full_stats(client, uri, lsp_range)
        assert answer["tokens"] == oracle(PT, text, start, end)[0], (start, end)
        (compared,) = answer["compare"]
        assert (compared["tokens"], compared["unknown"]) == oracle(EN, text, start, end), (start, end)
        assert compared["chunks"] == answer["chunks"]


async def test_the_stats_command_names_the_compared_counts(client):
    text = "Era uma vez uma menina."
    uri = open_document(client, text)
    before = len(client.messages)
    answer = plain(
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="glassllm.showStats", arguments=[uri])
        )
    )
    (compared,) = answer["compare"]
    assert compared["tokens"] == len(EN.encode(text))
    (shown,) = client.messages[before:]
    assert shown.message.endswith(f"(Portuguese (pt)); English (en): {compared['tokens']} tokens, 0 unknown")


async def test_stats_compare_follows_edits(client):
    text = "Era uma vez\nA menina\n"
    uri = open_document(client, text)
    await full_stats(client, uri)
    edit = types.Range(start=types.Position(line=1, character=2), end=types.Position(line=1, character=8))
    change_document(client, uri, 2, (edit, "garota bonita"))
    changed = "Era uma vez\nA garota bonita\n"
    (compared,) = (await full_stats(client, uri))["compare"]
    assert compared["tokens"] == len(EN.encode(changed))


# The setting


async def test_compare_with_follows_the_setting(client):
    text = "Once upon a time"
    uri = open_document(client, text)
    configure(client, {"compareWith": []})
    assert (await full_stats(client, uri))["compare"] == []
    value = markdown(await hover(client, uri, types.Position(line=0, character=0)))
    assert "English (en):" not in value
    start = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))
    # Nothing to compare with: neither "Compare tokenizers" nor its page in a browser.
    offered = [
        (command_of(a).command, list(command_of(a).arguments or [])) for a in await code_actions(client, uri, start)
    ]
    selection = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    assert offered == [
        ("glassllm.explainMerges", [uri, selection]),
        ("glassllm.openInBrowser", [uri, selection, "explain"]),
    ]
    # The tokenizer in use is never compared with itself; a repeat counts once.
    configure(client, {"compareWith": ["pt", "en", "en"]})
    assert [c["tokenizer"] for c in (await full_stats(client, uri))["compare"]] == ["en"]
    # By default, the other packaged tokenizer.
    configure(client, {"tokenizer": "en"})
    answer = await full_stats(client, uri)
    assert answer["tokenizer"] == "en"
    assert answer["compare"] == [{"tokenizer": "pt", "tokens": len(PT.encode(text)), "chunks": 4, "unknown": 0}]
    assert "Portuguese (pt): " in markdown(await hover(client, uri, types.Position(line=0, character=0)))
    configure(client, {})
    assert [c["tokenizer"] for c in (await full_stats(client, uri))["compare"]] == ["en"]


async def test_a_path_relative_to_the_workspace(client):
    WORKSPACE.mkdir(parents=True, exist_ok=True)
    name = f"english-{uuid.uuid4().hex}.json"
    shutil.copy(packaged_path("en"), WORKSPACE / name)
    uri = open_document(client, "Once upon a time")
    configure(client, {"compareWith": [name]})
    (compared,) = (await full_stats(client, uri))["compare"]
    assert compared["tokenizer"] == str(WORKSPACE / name)
    assert compared["tokens"] == len(EN.encode("Once upon a time"))
    configure(client, {})
    (WORKSPACE / name).unlink()


@pytest.mark.parametrize("value", ["en", [1], [""], {"en": True}])
async def test_an_invalid_value_is_reported_once_and_the_default_used(client, value):
    uri = open_document(client, "Era uma vez")
    before = len(client.messages)
    for _ in range(3):
        configure(client, {"compareWith": value})
        assert [c["tokenizer"] for c in (await full_stats(client, uri))["compare"]] == ["en"]
    shown = client.messages[before:]
    assert len(shown) == 1, shown
    assert "invalid setting glassllm.compareWith" in shown[0].message
    assert '"pt", "en" or paths of tokenizer JSON files' in shown[0].message
    configure(client, {})


async def test_a_broken_file_is_reported_once_and_left_out(client):
    WORKSPACE.mkdir(parents=True, exist_ok=True)
    path = WORKSPACE / f"broken-{uuid.uuid4().hex}.json"
    path.write_text("{not json", encoding="utf-8")
    uri = open_document(client, "Era uma vez")
    before = len(client.messages)
    for _ in range(3):
        configure(client, {"compareWith": [str(path), "en"]})
        answer = await full_stats(client, uri)
        assert [c["tokenizer"] for c in answer["compare"]] == ["en"]
        assert "English (en):" in markdown(await hover(client, uri, types.Position(line=0, character=0)))
    shown = client.messages[before:]
    assert len(shown) == 1, shown
    assert (
        f"cannot compare with the tokenizer {path}" in shown[0].message
        and "Expecting property name" in shown[0].message
    )
    assert shown[0].type == types.MessageType.Error
    configure(client, {})
    path.unlink()


# The command and the code action


async def run(client: GlassClient, command: types.Command) -> dict[str, Any]:
    answer = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command.command, arguments=command.arguments)
    )
    return plain(answer)


async def test_the_code_action_compares_the_selection(client):
    text = "Era uma vez uma menina bonita.\n"
    uri = open_document(client, text)
    selection = range_of(text, 12, 29, client.encoding)  # "uma menina bonita"
    actions = await code_actions(client, uri, selection)
    compare = actions[1]
    assert compare.title == "Compare tokenizers"
    command = command_of(compare)
    assert command.command == "glassllm.compareTokenizers"
    answer = await run(client, command)
    chunks = answer["chunks"]
    assert [chunk["chunk"] for chunk in chunks] == ["▁uma", "▁menina", "▁bonita"]  # cut chunks whole
    for chunk in chunks:
        pt, en = chunk["tokenizers"]
        assert (pt["tokenizer"], en["tokenizer"]) == ("pt", "en")
        for tok, data in ((PT, pt), (EN, en)):
            (explained,) = tok.explain(chunk["chunk"])
            assert data["pieces"] == explained.pieces and data["ids"] == explained.ids
            assert [(s["rank"], tuple(s["pair"]), s["result"], s["count"]) for s in data["steps"]] == [
                (s.rank, s.pair, s.result, s.count) for s in explained.steps
            ]
        assert chunk["spread"] == abs(len(pt["pieces"]) - len(en["pieces"]))
    spreads = [chunks[i]["spread"] for i in answer["mostDifferent"]]
    assert spreads == sorted(spreads, reverse=True) and sorted(answer["mostDifferent"]) == [0, 1, 2]
    own, compared = answer["totals"]
    assert own["tokens"] == oracle(PT, text, 12, 29)[0] and compared["tokens"] == oracle(EN, text, 12, 29)[0]
    markdown = answer["markdown"]
    assert markdown.startswith("# Compare tokenizers\n")
    assert "| Portuguese (pt) | English (en) |" in markdown
    most = chunks[answer["mostDifferent"][0]]
    assert markdown.index(f"Chunk 1: `{most['chunk']}`") < markdown.index("Chunk 2:")
    step = most["tokenizers"][1]["steps"][0]
    assert f"rank {step['rank']:,}: `{step['pair'][0]}` + `{step['pair'][1]}` → `{step['result']}`" in markdown
    page = file_of(answer["page"])
    assert page.parent == Path(CACHE) / "glassllm" and page.name.startswith("compare-")
    assert page.read_text(encoding="utf-8") == markdown


async def test_an_empty_selection_compares_the_token_under_the_cursor(client):
    text = "um 🙂🙂 dois\n"
    uri = open_document(client, text)
    answer = await run(
        client,
        types.Command(
            title="",
            command="glassllm.compareTokenizers",
            arguments=[uri, client.protocol._converter.unstructure(range_of(text, 8, 8, client.encoding))],
        ),
    )
    assert [chunk["chunk"] for chunk in answer["chunks"]] == ["▁dois"]
    (token,) = [span for span in PT.encode_spans(text) if span.start <= 8 < span.end]
    unstructure = client.protocol._converter.unstructure
    assert answer["selection"] == {
        "start": unstructure(position_of(text, token.start, client.encoding)),
        "end": unstructure(position_of(text, token.end, client.encoding)),
    }


async def test_the_command_on_an_unknown_document_fails_clearly(client):
    with pytest.raises(Exception, match="Unknown document"):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="glassllm.compareTokenizers",
                arguments=[
                    "file:///nowhere.txt",
                    {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
                ],
            )
        )


client_pt = session_fixture(PRESETS[:1], cache=CACHE, locale="pt-BR")


async def test_a_portuguese_client_reads_the_comparison_in_portuguese(client_pt):
    text = "A menina bonita"
    uri = open_document(client_pt, text)
    value = markdown(await hover(client_pt, uri, types.Position(line=0, character=3)))
    assert "inglês (en): `" in value
    answer = await run(
        client_pt,
        types.Command(
            title="",
            command="glassllm.compareTokenizers",
            arguments=[uri, {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 15}}],
        ),
    )
    assert answer["markdown"].startswith("# Comparar tokenizadores\n")
    assert "| Tokenizador | Tokens | Trechos | Desconhecidos | Caracteres/token |" in answer["markdown"]


async def test_closing_a_document_while_it_is_counted_answers_and_loses_nothing(client):
    text = "".join(f"Linha {n}: a menina bonita comeu {n * 7} maçãs.\n" for n in range(20000))
    uri = open_document(client, text)
    pending = asyncio.ensure_future(full_stats(client, uri))
    await asyncio.sleep(0.05)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    try:
        answer = await pending
    except JsonRpcException as error:
        assert "Unknown document" in str(error)
    else:
        assert answer["compare"][0]["tokens"] == len(EN.encode(text))
    other = open_document(client, "Era uma vez")
    assert (await full_stats(client, other))["compare"][0]["tokens"] == len(EN.encode("Era uma vez"))
