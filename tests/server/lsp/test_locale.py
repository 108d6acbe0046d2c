"""Both languages: the explanation, its code action, diagnostics and training speak
Portuguese to a pt client and English otherwise; ``glassllm.locale`` overrides."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from lsprotocol import types

from glassllm import packaged
from glassllm_server.messages import CATALOGUE
from tests.server.session import LOOP, GlassClient, configure, open_document, session_fixture

TOK = packaged("pt")
SERVER = Path(__file__).resolve().parents[3] / "server" / "glassllm_server"


async def action_title(client: GlassClient, uri: str) -> str:
    """The first code action's title (explaining; comparing tokenizers comes second)."""
    answer = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=3)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert answer
    return answer[0].title


async def explain_page(client: GlassClient, uri: str, end: int) -> str:
    answer = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="glassllm.explainMerges",
            arguments=[uri, {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": end}}],
        )
    )
    assert answer is not None
    return answer["markdown"]


async def diagnostic_messages(client: GlassClient, uri: str) -> list[str]:
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport | types.FullDocumentDiagnosticReport), report
    return [item.message for item in report.items]


@LOOP
async def test_a_portuguese_client_reads_portuguese(client_pt: GlassClient):
    text = "Era uma vez 🧪\r\n"
    uri = open_document(client_pt, text)
    assert await action_title(client_pt, uri) == "Explicar fusões BPE"
    assert await diagnostic_messages(client_pt, uri) == [
        "'🧪' não está no alfabeto do tokenizador português: vira <unk> (id 1) e a decodificação mostra ⁇",
        "O caractere de fim de linha '\\r' não está no alfabeto do tokenizador português: vira <unk> (id 1) "
        "e a decodificação mostra ⁇",
    ]
    page = await explain_page(client_pt, uri, 9)
    assert page.startswith("# Explicar fusões BPE\n")
    assert "tokenizador: português (pt)" in page and "Trecho 3: `▁vez`" in page
    assert "A seleção corta um trecho." in page
    step = TOK.explain("Era")[0].steps[0]
    assert f"posição {step.rank}: `r` + `a` → `ra` (par visto {step.count:,} vezes no treino)".replace(",", ".") in page
    assert step.count is not None and step.count >= 1000  # so that the thousands separator is checked


@LOOP
async def test_an_english_client_reads_english_until_the_setting_says_portuguese(client: GlassClient):
    uri = open_document(client, "Era uma vez 🧪")
    assert await action_title(client, uri) == "Explain BPE merges"
    assert (await diagnostic_messages(client, uri))[0].startswith("'🧪' is not in the Portuguese tokenizer's alphabet")
    page = await explain_page(client, uri, 3)
    step = TOK.explain("Era")[0].steps[0]
    assert f"rank {step.rank}: `r` + `a` → `ra` (pair seen {step.count:,} times in training)" in page
    configure(client, {"locale": "pt-BR"})
    assert await action_title(client, uri) == "Explicar fusões BPE"
    assert (await diagnostic_messages(client, uri))[0].startswith("'🧪' não está no alfabeto do tokenizador português")
    configure(client, {})
    assert await action_title(client, uri) == "Explain BPE merges"


@LOOP
async def test_the_setting_can_also_make_a_portuguese_client_read_english(client_pt: GlassClient):
    uri = open_document(client_pt, "Era")
    configure(client_pt, {"locale": "en"})
    assert await action_title(client_pt, uri) == "Explain BPE merges"
    configure(client_pt, {})
    assert await action_title(client_pt, uri) == "Explicar fusões BPE"


@LOOP
async def test_training_on_a_lone_surrogate_says_why_in_portuguese(client_pt: GlassClient, tmp_path: Path):
    # JSON can carry a lone surrogate ("\\ud800") that no UTF-8 text holds.
    uri = open_document(client_pt, "banana \ud800 banana\n")
    output = tmp_path / "t.json"
    with pytest.raises(Exception) as raised:
        await client_pt.workspace_execute_command_async(
            types.ExecuteCommandParams(command="glassllm.trainTokenizer", arguments=[uri, 20, str(output)])
        )
    assert getattr(raised.value, "code", None) == -32803  # RequestFailed, not an internal error
    assert str(raised.value).startswith(
        "glassllm: não é possível treinar um tokenizador: o texto tem um surrogate isolado (U+D800) "
        "na posição 7, que não é um caractere"
    )
    assert not output.exists()


@pytest.mark.parametrize(
    "module",
    [
        "render/explanation.py",
        "render/diagnostics.py",
        "render/hover.py",
        "render/code_lens.py",
        "features/code_actions.py",
        "render/hints.py",
        "server.py",
        "session.py",
        "tokenizers.py",
        "protocol/glass_protocol.py",
        "features/train.py",
        "render/comparison.py",
        "render/model.py",
        "features/browser.py",
        "pages.py",
        "render/browser.py",
    ],
)
def test_every_message_these_features_use_is_in_the_catalogue_in_both_languages(module: str):
    source = (SERVER / module).read_text(encoding="utf-8")
    keys = set(re.findall(r"""(?:say|messages)\(\s*["']([a-z_]+\.[a-z_.]+)["']""", source))
    assert keys, module
    for key in keys:
        assert set(CATALOGUE[key]) == {"en", "pt"}, key


# An editor that sends no locale (eglot), run by someone whose environment is Portuguese.
PORTUGUESE_ENVIRONMENT = {
    **{name: value for name, value in os.environ.items() if name not in ("LC_ALL", "LC_MESSAGES")},
    "LANG": "pt_BR.UTF-8",
}


client_without_locale = session_fixture("emacs", env=PORTUGUESE_ENVIRONMENT, locale=None)


@LOOP
async def test_without_a_client_locale_lang_decides_until_the_setting_says_otherwise(
    client_without_locale: GlassClient,
):
    client = client_without_locale
    uri = open_document(client, "Era uma vez 🧪")
    assert await action_title(client, uri) == "Explicar fusões BPE"
    assert (await diagnostic_messages(client, uri))[0].startswith("'🧪' não está no alfabeto do tokenizador português")
    configure(client, {"locale": "en"})
    assert await action_title(client, uri) == "Explain BPE merges"
