"""Training from the editor end to end: progress in percent, the tokenizer written and
offered, cancellation that leaves no file, clear errors."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp.client import captured_exception_key

from glassllm import Tokenizer
from tests.conftest import CORPORA
from tests.server.session import LOOP, GlassClient, configure, open_document

pytestmark = LOOP
HELDOUT = CORPORA / "pt" / "heldout.txt"


@dataclass
class Offers:
    """The ``window/showMessageRequest`` questions the server asked, and the title of
    the action the user picks for the next ones (``None``: the user dismisses them)."""

    asked: list[types.ShowMessageRequestParams] = field(default_factory=list)
    choice: str | None = None


@pytest.fixture(autouse=True, scope="module")
def offers(client: GlassClient) -> Offers:
    """Answer ``window/showMessageRequest`` with ``offers.choice`` and keep the questions."""
    offers = Offers()

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def offer(params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        offers.asked.append(params)
        return None if offers.choice is None else types.MessageActionItem(title=offers.choice)

    return offers


async def train(client: GlassClient, *arguments: Any) -> Any:
    answer = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="glassllm.trainTokenizer", arguments=list(arguments))
    )
    assert answer is not None
    return answer


def new_token(client: GlassClient, seen: set[types.ProgressToken]) -> types.ProgressToken:
    (token,) = [token for token in client.progress_reports if token not in seen]
    return token


async def stats(client: GlassClient, uri: str):
    return await client.protocol.send_request_async("glassllm/stats", {"textDocument": {"uri": uri}})


async def test_training_on_a_document_reports_percent_writes_the_file_and_switches(
    client: GlassClient, offers: Offers, tmp_path: Path
):
    text = HELDOUT.read_text(encoding="utf-8")[:20000]
    uri = open_document(client, text)
    output = tmp_path / "new" / "mine.json"
    seen = set(client.progress_reports)
    offers.choice = "Use it"
    answer = await train(client, uri, 300, str(output))
    assert answer["cancelled"] is False and answer["path"] == str(output)
    expected = Tokenizer.train(text, 300)
    saved = Tokenizer.load(output)
    assert saved.merges == expected.merges and saved.merge_counts == expected.merge_counts
    assert answer["vocabSize"] == expected.vocab_size and answer["merges"] == len(expected.merges)

    reports = client.progress_reports[new_token(client, seen)]
    begin, *middle, end = reports
    assert isinstance(begin, types.WorkDoneProgressBegin) and begin.cancellable is True
    assert begin.title == "Training a tokenizer"
    percentages = [
        report.percentage
        for report in middle
        if isinstance(report, types.WorkDoneProgressReport) and report.percentage is not None
    ]
    assert len(percentages) == len(middle)
    assert percentages == sorted(set(percentages)) and percentages[-1] == 100
    assert len(percentages) > 50
    assert isinstance(end, types.WorkDoneProgressEnd) and end.message is not None
    assert end.message.startswith(f"Trained {output}")

    for _ in range(100):
        if (await stats(client, uri)).tokenizer == str(output):
            break
        await asyncio.sleep(0.02)
    assert (await stats(client, uri)).tokenizer == str(output)
    assert offers.asked[-1].message.endswith("Use it in this workspace instead of Portuguese (pt)?")
    assert [action.title for action in offers.asked[-1].actions or []] == ["Use it", "Keep the current one"]
    assert any(message.message.startswith(f"glassllm now uses {output}") for message in client.messages)

    # An unrelated setting keeps the switch; a new tokenizer setting ends it.
    configure(client, {"diagnostics": False})
    assert (await stats(client, uri)).tokenizer == str(output)
    configure(client, {"tokenizer": "en"})
    assert (await stats(client, uri)).tokenizer == "en"
    configure(client, {})
    assert (await stats(client, uri)).tokenizer == "pt"


async def test_training_on_a_folder_reads_its_text_files_and_keeps_the_tokenizer_when_told(
    client: GlassClient, offers: Offers, tmp_path: Path
):
    (tmp_path / "a.txt").write_text("banana banana\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("cabana\n", encoding="utf-8")
    (tmp_path / "c.bin").write_bytes(b"\0\1\2")
    uri = open_document(client, "x")
    before = (await stats(client, uri)).tokenizer
    offers.choice = "Keep the current one"
    asked = len(offers.asked)
    answer = await train(client, tmp_path.as_uri(), 20, str(tmp_path / "out.json"))
    assert answer["files"] == [str(tmp_path / "a.txt"), str(tmp_path / "b.md")]
    assert Tokenizer.load(tmp_path / "out.json").merges == Tokenizer.train("banana banana\ncabana\n", 20).merges
    for _ in range(100):
        if len(offers.asked) > asked:
            break
        await asyncio.sleep(0.02)
    assert len(offers.asked) == asked + 1
    assert (await stats(client, uri)).tokenizer == before


async def test_cancelling_the_progress_stops_training_and_writes_nothing(client: GlassClient, tmp_path: Path):
    corpus = big_corpus(tmp_path)
    output = tmp_path / "out" / "never.json"
    seen = set(client.progress_reports)
    running = asyncio.ensure_future(train(client, str(corpus), 30000, str(output)))
    token = await first_report(client, seen)
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    answer = await running
    assert answer == {"cancelled": True, "path": str(output)}
    assert not output.exists()
    assert sorted(path.name for path in tmp_path.rglob("*")) == ["corpus.txt"]
    end = client.progress_reports[token][-1]
    assert (
        isinstance(end, types.WorkDoneProgressEnd) and end.message == f"Training cancelled: {output} was not written."
    )
    percentages = [r.percentage for r in client.progress_reports[token] if isinstance(r, types.WorkDoneProgressReport)]
    assert percentages[-1] is not None and percentages[-1] < 100


async def test_cancelling_right_at_begin_is_a_cancel(client: GlassClient, tmp_path: Path):
    corpus = big_corpus(tmp_path)
    output = tmp_path / "out" / "never.json"
    seen = set(client.progress_reports)
    running = asyncio.ensure_future(train(client, str(corpus), 30000, str(output)))
    for _ in range(1000):
        fresh = [t for t in client.progress_reports if t not in seen]
        if fresh and client.progress_reports[fresh[0]]:
            break
        await asyncio.sleep(0.001)
    else:
        raise AssertionError("no progress begun")
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=fresh[0]))
    assert await running == {"cancelled": True, "path": str(output)}
    assert not output.exists()


def big_corpus(folder: Path) -> Path:
    """A corpus that takes seconds to train at a large vocabulary."""
    generator = random.Random(7)
    syllables = [a + b for a in "bcdfglmnprstv" for b in "aeiou"]
    words = ["".join(generator.choices(syllables, k=generator.randint(1, 5))) for _ in range(20000)]
    corpus = folder / "corpus.txt"
    corpus.write_text(" ".join(generator.choices(words, k=150000)), encoding="utf-8")
    return corpus


async def first_report(client: GlassClient, seen: set[types.ProgressToken]) -> types.ProgressToken:
    """The token of the new progress, once it has reported some percent."""
    for _ in range(1000):
        fresh = [t for t in client.progress_reports if t not in seen]
        if fresh and any(isinstance(r, types.WorkDoneProgressReport) for r in client.progress_reports[fresh[0]]):
            return fresh[0]
        await asyncio.sleep(0.01)
    raise AssertionError("no progress reported")


async def test_cancelling_the_request_stops_training_and_writes_nothing(client: GlassClient, tmp_path: Path):
    corpus = big_corpus(tmp_path)
    output = tmp_path / "never.json"
    seen = set(client.progress_reports)
    request_id = f"train-{client.preset}"
    running = asyncio.ensure_future(
        client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command="glassllm.trainTokenizer", arguments=[str(corpus), 30000, str(output)]),
            msg_id=request_id,
        )
    )
    token = await first_report(client, seen)
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=request_id))
    with pytest.raises(Exception) as raised:
        await running
    assert getattr(raised.value, "code", None) == -32800  # RequestCancelled
    for _ in range(100):
        if isinstance(client.progress_reports[token][-1], types.WorkDoneProgressEnd):
            break
        await asyncio.sleep(0.01)
    end = client.progress_reports[token][-1]
    assert (
        isinstance(end, types.WorkDoneProgressEnd) and end.message == f"Training cancelled: {output} was not written."
    )
    await asyncio.sleep(0.5)  # the training thread stops at its next merge
    assert sorted(path.name for path in tmp_path.iterdir()) == ["corpus.txt"]


@pytest.mark.parametrize(
    ("source", "size", "problem"),
    [("missing-folder-for-glassllm-tests", 100, "No such file"), (None, 3, "at least")],
)
async def test_problems_are_clear_errors(client: GlassClient, tmp_path: Path, source, size, problem):
    source = open_document(client, "banana") if source is None else str(tmp_path / source)
    with pytest.raises(Exception, match=f"cannot train a tokenizer: .*{problem}"):
        await train(client, source, size, str(tmp_path / "t.json"))
    assert not (tmp_path / "t.json").exists()


async def test_a_file_that_is_not_a_tokenizer_is_replaced_only_when_the_user_says_yes(
    client: GlassClient, offers: Offers, tmp_path: Path
):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n", encoding="utf-8")
    uri = open_document(client, "banana banana\n")
    offers.choice = "Keep the file"
    asked = len(offers.asked)
    assert await train(client, uri, 20, str(notes)) == {"cancelled": True, "path": str(notes)}
    assert notes.read_text(encoding="utf-8") == "my notes\n"
    question = offers.asked[asked]
    assert question.message == (
        f"Replace {notes}? It is not a glassllm tokenizer file, and the trained tokenizer would take its place."
    )
    assert [action.title for action in question.actions or []] == ["Replace", "Keep the file"]

    offers.choice = None  # the user dismissed the question
    assert (await train(client, uri, 20, str(notes)))["cancelled"] is True
    assert notes.read_text(encoding="utf-8") == "my notes\n"

    offers.choice = "Replace"
    answer = await train(client, uri, 20, str(notes))
    assert answer["cancelled"] is False and answer["path"] == str(notes)
    assert Tokenizer.load(notes).merges == Tokenizer.train("banana banana\n", 20).merges
    assert sorted(path.name for path in tmp_path.iterdir()) == ["notes.txt"]

    # Now a tokenizer file: replaced (atomically) without a question.
    asked = len(offers.asked)
    offers.choice = "Keep the current one"
    other = open_document(client, "cabana cabana\n")
    assert (await train(client, other, 20, str(notes)))["cancelled"] is False
    assert Tokenizer.load(notes).merges == Tokenizer.train("cabana cabana\n", 20).merges
    await asyncio.sleep(0.1)
    assert not any(offer.message.startswith("Replace") for offer in offers.asked[asked:])


async def test_a_client_that_cannot_ask_gets_an_error_and_the_file_stays(client: GlassClient, tmp_path: Path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n", encoding="utf-8")
    # Without a handler, the client answers the request with MethodNotFound.
    features = client.protocol.fm.features
    handler = features.pop(types.WINDOW_SHOW_MESSAGE_REQUEST)
    try:
        with pytest.raises(
            Exception, match="exists and is not a glassllm tokenizer file, and the editor cannot be asked"
        ):
            await train(client, open_document(client, "banana"), 20, str(notes))
    finally:
        features[types.WINDOW_SHOW_MESSAGE_REQUEST] = handler
        # pytest-lsp keeps the client's MethodNotFound to fail the test with; here it is
        # the point of the test.
        assert client._pytest_item is not None
        client._pytest_item.stash[captured_exception_key] = None
    assert notes.read_text(encoding="utf-8") == "my notes\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["notes.txt"]


async def train_a_lone_surrogate(client: GlassClient, tmp_path: Path) -> Exception:
    """Train on a document holding a lone surrogate, which JSON can carry ("\\ud800") and
    no UTF-8 text holds; the error answered, and no file written."""
    uri = open_document(client, "banana \ud800 banana\n")
    with pytest.raises(Exception) as raised:
        await train(client, uri, 20, str(tmp_path / "t.json"))
    assert not (tmp_path / "t.json").exists()
    assert getattr(raised.value, "code", None) == -32803  # RequestFailed, not an internal error
    return raised.value


async def test_a_document_with_a_lone_surrogate_is_a_clear_error(client: GlassClient, tmp_path: Path):
    error = await train_a_lone_surrogate(client, tmp_path)
    assert str(error).startswith(
        "glassllm: cannot train a tokenizer: the text holds a lone surrogate (U+D800) at offset 7, "
        "which is not a character"
    )
