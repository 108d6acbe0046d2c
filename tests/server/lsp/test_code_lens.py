"""The code lens end to end, under all three client presets: the count on the first line, in
English and (with the hover) in Portuguese."""

from __future__ import annotations

from lsprotocol import types

from glassllm import packaged
from tests.server.session import LOOP, hover, identifier, markdown, open_document

pytestmark = LOOP

PT = packaged("pt")


async def test_code_lens_shows_the_count_on_the_first_line(client):
    text = "Era uma vez\nna terra\n"
    uri = open_document(client, text)
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(text_document=identifier(uri)))
    assert len(lenses) == 1
    count = len(PT.encode(text))
    assert lenses[0].range.start.line == 0
    assert lenses[0].command.title == f"{count} tokens · {len(text) / count:.1f} chars/token"
    shown = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=lenses[0].command.command, arguments=lenses[0].command.arguments)
    )
    assert shown["tokens"] == count
    assert client.messages[-1].message.startswith(f"{count} tokens, ")


async def test_code_lens_and_hover_in_portuguese(client_pt):
    text = "Era uma vez. " * 100
    uri = open_document(client_pt, text)
    lenses = await client_pt.text_document_code_lens_async(types.CodeLensParams(text_document=identifier(uri)))
    count = len(PT.encode(text))
    ratio = f"{len(text) / count:.1f}".replace(".", ",")
    assert lenses[0].command.title == f"{count:,}".replace(",", ".") + f" tokens · {ratio} caracteres/token"
    answer = await hover(client_pt, uri, types.Position(line=0, character=9))
    assert "Fusões: `▁vez ← " in markdown(answer)
    assert "Tokenizador: português (pt)" in markdown(answer)
    assert "Explicar fusões BPE" in markdown(answer)
