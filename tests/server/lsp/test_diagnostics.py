"""Unknown-character diagnostics end to end: exactly the unknown characters, one per run,
pulled where the client pulls and pushed where it does not; the setting turns them off."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from glassllm import packaged
from glassllm.tokenizer import UNK_ID
from tests.server.oracle import TEXTS, covered, lsp_lines
from tests.server.session import LOOP, GlassClient, change_document, configure, open_document

pytestmark = LOOP
TOK = packaged("pt")


def unknown_runs(text: str) -> list[str]:
    """The original text of each run of consecutive <unk> tokens inside lines."""
    runs = []
    for line in lsp_lines(text):
        content = len(line.rstrip("\r\n"))
        end = None
        for span in TOK.encode_spans(line[:content]):
            if span.id != UNK_ID:
                continue
            if span.start == end:
                runs[-1] += line[span.start : span.end]
            else:
                runs.append(line[span.start : span.end])
            end = span.end
    return runs


async def pull(client: GlassClient, uri: str, previous: str | None = None):
    return await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri), previous_result_id=previous)
    )


async def pushed(client: GlassClient, uri: str, count: int | None = None) -> list[types.Diagnostic]:
    """The diagnostics last pushed for ``uri``, waiting for a push (of ``count`` items)."""
    for _ in range(200):
        if uri in client.diagnostics and (count is None or len(client.diagnostics[uri]) == count):
            return list(client.diagnostics[uri])
        await asyncio.sleep(0.02)
    raise AssertionError(f"no diagnostics pushed for {uri}: {client.diagnostics.get(uri)}")


async def pulled(client: GlassClient, uri: str) -> list[types.Diagnostic]:
    """The items of a full report pulled afresh (no previous result to be unchanged from)."""
    report = await pull(client, uri)
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport | types.FullDocumentDiagnosticReport), report
    return list(report.items)


async def diagnostics(client: GlassClient, uri: str) -> list[types.Diagnostic]:
    """Pulled where the client pulls, else pushed — as the editor would get them."""
    if client.preset == "neovim@0.11":
        return await pulled(client, uri)
    return await pushed(client, uri)


@pytest.mark.parametrize("name", sorted(TEXTS))
async def test_diagnostics_cover_exactly_the_unknown_characters(client: GlassClient, name: str):
    text = TEXTS[name]
    uri = open_document(client, text)
    found = await diagnostics(client, uri)
    line_endings = [d for d in found if d.message.startswith("The line-ending character")]
    runs = [d for d in found if d not in line_endings]
    assert [covered(text, d.range, client.encoding) for d in runs] == unknown_runs(text)
    assert all(d.severity == types.DiagnosticSeverity.Information and d.source == "glassllm" for d in found)
    unknown_endings = sum(line.endswith("\r") or line.endswith("\r\n") for line in lsp_lines(text))
    if unknown_endings:  # the Portuguese tokenizer has "\n" but not "\r"
        (ending,) = line_endings
        if unknown_endings > 1:
            assert f"each of the {unknown_endings} in this document" in ending.message
        start = ending.range.start
        assert (
            start.character
            == len(
                lsp_lines(text)[start.line]
                .rstrip("\r\n")
                .encode({"utf-8": "utf-8", "utf-16": "utf-16-le", "utf-32": "utf-32-le"}[client.encoding])
            )
            // {"utf-8": 1, "utf-16": 2, "utf-32": 4}[client.encoding]
        )
        assert (ending.range.end.line, ending.range.end.character) == (start.line + 1, 0)
    else:
        assert line_endings == []


async def test_the_message_names_the_character_the_tokenizer_and_what_decoding_shows(client: GlassClient):
    uri = open_document(client, "a 🧪 b 猫猫\u200d")
    messages = [d.message for d in await diagnostics(client, uri)]
    assert messages == [
        "'🧪' is not in the Portuguese tokenizer's alphabet: it becomes <unk> (id 1) and decoding shows ⁇",
        "'猫猫⟨U+200D ZERO WIDTH JOINER⟩' are not in the Portuguese tokenizer's alphabet: they become 3 × <unk> (id 1) "
        "and decoding shows ⁇⁇⁇",
    ]


async def test_every_client_can_pull_and_an_unchanged_document_answers_unchanged(client: GlassClient):
    uri = open_document(client, "x 🧪")
    first = await pull(client, uri)
    assert isinstance(first, types.RelatedFullDocumentDiagnosticReport | types.FullDocumentDiagnosticReport)
    assert len(first.items) == 1
    again = await pull(client, uri, first.result_id)
    assert isinstance(again, types.RelatedUnchangedDocumentDiagnosticReport | types.UnchangedDocumentDiagnosticReport)
    assert again.result_id == first.result_id


async def test_a_document_without_unknown_characters_gets_an_empty_report(client: GlassClient):
    uri = open_document(client, "Era uma vez\n")
    assert await pulled(client, uri) == []


async def test_pushes_follow_edits_and_close_where_the_client_cannot_pull(client: GlassClient):
    if client.preset == "neovim@0.11":
        # This client pulls: it must get no pushes at all, even after the debounce.
        uri = open_document(client, "um 🧪")
        assert len(await pulled(client, uri)) == 1
        await asyncio.sleep(0.5)
        assert uri not in client.diagnostics
        return
    uri = open_document(client, "um 🧪")
    assert len(await pushed(client, uri)) == 1
    change_document(client, uri, 2, "um 🧪 dois 🧪🧪 três")
    text = "um 🧪 dois 🧪🧪 três"
    assert [covered(text, d.range, client.encoding) for d in await pushed(client, uri, count=2)] == ["🧪", "🧪🧪"]
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert await pushed(client, uri, count=0) == []


async def test_the_setting_turns_diagnostics_off_and_on(client: GlassClient):
    uri = open_document(client, "um 🧪")
    assert len(await diagnostics(client, uri)) == 1
    configure(client, {"diagnostics": False})
    await asyncio.sleep(0.3)
    assert await pulled(client, uri) == []
    if client.preset != "neovim@0.11":
        assert await pushed(client, uri, count=0) == []
    configure(client, {})
    await asyncio.sleep(0.3)
    assert len(await pulled(client, uri)) == 1


async def test_an_unknown_document_is_an_error_not_a_missing_answer(client: GlassClient):
    with pytest.raises(Exception, match="Unknown document"):
        await pull(client, "file:///nowhere.txt")


async def test_a_document_full_of_unknown_characters_reports_the_first_two_thousand(client: GlassClient):
    text = "猫 a " * 2500
    uri = open_document(client, text)
    items = await pulled(client, uri)
    assert len(items) == 2000
    assert covered(text, items[-1].range, client.encoding) == "猫"
    assert items[-1].range.start.character < items[-1].range.end.character
