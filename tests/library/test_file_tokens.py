"""Files' token counts: exact, found as git finds them, skipped with a reason, cached."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from glassllm import load_tokenizer, packaged
from glassllm.count_cache import CountCache
from glassllm.file_tokens import (
    FileCount,
    LazyTokenizer,
    SkippedFile,
    count_file,
    count_files,
    find_files,
    read_text,
)
from glassllm.shown.problems import describe

LLAMA3 = Path(__file__).resolve().parents[1] / "fixtures" / "models" / "llama3" / "tokenizer.json"
TEXT = "Era uma vez\r\numa menina — 🧪 <|begin_of_text|>\n\n  espaços\t"


def need_llama3() -> None:
    if not LLAMA3.is_file():
        pytest.skip("tests/fixtures/models/llama3 is not there: run tests/fixtures/fetch_models.sh")


def test_a_files_count_is_encode_of_its_text_as_stored(tmp_path):
    need_llama3()
    path = tmp_path / "a.txt"
    path.write_bytes(TEXT.encode("utf-8"))
    for tokenizer in (packaged("pt"), load_tokenizer(LLAMA3), load_tokenizer(LLAMA3, match_specials=True)):
        assert count_file(str(path), tokenizer) == len(tokenizer.encode(TEXT))  # "\r\n" kept


def test_parallel_serial_and_cached_counts_are_the_same(tmp_path, corpus_text):
    text = corpus_text("pt", 600_000)
    lines = text.splitlines(keepends=True)
    paths = []
    for index in range(6):
        path = tmp_path / f"f{index}.txt"
        path.write_text("".join(lines[index::6]), encoding="utf-8")
        paths.append(str(path))
    tokenizers = [LazyTokenizer("pt"), LazyTokenizer("en")]
    expected = {p: [len(packaged(n).encode(Path(p).read_text(encoding="utf-8"))) for n in ("pt", "en")] for p in paths}
    assert count_files(paths, tokenizers, jobs=1).counts == expected
    assert count_files(paths, tokenizers, jobs=2).counts == expected
    cache = CountCache(tmp_path / "cache.sqlite3")
    assert count_files(paths, tokenizers, cache=cache, jobs=2).counts == expected
    assert len(cache) == 12
    # From the cache alone: no tokenizer is loaded.
    cold = [LazyTokenizer("pt"), LazyTokenizer("en")]
    assert count_files(paths, cold, cache=cache).counts == expected
    assert all(tok._loaded is None for tok in cold)


def test_hostile_files_are_skipped_or_reported_one_each(tmp_path):
    (tmp_path / "text.md").write_text("olá", encoding="utf-8")
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0")
    (tmp_path / "latin1.txt").write_bytes("olá".encode("latin-1"))
    (tmp_path / "big.txt").write_text("a" * (2 << 20), encoding="utf-8")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up").symlink_to(tmp_path, target_is_directory=True)  # not followed
    found = find_files([str(tmp_path)])
    counted = count_files(found.files, [LazyTokenizer("pt")], limit=1 << 20)
    assert list(counted.counts) == [str(tmp_path / "text.md")]
    reasons = {Path(s.path).name: s.reason for s in counted.skipped}
    assert reasons == {"big.txt": "too-large", "fifo": "not-regular", "image.png": "binary", "latin1.txt": "not-utf8"}
    (error,) = counted.errors
    assert isinstance(error, OSError) and error.filename == str(tmp_path / "loop")


def test_skipped_files_say_why_in_both_languages(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"ol\xe1")
    with pytest.raises(SkippedFile) as caught:
        read_text(str(path))
    assert str(caught.value) == f"{path}: skipped: not UTF-8 text (byte 0xe1 at offset 2)"
    assert describe(caught.value, "pt") == f"{path}: não contado: não é texto UTF-8 (byte 0xe1 na posição 2)"


def git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)


def test_a_folder_in_a_git_work_tree_is_listed_as_git_lists_it(tmp_path):
    git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text("build/\n*.log\n", encoding="utf-8")
    for name in ("a.md", "build/out.md", "x.log", "docs/b.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name, encoding="utf-8")
    git(tmp_path, "add", "a.md")
    found = find_files([str(tmp_path)])
    assert sorted(os.path.relpath(f, tmp_path) for f in found.files) == [".gitignore", "a.md", "docs/b.md"]
    assert found.ignored == 2  # build/ and x.log
    # A file named on its own is counted, ignored or not; so is what a glob names.
    assert find_files([str(tmp_path / "x.log")]).files == [str(tmp_path / "x.log")]
    globbed = find_files([str(tmp_path / "**" / "*.md")]).files
    assert sorted(os.path.relpath(f, tmp_path) for f in globbed) == ["a.md", "build/out.md", "docs/b.md"]


def test_a_glob_that_matches_nothing_is_a_problem_and_paths_are_counted_once(tmp_path):
    (tmp_path / "a.md").write_text("a", encoding="utf-8")
    found = find_files([str(tmp_path / "*.rst"), str(tmp_path / "a.md"), str(tmp_path / "*.md")])
    assert found.files == [str(tmp_path / "a.md")]
    (problem,) = found.problems
    assert isinstance(problem, FileNotFoundError) and "no file matches this pattern" in str(problem)


def test_a_jsonl_dataset_of_text_records_counts_the_texts(tmp_path):
    pt = packaged("pt")
    records = ["Era uma vez", "uma menina\u2028que morava", ""]
    dataset = tmp_path / "data.jsonl"
    dataset.write_text("\n".join(json.dumps({"text": t, "id": i}) for i, t in enumerate(records)) + "\n\n", "utf-8")
    expected = sum(len(pt.encode(t)) for t in records)
    assert count_file(str(dataset), pt) == expected
    # The same bytes as plain text count the JSON too, and the cache keeps them apart.
    copy = tmp_path / "data.txt"
    copy.write_bytes(dataset.read_bytes())
    whole = len(pt.encode(copy.read_text(encoding="utf-8")))
    cache = CountCache(tmp_path / "c.sqlite3")
    for _ in range(2):
        counted = count_files([str(dataset), str(copy)], [LazyTokenizer("pt")], cache=cache)
        assert counted.counts == {str(dataset): [expected], str(copy): [whole]}
    # A line that is not a text record: the whole file is text.
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text('{"text": "a"}\n{"prompt": "b"}\n', encoding="utf-8")
    assert count_file(str(mixed), pt) == len(pt.encode(mixed.read_text(encoding="utf-8")))


def test_a_folder_that_cannot_be_read_is_a_problem_not_a_silence(tmp_path, monkeypatch):
    (tmp_path / "open").mkdir()
    (tmp_path / "open" / "a.md").write_text("a", encoding="utf-8")
    (tmp_path / "closed").mkdir()
    scandir = os.scandir

    def refusing(path):
        if os.fspath(path).endswith("closed"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return scandir(path)

    # As root, no folder refuses to be read: os.walk is made to meet one.
    monkeypatch.setattr(os, "scandir", refusing)
    found = find_files([str(tmp_path)])
    assert found.files == [str(tmp_path / "open" / "a.md")]
    (problem,) = found.problems
    assert isinstance(problem, PermissionError) and "cannot read folder" in str(problem)
    assert str(tmp_path / "closed") in describe(problem, "pt") and "permissão negada" in describe(problem, "pt")


def test_what_git_warns_of_while_listing_is_a_problem(tmp_path, monkeypatch):
    git(tmp_path, "init", "-q")
    (tmp_path / "a.md").write_text("a", encoding="utf-8")
    real = subprocess.run

    def warning(args, **options):
        done = real(args, **options)
        if "--cached" in args:  # the listing: as git answers for a folder it may not read
            done.stderr = b"warning: could not open directory 'closed/': Permission denied\n"
        return done

    # As root, git reads every folder: its warning is made here.
    monkeypatch.setattr(subprocess, "run", warning)
    found = find_files([str(tmp_path)])
    assert found.files == [str(tmp_path / "a.md")]
    (problem,) = found.problems
    assert str(problem) == f"{tmp_path}: git: warning: could not open directory 'closed/': Permission denied"


# Conversations as a fine-tuning dataset writes them: a list of messages, an object with
# messages and tools, multi-part content, text that holds special-token text.
CHATS: list[object] = [
    [{"role": "user", "content": "Olá, mundo 🙂"}],
    {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "What is "}, {"type": "text", "text": "2+2?"}]},
            {"role": "assistant", "content": "4"},
        ],
        "tools": [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}],
    },
    [{"role": "user", "content": "a\u2028b <|eot_id|> end"}, {"role": "assistant", "content": ""}],
]


def transformers_llama3(folder: Path = LLAMA3.parent) -> object:
    transformers = pytest.importorskip("transformers")
    return transformers.AutoTokenizer.from_pretrained(str(folder))


def prompt_count(hf: object, value: object) -> int:
    """The oracle: transformers' apply_chat_template(…, tokenize=True)."""
    messages = value["messages"] if isinstance(value, dict) else value
    tools = value.get("tools") if isinstance(value, dict) else None
    found = hf.apply_chat_template(messages, tools=tools, tokenize=True, return_dict=True)  # type: ignore[attr-defined]
    return len(found["input_ids"])


def write_chats(path: Path, values: list[object]) -> Path:
    path.write_text("\n".join(json.dumps(value) for value in values) + "\n", encoding="utf-8")
    return path


def test_a_chat_dataset_counts_each_conversation_as_the_model_receives_it(tmp_path):
    need_llama3()
    hf = transformers_llama3()
    llama = load_tokenizer(LLAMA3)
    dataset = write_chats(tmp_path / "chats.jsonl", [CHATS[0], {"text": "Era uma vez"}, CHATS[1], CHATS[2]])
    conversation = tmp_path / "one.json"
    conversation.write_text(json.dumps(CHATS[1], indent=2), encoding="utf-8")
    tokenizers = [LazyTokenizer(str(LLAMA3)), LazyTokenizer("pt")]
    try:
        counted = count_files([str(dataset), str(conversation)], tokenizers)
    finally:
        tokenizers[0].close()
    expected = [(1, prompt_count(hf, CHATS[0])), (2, len(llama.encode("Era uma vez")))]
    expected += [(3, prompt_count(hf, CHATS[1])), (4, prompt_count(hf, CHATS[2]))]
    chats, as_text = counted.files[str(dataset)]
    assert (chats.counted_as, chats.lines, chats.tokens) == ("chat", tuple(expected), sum(n for _, n in expected))
    # glassllm's own tokenizer has no chat format: the file as text, as before, and why.
    pt = packaged("pt")
    assert (as_text.counted_as, as_text.tokens) == ("chat-as-text", len(pt.encode(dataset.read_text("utf-8"))))
    assert "chat template" in str(tokenizers[1].chat_problem)
    assert counted.files[str(conversation)][0] == FileCount(prompt_count(hf, CHATS[1]), "chat")
    assert counted.counts[str(conversation)][1] == len(pt.encode(conversation.read_text("utf-8")))


def test_what_is_no_conversation_counts_as_before(tmp_path):
    need_llama3()
    llama = load_tokenizer(LLAMA3)
    chat = LazyTokenizer(str(LLAMA3))
    neither = write_chats(tmp_path / "neither.jsonl", [CHATS[0], {"prompt": "b"}])
    records = write_chats(tmp_path / "records.jsonl", [{"text": "a b"}, {"text": "c"}])
    settings = tmp_path / "package.json"
    settings.write_text('{"name": "x", "messages": 3}', encoding="utf-8")
    try:
        counted = count_files([str(neither), str(records), str(settings)], [chat])
    finally:
        chat.close()
    assert counted.files[str(neither)] == [FileCount(len(llama.encode(neither.read_text("utf-8"))))]
    assert (
        counted.files[str(records)]
        == [FileCount(3, "records", ((1, 2), (2, 1)))]
        == [FileCount(len(llama.encode("a b")) + len(llama.encode("c")), "records", ((1, 2), (2, 1)))]
    )
    assert counted.files[str(settings)] == [FileCount(len(llama.encode(settings.read_text("utf-8"))))]


def llama3_copy(folder: Path) -> Path:
    folder.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (folder / name).write_bytes((LLAMA3.parent / name).read_bytes())
    return folder / "tokenizer.json"


def test_the_cache_key_holds_the_chat_template_so_no_stale_count_is_served(tmp_path):
    need_llama3()
    tokenizer = llama3_copy(tmp_path / "model")
    dataset = write_chats(tmp_path / "chats.jsonl", CHATS)
    cache = CountCache(tmp_path / "c.sqlite3")

    def count() -> FileCount:
        lazy = LazyTokenizer(str(tokenizer))
        try:
            return count_files([str(dataset)], [lazy], cache=cache).files[str(dataset)][0]
        finally:
            lazy.close()

    first = count()
    assert count() == first and len(cache) == 1  # served from the cache
    # Another template beside the tokenizer: counted afresh, as transformers counts it.
    (tokenizer.parent / "chat_template.jinja").write_text(
        "{% for m in messages %}<|start_header_id|>{{ m.role }}: {{ m.content }}<|eot_id|>{% endfor %}",
        encoding="utf-8",
    )
    changed = count()
    hf = transformers_llama3(tokenizer.parent)
    assert changed.lines == tuple((n, prompt_count(hf, value)) for n, value in enumerate(CHATS, 1)) != first.lines
    # No template at all: the file as text, never the template's count kept from before.
    (tokenizer.parent / "chat_template.jinja").unlink()
    config = json.loads((tokenizer.parent / "tokenizer_config.json").read_text("utf-8"))
    del config["chat_template"]
    (tokenizer.parent / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    plain = count()
    assert plain.counted_as == "chat-as-text"
    assert plain.tokens == len(load_tokenizer(tokenizer).encode(dataset.read_text("utf-8")))


def test_a_conversation_the_template_refuses_is_an_error_naming_its_line(tmp_path):
    need_llama3()
    tokenizer = llama3_copy(tmp_path / "model")
    (tokenizer.parent / "chat_template.jinja").write_text(
        "{% for m in messages %}{% if m.role == 'tool' %}{{ raise_exception('no tools here') }}{% endif %}"
        "{{ m.content }}{% endfor %}",
        encoding="utf-8",
    )
    dataset = write_chats(tmp_path / "chats.jsonl", [CHATS[0], [{"role": "tool", "content": "x"}]])
    lazy = LazyTokenizer(str(tokenizer))
    try:
        counted = count_files([str(dataset)], [lazy])
    finally:
        lazy.close()
    assert counted.files == {}
    (error,) = counted.errors
    assert f"{dataset}:2" in str(error) and "no tools here" in str(error)
