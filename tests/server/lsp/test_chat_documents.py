"""Chat documents end to end (glassllm_server/chat_documents.py): a conversation in JSON, or
a JSONL dataset, opened with Llama 3's tokenizer counts what the model receives through
its chat template, the oracle being the library's own ``encode_chat`` (itself checked
against transformers' ``apply_chat_template`` in tests/library/chat): the count with the
template's share in the code lens and glassllm/stats, each message token's hover with its
range exact through JSON escapes in UTF-8/16/32, the template's text as inlay hints where
it goes, special-token text in a message as a warning, and a template that loops for ever
told once while the server answers."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types

from glassllm import load_tokenizer
from glassllm.chat import ChatEncoding, conversation_from, encode_chat, load_chat_format
from glassllm.shown.visible import visible
from glassllm_server.render.chat import HINT_CHARACTERS
from tests.library.formats.fixtures import model_file
from tests.server.oracle import offset_of, position_of
from tests.server.session import (
    LOOP,
    GlassClient,
    change_document,
    configure,
    configure_and_wait,
    eventually,
    hover,
    identifier,
    markdown,
    open_document,
    session_fixture,
)

pytestmark = LOOP

client = session_fixture()
# The looping template's test waits out the server's 10 s render deadline, which no
# position encoding changes: one preset runs it.
one_client = session_fixture("emacs")

# Each message's content, and how the document writes each of its characters: escapes
# of every kind (\n, \", \\, \u00e9, a surrogate pair) beside the characters themselves.
CONTENTS = ["You answer in one line.", 'Olá, "café"\nnão é 😀 🙂!', "Ok\\done", "<|eot_id|>then more"]
ROLES = ["system", "user", "assistant", "user"]


def escaped(character: str, number: int) -> str:
    """One character as a JSON string writes it: escaped every other time it can be."""
    if character in '"\\\n':
        return json.dumps(character)[1:-1]
    if not character.isascii() and number % 2:
        return json.dumps(character)[1:-1]  # \u00e9, or a surrogate pair for an emoji
    return character


def chat_document(contents: list[str]) -> tuple[str, list[list[tuple[int, int]]]]:
    """A JSON conversation written by hand, and where each content character's source is
    (document offsets), independently of the server's JSON reading."""
    text, sources = '{"messages": [\n', []
    for number, (role, content) in enumerate(zip(ROLES, contents, strict=False)):
        text += f'  {{"role": "{role}", "content": "'
        places = []
        for index, character in enumerate(content):
            written = escaped(character, index)
            places.append((len(text), len(text) + len(written)))
            text += written
        sources.append(places)
        text += '"}' + (",\n" if number < len(contents) - 1 else "\n")
    return text + "]}\n", sources


def oracle(text: str) -> ChatEncoding:
    chat = load_chat_format(model_file("llama3"))
    try:
        return encode_chat(chat, conversation_from(json.loads(text), "oracle"))
    finally:
        chat.close()


async def use_llama3(client: GlassClient, **settings: Any) -> None:
    await configure_and_wait(client, {"tokenizer": str(model_file("llama3")), **settings})


async def lenses(client: GlassClient, uri: str) -> list[types.CodeLens]:
    found = await client.text_document_code_lens_async(types.CodeLensParams(text_document=identifier(uri)))
    resolved = []
    for lens in found or []:
        resolved.append(lens if lens.command is not None else await client.code_lens_resolve_async(lens))
    return resolved


async def chat_lens(client: GlassClient, uri: str) -> list[types.CodeLens]:
    """The lenses once they count the prompt (the chat format loads after the tokenizer)."""

    async def counted() -> list[types.CodeLens] | None:
        found = await lenses(client, uri)
        return found if all(lens.command and "template" in lens.command.title for lens in found) else None

    # The chat format loads in the server's chat thread (Llama 3's tokenizer once more):
    # on a busy machine that takes a while.
    found = await eventually(counted, 120)
    assert found, f"no chat count within 120 s; the server said: {[shown.message for shown in client.messages]}"
    return found


def title(count: int, template: int) -> str:
    return f"{count:,} tokens ({template:,} from the template)"


async def test_a_conversations_count_is_its_prompts_with_the_templates_share(client):
    await use_llama3(client)
    text, _ = chat_document(CONTENTS)
    expected = oracle(text)
    uri = open_document(client, text, "chat", suffix=".json")
    [lens] = await chat_lens(client, uri)
    assert lens.range.start == types.Position(line=0, character=0)
    assert lens.command is not None and lens.command.title == title(expected.count, expected.template_count)
    answer = await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
    assert answer.tokens == expected.count
    assert (answer.chat.count, answer.chat.templateCount, answer.chat.conversations) == (
        expected.count,
        expected.template_count,
        1,
    )


async def test_glassllm_s_own_tokenizer_counts_a_conversation_as_text_and_leaves_the_model_s_chat_format_alone(
    client,
):
    # Only a real model's tokenizer has a chat template: a .json conversation counted with
    # glassllm's own is plain text, and no chat format is looked for (a failed look once
    # marked the next model's format broken when the settings changed meanwhile).
    await configure_and_wait(client, {"tokenizer": "pt"})
    told = len(client.messages)
    text, _ = chat_document(CONTENTS[:2])
    uri = open_document(client, text, "own", suffix=".json")
    [lens] = await lenses(client, uri)
    assert lens.command is not None and "template" not in lens.command.title
    await use_llama3(client)
    [lens] = await chat_lens(client, uri)
    expected = oracle(text)
    assert lens.command is not None and lens.command.title == title(expected.count, expected.template_count)
    assert [shown.message for shown in client.messages[told:]] == []


async def test_hover_on_message_text_gives_its_token_exactly_through_escapes(client):
    await use_llama3(client)
    text, sources = chat_document(CONTENTS)
    expected = oracle(text)
    uri = open_document(client, text, "chat", suffix=".json")
    await chat_lens(client, uri)
    for number, token in enumerate(expected.tokens):
        if token.source is None:
            continue
        message, start, end = token.source
        first, last = sources[message][start][0], sources[message][end - 1][1]
        for offset in {first, sources[message][end - 1][0]}:
            answer = await hover(client, uri, position_of(text, offset, client.encoding))
            shown = markdown(answer)
            assert f"ID {token.id}" in shown and f"token {number:,} of {expected.count:,}" in shown, (offset, shown)
            assert f"message {message} ({ROLES[message]})" in shown
            assert answer is not None and answer.range is not None
            covered = (
                offset_of(text, answer.range.start, client.encoding),
                offset_of(text, answer.range.end, client.encoding),
            )
            assert covered == (first, last), (token, text[first:last], text[covered[0] : covered[1]])
    # Off the messages' text (a key, the JSON's syntax) the model receives nothing.
    assert await hover(client, uri, position_of(text, text.index('"role"') + 1, client.encoding)) is None


def runs(encoding: ChatEncoding) -> list[str]:
    """The template's text between the messages', run by run."""
    found: list[str] = []
    previous = False
    for token in encoding.tokens:
        template = token.source is None
        if template and previous:
            found[-1] += encoding.rendered[token.start : token.end]
        elif template:
            found.append(encoding.rendered[token.start : token.end])
        previous = template
    return found


async def test_inlay_hints_show_the_template_text_where_it_goes(client):
    await use_llama3(client)
    text, sources = chat_document(CONTENTS)
    expected = oracle(text)
    uri = open_document(client, text, "chat", suffix=".json")
    await chat_lens(client, uri)
    whole = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=99, character=0))
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(text_document=identifier(uri), range=whole)
    )
    assert hints is not None
    wanted = [
        visible(run) if len(visible(run)) <= HINT_CHARACTERS else visible(run)[: HINT_CHARACTERS - 1] + "…"
        for run in runs(expected)
    ]
    assert [hint.label for hint in hints] == wanted
    # Each before its message's text, the last after the last message's.
    places = [offset_of(text, hint.position, client.encoding) for hint in hints]
    assert places == [sources[0][0][0], sources[1][0][0], sources[2][0][0], sources[3][0][0], sources[3][-1][1]]
    assert hints[1].label == "<|eot_id|><|start_header_id|>user<|end_header_id|>\\n\\n"
    assert isinstance(hints[1].tooltip, types.MarkupContent) and "inserts 5 tokens here" in hints[1].tooltip.value
    # and which part of the template wrote them: Llama 3's {{ content }}, on its third line
    assert hints[1].tooltip.value.endswith("\n\n- line 3 of the template, `{{ content }}`: 5 tokens")
    last = hints[-1].tooltip
    assert isinstance(last, types.MarkupContent)
    header = "`{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}`"
    assert last.value.endswith(
        f"- line 3 of the template, `{{{{ content }}}}`: 1 token\n- line 3 of the template, {header}: 4 tokens"
    )


async def test_special_token_text_in_a_message_is_a_warning_on_exactly_it(client):
    await use_llama3(client)
    text, sources = chat_document(CONTENTS)
    uri = open_document(client, text, "chat", suffix=".json")
    await chat_lens(client, uri)
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(text_document=identifier(uri)))
    assert report.kind == "full"
    [special] = report.items
    assert special.severity == types.DiagnosticSeverity.Warning
    place = offset_of(text, special.range.start, client.encoding), offset_of(text, special.range.end, client.encoding)
    assert text[place[0] : place[1]] == "<|eot_id|>" and place[0] == sources[3][0][0]
    assert special.code == "special-token-in-message"
    assert "Message 3 holds <|eot_id|>" in special.message and "prompt injection" in special.message


async def test_each_jsonl_line_gets_its_own_count_and_edits_recount_only_it(client):
    await use_llama3(client)
    lines = [chat_document(CONTENTS[:count])[0].replace("\n", "") for count in (1, 2, 3)]
    document = "\n".join([lines[0], "", lines[1], '{"text": "not a conversation"}', lines[2]]) + "\n"
    uri = open_document(client, document, "data", suffix=".jsonl")
    found = await lenses(client, uri)
    assert [lens.range.start.line for lens in found] == [0, 2, 3, 4]
    expected = [oracle(line) for line in lines]
    titles = [lens.command.title if lens.command else None for lens in found]
    assert titles[0] == title(expected[0].count, expected[0].template_count)
    assert titles[1] == title(expected[1].count, expected[1].template_count)
    assert titles[2] is not None and "template" not in titles[2]  # plain text: its own count
    assert titles[3] == title(expected[2].count, expected[2].template_count)
    answer = await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
    assert answer.chat.conversations == 3 and answer.tokens == sum(each.count for each in expected)
    # A hover on line 2 lands on line 2, its columns exact.
    column = lines[1].index("Olá")
    answer = await hover(client, uri, types.Position(line=2, character=column))
    assert answer is not None and answer.range is not None and answer.range.start.line == 2
    edited = lines[1].replace("Olá", "Oi")
    start, end = types.Position(line=2, character=0), types.Position(line=2, character=len(lines[1]) + 10)
    change_document(client, uri, 2, (types.Range(start=start, end=end), edited))
    found = await lenses(client, uri)
    changed = oracle(edited)
    assert found[1].command is not None and found[1].command.title == title(changed.count, changed.template_count)


LOOPING = "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}"


async def test_a_looping_template_is_told_once_while_the_server_answers(one_client: GlassClient, tmp_path: Path):
    template = tmp_path / "looping.jinja"
    template.write_text(LOOPING, encoding="utf-8")
    await use_llama3(one_client, chatTemplate=str(template))
    text, _ = chat_document(CONTENTS[:2])
    uri = open_document(one_client, text, "looping", suffix=".json")
    counting = asyncio.ensure_future(lenses(one_client, uri))
    # Meanwhile the server answers: a hover (the plain token once its wait is over) and
    # another document's count.
    answer = await hover(one_client, uri, position_of(text, text.index("You"), one_client.encoding))
    assert answer is not None and "ID" in markdown(answer)
    other = open_document(one_client, "Era uma vez")
    assert (await one_client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": other}})).tokens > 0
    assert not counting.done()
    [lens] = await counting  # the worker's deadline passed: the plain count
    assert lens.command is not None and "template" not in lens.command.title
    for version in range(2, 5):  # edits: no new message
        change_document(one_client, uri, version, text.replace("You", "We" * version))
        await lenses(one_client, uri)
    told = [m.message for m in one_client.messages if "looping.jinja" in m.message]
    assert len(told) == 1, told
    assert "ran longer than 10 s and was stopped" in told[0] and str(template) in told[0]
    configure(one_client, {"chatTemplate": "auto"})


async def test_a_ten_thousand_line_dataset_gets_its_lenses_at_once_and_counts_a_line_when_resolved(client):
    await use_llama3(client)
    line = chat_document(CONTENTS[:2])[0].replace("\n", "")
    document = "\n".join(line.replace("Olá", f"Olá {number}") for number in range(10_000)) + "\n"
    uri = open_document(client, document, "big", suffix=".jsonl")
    found = await client.text_document_code_lens_async(types.CodeLensParams(text_document=identifier(uri)))
    assert found is not None and len(found) == 10_000
    assert all(lens.command is None for lens in found[1:])  # counted when resolved, not before
    visible = await client.code_lens_resolve_async(found[5000])
    expected = oracle(line.replace("Olá", "Olá 5000"))
    assert visible.command is not None and visible.command.title == title(expected.count, expected.template_count)
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=identifier(uri)))


async def test_the_bands_are_the_message_tokens_as_the_model_receives_them(client):
    await use_llama3(client)
    text, sources = chat_document(CONTENTS)
    expected = oracle(text)
    uri = open_document(client, text, "chat", suffix=".json")
    await chat_lens(client, uri)
    answer = await client.text_document_semantic_tokens_full_async(
        types.SemanticTokensParams(text_document=identifier(uri))
    )
    assert answer is not None
    bands, line, start = set(), 0, 0
    for index in range(0, len(answer.data), 5):
        delta_line, delta_start, length = answer.data[index : index + 3]
        line, start = line + delta_line, (start + delta_start if delta_line == 0 else delta_start)
        bands.add((line, start, start + length))
    ranges = set()
    for token in expected.tokens:
        if token.source is not None:
            message, first, last = token.source
            begin = position_of(text, sources[message][first][0], client.encoding)
            end = position_of(text, sources[message][last - 1][1], client.encoding)
            ranges.add((begin.line, begin.character, end.character))
    # A band each, but one for the tokens that share a character (an emoji's bytes).
    wanted, covered = set(), (-1, 0)
    for line, begin, end in sorted(ranges):
        if (line, begin) >= covered:
            wanted.add((line, begin, end))
            covered = (line, end)
    assert bands == wanted


# Budgets on chat documents: checked against the prompt the model receives, template included.


def budgeted(encoding: ChatEncoding, limit: int) -> str:
    return f"{encoding.count:,} / {limit:,} tokens ({encoding.template_count:,} from the template)"


async def diagnostics_of(client: GlassClient, uri: str, code: str) -> list[types.Diagnostic]:
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(text_document=identifier(uri)))
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    return [item for item in report.items if item.code == code]


async def test_a_budget_on_a_conversation_counts_its_prompt_and_marks_the_first_token_past_it(client):
    text, sources = chat_document(CONTENTS)
    expected = oracle(text)
    # The model's count differs from the JSON text's: the budget must be the prompt's.
    plain = len(load_tokenizer(str(model_file("llama3"))).encode(text))
    assert plain != expected.count
    message_token = next(number for number, token in enumerate(expected.tokens) if token.source is not None)
    assert expected.tokens[1].source is None  # <|start_header_id|>, written by the template
    for version, limit in enumerate((1, message_token, expected.count - 1, expected.count)):
        await use_llama3(client, maxTokens=limit)
        uri = open_document(client, text, f"budget{version}", suffix=".json")
        await chat_lens(client, uri)
        over = await diagnostics_of(client, uri, "token-budget")
        if limit == expected.count:
            assert over == []
            continue
        [diagnostic] = over
        assert diagnostic.message.startswith(f"token {limit + 1:,} of {limit:,} — {expected.count - limit:,} over")
        place = (
            offset_of(text, diagnostic.range.start, client.encoding),
            offset_of(text, diagnostic.range.end, client.encoding),
        )
        source = expected.tokens[limit].source
        if source is None:  # a template token: the empty range where the template inserts it
            after = sources[3][-1][1] if limit == expected.count - 1 else sources[0][0][0]
            assert place == (after, after), (limit, place)
        else:
            assert place == (sources[source.message][source.start][0], sources[source.message][source.end - 1][1])
    answer = await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
    assert (answer.budget.tokens, answer.budget.templateTokens) == (expected.count, expected.template_count)
    [lens] = await lenses(client, uri)
    assert lens.command is not None
    assert (
        lens.command.title == f"{expected.count:,} / {limit:,} tokens ({expected.template_count:,} from the template)"
    )
    await use_llama3(client)


def source_message_after(encoding: ChatEncoding, index: int) -> int:
    """The message whose text follows template token ``index`` (where it is inserted)."""
    return next(token.source.message for token in encoding.tokens[index:] if token.source is not None)


async def test_a_chat_dataset_gets_its_budget_per_line_on_the_same_lens_as_its_count(client):
    lines = [chat_document(CONTENTS[:count])[0].replace("\n", "") for count in (1, 2, 3)]
    expected = [oracle(line) for line in lines]
    limit = expected[1].count  # the third line alone passes it
    await use_llama3(client, maxTokens=limit)
    document = "\n".join(lines) + "\n"
    uri = open_document(client, document, "budgeted", suffix=".jsonl")
    found = await chat_lens(client, uri)
    assert [lens.command.title if lens.command else None for lens in found] == [
        budgeted(each, limit) for each in expected
    ]
    [over] = await diagnostics_of(client, uri, "token-budget")
    assert over.message.startswith(f"token {limit + 1:,} of {limit:,} — {expected[2].count - limit:,} over")
    # On the third line, where its first token past the budget is.
    text, sources = chat_document(CONTENTS[:3])
    source = expected[2].tokens[limit].source
    if source is None:
        start = end = sources[source_message_after(expected[2], limit)][0][0]
    else:
        start, end = sources[source.message][source.start][0], sources[source.message][source.end - 1][1]
    start, end = (offset - text.count("\n", 0, offset) for offset in (start, end))  # the line's offsets
    line_start = len(lines[0]) + len(lines[1]) + 2
    assert over.range == types.Range(
        start=position_of(document, line_start + start, client.encoding),
        end=position_of(document, line_start + end, client.encoding),
    )
    answer = await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
    assert (answer.budget.tokens, answer.budget.units, answer.budget.unitsOver) == (expected[2].count, 3, 1)
    # A {"text": …} record among the conversations: its lens gives its text's use.
    record = "Era uma vez um gato"
    mixed = open_document(client, f'{lines[0]}\n{{"text": "{record}"}}\n', "mixed", suffix=".jsonl")
    found = await lenses(client, mixed)
    count = len(load_tokenizer(str(model_file("llama3"))).encode(record))
    assert [lens.command.title if lens.command else None for lens in found] == [
        budgeted(expected[0], limit),
        f"{count:,} / {limit:,}",
    ]
    await use_llama3(client)


async def test_the_editor_and_glassllm_tokens_count_a_chat_dataset_alike(client, tmp_path: Path):
    """Same file, same budget: the server's count of each line (its lenses), the lines it
    marks over the budget, and ``glassllm tokens --json``'s, as CI runs it."""
    lines = [chat_document(CONTENTS[:count])[0].replace("\n", "") for count in (3, 1, 2)]
    lines.insert(2, json.dumps({"text": "Era uma vez 🙂 um gato"}))
    path = tmp_path / "chats.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    limit = oracle(lines[3]).count  # the first line alone passes it
    tokenizer = str(model_file("llama3"))
    environment = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "glassllm.cli", "tokens", str(path), "-t", tokenizer, "--json"]
    done = subprocess.run(
        [*command, "--max-tokens", str(limit)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    [file] = json.loads(done.stdout)["files"]
    cli = {line - 1: count for line, count in file["lines"][tokenizer]}
    await use_llama3(client, maxTokens=limit)
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="jsonl", version=1, text=path.read_text("utf-8"))
        )
    )
    found = await chat_lens_or_record(client, uri)
    editor = {lens.range.start.line: int(lens.command.title.split(" / ")[0].replace(",", "")) for lens in found}
    assert editor == cli and file["counted_as"] == {tokenizer: "chat"}
    over = await diagnostics_of(client, uri, "token-budget")
    assert [item.range.start.line + 1 for item in over] == file["budget"]["lines_over"] == [1]
    answer = await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})
    assert answer.budget.tokens == max(cli.values()) == limit + file["budget"]["over"]
    await use_llama3(client)


async def chat_lens_or_record(client: GlassClient, uri: str) -> list[Any]:
    """Every line's lens once each counts (a conversation's says its template's share)."""

    async def counted() -> list[types.CodeLens] | None:
        found = await lenses(client, uri)
        ready = all(lens.command and " / " in lens.command.title for lens in found)
        return (
            found
            if ready and any("template" in (lens.command.title if lens.command else "") for lens in found)
            else None
        )

    found = await eventually(counted, 120)
    assert found, f"no chat count within 120 s; the server said: {[shown.message for shown in client.messages]}"
    return found
