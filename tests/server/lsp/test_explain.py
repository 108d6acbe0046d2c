"""Explain BPE merges end to end: the code action, the command's structured answer (equal
to ``encode_verbose`` and ``encode``), and the page shown with no plugin."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from lsprotocol import types

from glassllm import packaged
from tests.server.oracle import TRICKY, covered, position_of
from tests.server.session import (
    LOOP,
    GlassClient,
    code_actions,
    command_of,
    file_of,
    open_document,
    read_code_actions_right,
    session_fixture,
)

pytestmark = LOOP

# The server writes pages to $XDG_CACHE_HOME/glassllm: a folder of this module's own.
CACHE = tempfile.mkdtemp(prefix="glassllm-test-cache-")
TOK = packaged("pt")

client = session_fixture(cache=CACHE)


def whole_range(text: str, encoding: str) -> types.Range:
    return types.Range(start=types.Position(line=0, character=0), end=position_of(text, len(text), encoding))


async def explain(client: GlassClient, uri: str, selection: types.Range) -> dict:
    arguments = [
        uri,
        {
            "start": {"line": selection.start.line, "character": selection.start.character},
            "end": {"line": selection.end.line, "character": selection.end.character},
        },
    ]
    answer = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="glassllm.explainMerges", arguments=arguments)
    )
    assert isinstance(answer, dict), answer
    return answer


def replay(chunks: list[dict]) -> list[dict]:
    return [{"chunk": c["chunk"], "steps": [c["characters"]] + [s["pieces"] for s in c["steps"]]} for c in chunks]


async def test_the_code_action_carries_the_command(client: GlassClient):
    read_code_actions_right(client)
    uri = open_document(client, "Era uma vez")
    selection = types.Range(start=types.Position(line=0, character=4), end=types.Position(line=0, character=7))
    actions = await code_actions(client, uri, selection)
    # Explaining comes first; the second action is "Compare tokenizers" (tests/server/lsp/test_compare.py),
    # then both "in a browser" (tests/server/lsp/test_browser.py).
    commands = [command_of(action) for action in actions]
    assert [command.command for command in commands] == [
        "glassllm.explainMerges",
        "glassllm.compareTokenizers",
        "glassllm.openInBrowser",
        "glassllm.openInBrowser",
    ]
    assert actions[0].title == "Explain BPE merges"
    command = commands[0]
    assert command.arguments is not None and list(command.arguments) == [
        uri,
        {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 7}},
    ]
    answer = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command.command, arguments=command.arguments)
    )
    assert answer is not None
    assert [chunk["chunk"] for chunk in answer["chunks"]] == ["▁uma"]


async def test_the_whole_tricky_document_agrees_with_encode_verbose_and_encode(client: GlassClient):
    uri = open_document(client, TRICKY)
    answer = await explain(client, uri, whole_range(TRICKY, client.encoding))
    assert replay(answer["chunks"]) == TOK.encode_verbose(TRICKY)
    assert [token for chunk in answer["chunks"] for token in chunk["ids"]] == TOK.encode(TRICKY)
    assert answer["cut"] is False and answer["truncated"] is False
    assert "".join(chunk["text"] for chunk in answer["chunks"]) == TRICKY
    for chunk in answer["chunks"]:
        if chunk["text"] not in ("\r", "\n"):
            assert (
                covered(
                    TRICKY, types.Range(**{k: types.Position(**v) for k, v in chunk["range"].items()}), client.encoding
                )
                == chunk["text"]
            )
        for step in chunk["steps"]:
            assert TOK.ranks[(step["pair"][0], step["pair"][1])] == step["rank"]
            assert TOK.merge_counts is not None and step["count"] == TOK.merge_counts[step["rank"]]


@pytest.mark.parametrize(("start", "end", "chunk"), [(9, 10, " vez"), (16, 18, " café"), (25, 27, " cafe\u0301")])
async def test_a_selection_that_cuts_a_chunk_explains_it_whole_and_says_so(client: GlassClient, start, end, chunk):
    text = "Era uma vez, 🙂 café e cafe\u0301!"
    uri = open_document(client, text)
    selection = types.Range(
        start=position_of(text, start, client.encoding), end=position_of(text, end, client.encoding)
    )
    answer = await explain(client, uri, selection)
    (explained,) = answer["chunks"]
    assert explained["text"] == chunk and explained["cut"] is True and answer["cut"] is True
    assert replay([explained]) == TOK.encode_verbose(chunk)
    assert explained["selected"] == text[start:end]
    assert [item["id"] for item in explained["alone"]] == TOK.encode(text[start:end])
    assert "The selection cuts a chunk" in answer["markdown"]


async def test_an_empty_selection_explains_the_token_under_the_cursor(client: GlassClient):
    text = "um 🙂🙂 dois\n"
    uri = open_document(client, text)
    cursor = position_of(text, 4, client.encoding)  # the second 🙂
    answer = await explain(client, uri, types.Range(start=cursor, end=cursor))
    (explained,) = answer["chunks"]
    assert explained["text"] == " 🙂🙂"
    selection = types.Range(**{k: types.Position(**v) for k, v in answer["selection"].items()})
    assert covered(text, selection, client.encoding) == "🙂"


async def test_the_page_is_written_to_the_cache_and_shown(client: GlassClient):
    text = "Era uma vez\r\n"
    uri = open_document(client, text, name="história")
    answer = await explain(client, uri, whole_range(text, client.encoding))
    page = file_of(answer["page"])
    assert page.parent == Path(CACHE) / "glassllm"
    markdown = page.read_text(encoding="utf-8")
    assert markdown == answer["markdown"]
    assert markdown.startswith("# Explain BPE merges\n")
    assert "história" in markdown and "Portuguese (pt)" in markdown
    for chunk in TOK.explain("Era uma vez"):
        for step in chunk.steps:
            line = f"rank {step.rank}: `{step.pair[0]}` + `{step.pair[1]}` → `{step.result}`"
            assert f"{line} (pair seen {step.count:,} times in training)" in markdown
    # The page is shown before the command answers, so it has arrived by now.
    if client.preset == "emacs":  # no window/showDocument: the text comes as a message
        assert client.messages[-1].message == markdown
        assert client.messages[-1].type == types.MessageType.Info
    else:
        assert client.shown_documents[-1].uri == answer["page"]
        assert client.shown_documents[-1].take_focus is True


async def test_an_unknown_document_is_a_clear_error(client: GlassClient):
    with pytest.raises(Exception, match="Unknown document"):
        await explain(client, "file:///nowhere.txt", whole_range("", client.encoding))


async def test_an_empty_document_has_nothing_to_explain(client: GlassClient):
    uri = open_document(client, "")
    answer = await explain(client, uri, whole_range("", client.encoding))
    assert answer["chunks"] == []
    assert "Nothing to explain" in answer["markdown"]


async def test_a_reversed_or_out_of_range_selection_is_clamped(client: GlassClient):
    text = "um dois\ntrês"
    uri = open_document(client, text)
    far = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=99, character=99))
    assert replay((await explain(client, uri, far))["chunks"]) == TOK.encode_verbose(text)
    backwards = types.Range(start=position_of(text, 7, client.encoding), end=position_of(text, 2, client.encoding))
    assert [chunk["text"] for chunk in (await explain(client, uri, backwards))["chunks"]] == [" dois"]


async def test_wrong_arguments_are_invalid_params(client: GlassClient):
    with pytest.raises(Exception) as raised:
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="glassllm.explainMerges", arguments=["file:///x.txt"])
        )
    assert getattr(raised.value, "code", None) == -32602
