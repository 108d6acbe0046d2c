"""Token budgets as diagnostics, end to end: one diagnostic on the first token past the
budget, exactly placed in UTF-8, UTF-16 and UTF-32, appearing and disappearing while
typing; the settings' budgets (``glassllm.maxTokens``, ``glassllm.budgets``) and the
repository's (``.glassllm.toml``, ``pyproject.toml``), the settings winning; bad
settings and a broken configuration told once. Also the ``budget`` of ``glassllm/stats``
and the code lens's ``3,900 / 4,096``. A ``.jsonl`` dataset of ``{"text": …}`` records
gets the budget per line, placed through the records' JSON escapes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from glassllm import packaged
from tests.server.oracle import PT, TRICKY, covered, line_spans, range_of
from tests.server.session import (
    LOOP,
    GlassClient,
    change_document,
    configure,
    eventually,
    identifier,
    new_uri,
    open_document,
)

pytestmark = LOOP
EN = packaged("en")


def budget_items(client: GlassClient, found: list[types.Diagnostic]) -> list[types.Diagnostic]:
    return [d for d in found if d.code == "token-budget"]


async def current(client: GlassClient, uri: str) -> list[types.Diagnostic]:
    """The budget diagnostics the editor has now: pulled afresh where the client pulls,
    else the last pushed."""
    if client.preset == "neovim@0.11":
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=identifier(uri))
        )
        assert isinstance(report, types.FullDocumentDiagnosticReport | types.RelatedFullDocumentDiagnosticReport)
        return budget_items(client, list(report.items))
    return budget_items(client, list(client.diagnostics.get(uri, [])))


async def settle(
    client: GlassClient, uri: str, count: int, message: str = "", timeout: float = 10.0
) -> list[types.Diagnostic]:
    """The budget diagnostics once there are ``count`` of them, their messages starting
    with ``message`` (a push comes debounced)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        found = await current(client, uri)
        settled = len(found) == count and all(d.message.startswith(message) for d in found)
        if settled or asyncio.get_running_loop().time() > deadline:
            assert len(found) == count, f"expected {count} budget diagnostics, found {found}"
            return found
        await asyncio.sleep(0.02)


def token_past(text: str, limit: int, tokenizer: Any = PT) -> tuple[int, int]:
    """The code-point span of token number ``limit + 1`` (oracle side)."""
    _, _, start, end = line_spans(tokenizer, text)[limit]
    return start, end


def end_of(text: str, encoding: str) -> types.Position:
    return range_of(text, len(text), len(text), encoding).start


@pytest.fixture(autouse=True)
def no_budget(client: GlassClient):
    yield
    configure(client, {})


async def test_a_budget_diagnostic_appears_and_disappears_while_typing(client: GlassClient):
    text = "Era uma vez 🙂 um gato"
    count = len(line_spans(PT, text))
    configure(client, {"maxTokens": count + 2})
    uri = open_document(client, text)
    assert await settle(client, uri, 0) == []
    typed, version = text, 1
    for word in [" que", " comia", " muito"]:
        version += 1
        change_document(
            client,
            uri,
            version,
            (types.Range(start=end_of(typed, client.encoding), end=end_of(typed, client.encoding)), word),
        )
        typed += word
    (diagnostic,) = await settle(client, uri, 1)
    start, end = token_past(typed, count + 2)
    assert diagnostic.range == range_of(typed, start, end, client.encoding)
    total = len(line_spans(PT, typed))
    assert diagnostic.message == f"token {count + 3:,} of {count + 2:,} — {total - count - 2:,} over, Portuguese"
    assert diagnostic.severity == types.DiagnosticSeverity.Error and diagnostic.source == "glassllm"
    # Deleting back under the budget takes it away.
    version += 1
    cut = types.Range(start=end_of(text + " que", client.encoding), end=end_of(typed, client.encoding))
    change_document(client, uri, version, (cut, ""))
    assert await settle(client, uri, 0) == []


@pytest.mark.parametrize("limit", [3, 9, 12, 17, 20])
async def test_the_diagnostic_is_on_the_first_token_past_the_budget_in_every_encoding(client: GlassClient, limit: int):
    """Emoji (a surrogate pair in UTF-16), CRLF, a lone CR, NFC, tabs and U+2028 before it."""
    spans = line_spans(PT, TRICKY)
    configure(client, {"maxTokens": limit})
    uri = open_document(client, TRICKY)
    (diagnostic,) = await settle(client, uri, 1)
    start, end = token_past(TRICKY, limit)
    assert diagnostic.range == range_of(TRICKY, start, end, client.encoding)
    if TRICKY[start:end] not in ("\r\n", "\r", "\n"):
        assert covered(TRICKY, diagnostic.range, client.encoding) == TRICKY[start:end]
    assert f"— {len(spans) - limit:,} over" in diagnostic.message


async def test_at_the_budget_exactly_there_is_none(client: GlassClient):
    text = "Era uma vez\r\nsem fim"
    configure(client, {"maxTokens": len(line_spans(PT, text))})
    uri = open_document(client, text)
    assert await settle(client, uri, 0) == []


async def test_a_budget_of_the_settings_names_files_and_severity_and_its_tokenizer(client: GlassClient):
    text = "Era uma vez um gato que comia muito"
    configure(
        client,
        {
            "maxTokens": 1000,
            "budgets": [{"files": "*.txt", "maxTokens": 4, "severity": "warning", "tokenizer": "en"}],
        },
    )
    uri = open_document(client, text)
    (diagnostic,) = await settle(client, uri, 1)
    start, end = token_past(text, 4, EN)
    assert diagnostic.range == range_of(text, start, end, client.encoding)
    assert diagnostic.severity == types.DiagnosticSeverity.Warning
    assert diagnostic.message.endswith(f"{len(EN.encode(text)) - 4:,} over, English")
    answer = await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
    budget = answer.budget
    assert (budget.tokens, budget.maxTokens, budget.severity, budget.files) == (
        len(EN.encode(text)),
        4,
        "warning",
        "*.txt",
    )
    assert budget.text == f"{len(EN.encode(text))} / 4" and budget.source == "settings"


async def test_stats_and_the_code_lens_show_the_budget_s_use(client: GlassClient):
    text = "Era uma vez"
    count = len(PT.encode(text))
    configure(client, {"maxTokens": 4096})
    uri = open_document(client, text)
    answer = await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
    assert answer.budget.text == f"{count} / 4,096" and answer.budget.unitsOver == 0
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(text_document=identifier(uri)))
    assert lenses is not None and lenses[0].command is not None
    assert lenses[0].command.title.startswith(f"{count} / 4,096 tokens · ")
    configure(client, {})
    answer = await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
    assert getattr(answer, "budget", None) is None


async def test_bad_budget_settings_are_reported_once(client: GlassClient):
    before = len(client.messages)
    for _ in range(3):
        configure(client, {"budgets": [{"files": "*.md", "maxTokens": "4k"}], "maxTokens": 0})
    uri = open_document(client, "Era uma vez")
    for version in range(2, 5):
        change_document(client, uri, version, "Era uma vez um gato" * version)
    await settle(client, uri, 0)

    async def both_shown() -> bool:
        return len(client.messages) - before >= 2

    assert await eventually(both_shown)
    # A request answered after everything above: any later message would be there by now.
    await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
    shown = [m.message for m in client.messages[before:]]
    assert sorted(shown) == sorted(
        [
            "glassllm: glassllm.budgets[0].maxTokens must be a positive integer, found '4k'. Using the default.",
            "glassllm: invalid setting glassllm.maxTokens = 0: expected a positive integer, or null for no budget."
            " Using the default.",
        ]
    )


async def test_the_portuguese_message(client_pt: GlassClient):
    text = "Era uma vez um gato que comia muito"
    configure(client_pt, {"maxTokens": 3})
    uri = open_document(client_pt, text)
    (diagnostic,) = await settle(client_pt, uri, 1)
    assert diagnostic.message == f"token 4 de 3 — {len(PT.encode(text)) - 3} a mais, português"
    configure(client_pt, {"maxTokens": 3, "budgets": [{"files": "*.txt", "maxTokens": "x"}]})

    async def told() -> bool:
        return any(
            "glassllm.budgets[0].maxTokens deve ser um inteiro positivo" in m.message for m in client_pt.messages
        )

    assert await eventually(told)
    configure(client_pt, {})


async def test_a_budget_tokenizer_that_does_not_load_is_told_once_and_checks_nothing(client: GlassClient):
    missing = "/nonexistent/budget-tokenizer.json"
    before = len(client.messages)
    configure(client, {"budgets": [{"files": "*.txt", "maxTokens": 2, "tokenizer": missing}]})
    uri = open_document(client, "Era uma vez um gato")
    for version in range(2, 4):
        change_document(client, uri, version, "Era uma vez um gato" * version)

    # Pulled or pushed, the diagnostics ask for the budget's tokenizer.
    assert await settle(client, uri, 0) == []

    async def told() -> bool:
        return len(client.messages) > before

    assert await eventually(told)
    await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
    shown = [m.message for m in client.messages[before:]]
    assert len(shown) == 1 and shown[0].startswith(f"glassllm: cannot count a budget with the tokenizer {missing}: ")


def file_document(client: GlassClient, path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="plaintext", version=1, text=text)
        )
    )
    return uri


async def test_the_repository_s_budgets_apply_and_the_settings_win(client: GlassClient, tmp_path: Path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        "[tool.glassllm]\nmaxTokens = 1000\n\n[[tool.glassllm.budgets]]\n"
        'files = "prompts/"\nmaxTokens = 3\nseverity = "warning"\n',
        encoding="utf-8",
    )
    (tmp_path / "prompts").mkdir()
    text = "Era uma vez um gato"
    uri = file_document(client, tmp_path / "prompts" / "a.txt", text)
    (diagnostic,) = await settle(client, uri, 1)
    start, end = token_past(text, 3)
    assert diagnostic.range == range_of(text, start, end, client.encoding)
    assert diagnostic.severity == types.DiagnosticSeverity.Warning
    other = file_document(client, tmp_path / "b.txt", text)
    assert await settle(client, other, 0) == []
    # The editor's setting wins over the repository's budget.
    configure(client, {"maxTokens": 100})
    assert await settle(client, uri, 0) == []
    configure(client, {})
    await settle(client, uri, 1, "token 4 of 3 ")
    # A .glassllm.toml beside it comes first, read again when it changes.
    (tmp_path / "prompts" / ".glassllm.toml").write_text("maxTokens = 2\n", encoding="utf-8")
    change_document(client, uri, 2, text)
    (diagnostic,) = await settle(client, uri, 1, "token 3 of 2 ")
    assert diagnostic.severity == types.DiagnosticSeverity.Error


async def test_a_broken_repository_configuration_is_told_once(client: GlassClient, tmp_path: Path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".glassllm.toml").write_text("maxtokens = 3\n", encoding="utf-8")
    before = len(client.messages)
    uri = file_document(client, tmp_path / "a.txt", "Era uma vez")
    for version in range(2, 5):
        change_document(client, uri, version, "Era uma vez" + " um" * version)
    await settle(client, uri, 0)

    async def told() -> bool:
        return len(client.messages) > before

    assert await eventually(told)
    await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
    shown = [m.message for m in client.messages[before:]]
    assert len(shown) == 1, shown
    assert "unknown key 'maxtokens'" in shown[0] and "repository's budgets are not checked" in shown[0]


def record_line(value: str) -> str:
    """A ``{"text": value}`` record as json.dumps writes it (escapes for all but ASCII)."""
    return json.dumps({"text": value})


def value_offsets(line_start: int, value: str) -> list[int]:
    """Oracle: the document offset of each code point of ``value`` in its record line
    starting at ``line_start``, and of the closing quote; json.dumps escapes a string one
    code point at a time, so each one's source is its own dump's."""
    offsets, at = [], line_start + len('{"text": "')
    for character in value:
        offsets.append(at)
        at += len(json.dumps(character)) - 2
    return [*offsets, at]


def open_dataset(client: GlassClient, text: str) -> str:
    uri = new_uri("data").removesuffix(".txt") + ".jsonl"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="jsonl", version=1, text=text)
        )
    )
    return uri


VALUES = [
    "Era uma vez",
    'caf\u00e9 🙂 e um gato\nque comia "muito" pão, \U0001f468\u200d\U0001f469',
    "oi",
]


@pytest.mark.parametrize("ending", ["\n", "\r\n"])
async def test_a_dataset_gets_the_budget_per_line_on_the_escapes_as_written(client: GlassClient, ending: str):
    limit = 6
    lines = [record_line(value) for value in VALUES]
    text = ending.join(lines) + ending
    configure(client, {"maxTokens": limit})
    uri = open_dataset(client, text)
    (diagnostic,) = await settle(client, uri, 1)
    line_start = len(lines[0]) + len(ending)
    offsets = value_offsets(line_start, VALUES[1])
    token = PT.encode_spans(VALUES[1])[limit]
    assert diagnostic.range == range_of(text, offsets[token.start], offsets[token.end], client.encoding)
    over = len(PT.encode(VALUES[1])) - limit
    assert diagnostic.message == f"token {limit + 1} of {limit} — {over} over, Portuguese"
    answer = await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
    assert (answer.budget.tokens, answer.budget.units, answer.budget.unitsOver) == (len(PT.encode(VALUES[1])), 3, 1)
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(text_document=identifier(uri)))
    assert lenses is not None
    titles = {lens.range.start.line: lens.command.title for lens in lenses[1:] if lens.command is not None}
    assert titles == {number: f"{len(PT.encode(value))} / {limit}" for number, value in enumerate(VALUES)}


async def test_typing_in_a_record_passes_its_budget_and_deleting_comes_back(client: GlassClient):
    first = record_line("Era uma vez")
    text = first + "\n" + record_line("oi") + "\n"
    limit = len(PT.encode("Era uma vez um gato"))
    configure(client, {"maxTokens": limit})
    uri = open_dataset(client, text)
    assert await settle(client, uri, 0) == []
    # Typing inside the first record's string, before its closing quote.
    at = range_of(text, len(first) - 2, len(first) - 2, client.encoding).start
    change_document(client, uri, 2, (types.Range(start=at, end=at), " um gato que comia"))
    typed = text[: len(first) - 2] + " um gato que comia" + text[len(first) - 2 :]
    (diagnostic,) = await settle(client, uri, 1)
    value = "Era uma vez um gato que comia"
    token = PT.encode_spans(value)[limit]
    offsets = value_offsets(0, value)
    assert diagnostic.range == range_of(typed, offsets[token.start], offsets[token.end], client.encoding)
    # A line broken mid-typing is no record: it is not counted, and nothing breaks.
    change_document(client, uri, 3, typed.replace('"}', "", 1))
    assert await settle(client, uri, 0) == []
    change_document(client, uri, 4, text)
    assert await settle(client, uri, 0) == []


async def test_a_budget_under_another_tokenizer_is_counted_while_requests_are_answered(
    client: GlassClient, corpus_text
):
    """The budget's own tokenizer counts a large document a slice at a time: a hover sent
    while the diagnostics wait for that count is answered first, and the diagnostic is
    still on the exact token past the budget; an edit then counts only its lines again."""
    text = corpus_text("pt", 1_000_000)
    spans = line_spans(EN, text)
    limit = len(spans) - 7
    uri = open_document(client, text, "large")
    # Its own tokens first, with no budget: what the hovers wait on below is the budget's count.
    await current(client, uri)
    configure(client, {"budgets": [{"files": "*.txt", "maxTokens": limit, "tokenizer": "en"}]})
    # Sent now, before any hover (the call writes the request; its answer comes later).
    pending = asyncio.wrap_future(
        client.text_document_diagnostic(types.DocumentDiagnosticParams(text_document=identifier(uri)))
    )
    answered = 0
    deadline = asyncio.get_running_loop().time() + 120
    while not pending.done() and asyncio.get_running_loop().time() < deadline:
        await client.text_document_hover_async(
            types.HoverParams(text_document=identifier(uri), position=types.Position(line=0, character=0))
        )
        answered += not pending.done()
    report = await pending
    assert answered >= 1, "no hover was answered while the budget's tokenizer counted"
    assert isinstance(report, types.FullDocumentDiagnosticReport | types.RelatedFullDocumentDiagnosticReport)
    (diagnostic,) = budget_items(client, list(report.items))
    start, end = token_past(text, limit, EN)
    assert diagnostic.range == range_of(text, start, end, client.encoding)
    assert diagnostic.message == f"token {limit + 1:,} of {limit:,} — 7 over, English"
    # Typing a word at the start: the count follows, and so does the diagnostic.
    change_document(client, uri, 2, (types.Range(start=types.Position(0, 0), end=types.Position(0, 0)), "Olá "))
    typed = "Olá " + text
    start, end = token_past(typed, limit, EN)
    over = len(line_spans(EN, typed)) - limit
    (diagnostic,) = await settle(client, uri, 1, f"token {limit + 1:,} of {limit:,} — {over} over", timeout=60)
    assert diagnostic.range == range_of(typed, start, end, client.encoding)
