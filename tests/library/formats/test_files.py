"""Saving and loading: the documented exception types, messages that name the file."""

import json
import os
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glassllm import Tokenizer
from glassllm.tokenizer import pre_tokenize


@pytest.fixture
def tok() -> Tokenizer:
    return Tokenizer.train("banana banana\n", 32)


def write(path, data) -> str:
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def test_save_writes_version_alphabet_merges_and_merge_counts(tmp_path, tok):
    path = tmp_path / "tok.json"
    tok.save(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["version"] == 1
    assert data["alphabet"] == ["\n", "a", "b", "n", "▁"]
    assert data["merges"] == [list(pair) for pair in tok.merges]
    assert data["merge_counts"] == tok.merge_counts
    assert oct(path.stat().st_mode & 0o777) == oct(0o644)


def test_load_accepts_files_without_merge_counts(tmp_path, tok):
    path = write(tmp_path / "old.json", {"version": 1, "alphabet": tok.alphabet, "merges": tok.merges})
    restored = Tokenizer.load(path)
    assert restored.merge_counts is None
    assert restored.encode("banana") == tok.encode("banana")
    assert restored.explain("banana")[0].steps[0].count is None


def test_save_overwrites_and_leaves_no_temporary_files(tmp_path, tok):
    path = tmp_path / "tok.json"
    path.write_text("old", encoding="utf-8")
    tok.save(str(path))
    assert Tokenizer.load(path).vocab == tok.vocab
    assert os.listdir(tmp_path) == ["tok.json"]


def test_save_does_not_create_parent_folders(tmp_path, tok):
    with pytest.raises(FileNotFoundError, match="missing"):
        tok.save(tmp_path / "missing" / "tok.json")


def test_a_failed_save_keeps_the_old_file_whole(tmp_path, tok, monkeypatch):
    path = tmp_path / "tok.json"
    tok.save(path)
    before = path.read_bytes()

    def refuse(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match=re.escape("tok.json")):
        Tokenizer.train("other text", 40).save(path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["tok.json"]


def test_missing_file_is_an_os_error_naming_it(tmp_path):
    with pytest.raises(FileNotFoundError, match=re.escape("nowhere.json")):
        Tokenizer.load(tmp_path / "nowhere.json")


def test_invalid_json_is_the_json_readers_error_naming_the_file(tmp_path):
    with pytest.raises(json.JSONDecodeError, match=r"broken\.json: not valid JSON"):
        Tokenizer.load(write(tmp_path / "broken.json", '{"version": 1,'))


def test_not_utf8_is_a_value_error_naming_the_file(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"version": 1, "alphabet": ["\xe9"], "merges": []}')
    with pytest.raises(ValueError, match=r"latin1\.json: not UTF-8"):
        Tokenizer.load(path)


@pytest.mark.parametrize("key", ["version", "alphabet", "merges"])
def test_a_missing_key_is_a_key_error_naming_file_and_key(tmp_path, key):
    data = {"version": 1, "alphabet": ["a"], "merges": []}
    del data[key]
    with pytest.raises(KeyError, match=rf"t\.json: missing key '{key}'"):
        Tokenizer.load(write(tmp_path / "t.json", data))


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ([1, 2], "expected a JSON object, found list"),
        ({"version": 2, "alphabet": [], "merges": []}, "unknown version 2"),
        ({"version": True, "alphabet": [], "merges": []}, "unknown version True"),
        ({"version": 1, "alphabet": "ab", "merges": []}, "'alphabet' must be a list"),
        ({"version": 1, "alphabet": ["ab"], "merges": []}, r"alphabet\[0\] must be one character"),
        ({"version": 1, "alphabet": [7], "merges": []}, r"alphabet\[0\] must be one character"),
        ({"version": 1, "alphabet": ["a", "b", "a"], "merges": []}, r"alphabet\[2\] 'a' is a duplicate"),
        ({"version": 1, "alphabet": ["a"], "merges": {"a": "a"}}, "'merges' must be a list"),
        ({"version": 1, "alphabet": ["a"], "merges": [["a"]]}, r"merges\[0\] must be a pair"),
        ({"version": 1, "alphabet": ["a"], "merges": [["a", ""]]}, r"merges\[0\] must be a pair"),
        (
            {"version": 1, "alphabet": ["a", "b"], "merges": [["a", "b"], ["ab", "c"]]},
            r"merges\[1\] \['ab', 'c'\] uses 'c', which is not in the vocabulary",
        ),
        (
            {"version": 1, "alphabet": ["a", "b"], "merges": [["ab", "b"], ["a", "b"]]},
            r"merges\[0\] \['ab', 'b'\] uses 'ab'",
        ),
        (
            {"version": 1, "alphabet": ["a", "b"], "merges": [["a", "b"]], "merge_counts": [1, 2]},
            "one count per merge",
        ),
        (
            {"version": 1, "alphabet": ["a", "b"], "merges": [["a", "b"]], "merge_counts": [-1]},
            r"merge_counts\[0\] must be a non-negative integer",
        ),
    ],
)
def test_structurally_wrong_files_raise_value_error_naming_the_problem(tmp_path, data, problem):
    with pytest.raises(ValueError, match=rf"bad\.json: .*{problem}"):
        Tokenizer.load(write(tmp_path / "bad.json", data))


@pytest.mark.parametrize("method", ["encode", "encode_spans", "encode_verbose", "explain"])
@pytest.mark.parametrize("value", [b"bytes", None, 12, ["a"]])
def test_text_methods_reject_non_text(tok, method, value):
    with pytest.raises(TypeError, match="expected text as str"):
        getattr(tok, method)(value)


@pytest.mark.parametrize("value", ["1 2", b"\x01", [1, "2"], [1.5], None, 3])
def test_decode_and_tokens_reject_non_ids(tok, value):
    for method in (tok.decode, tok.tokens):
        with pytest.raises(TypeError, match="token IDs"):
            method(value)


def test_decode_accepts_any_sequence_of_integers(tok):
    assert tok.decode(i for i in tok.encode("banana")) == "banana"
    assert tok.decode(tuple(tok.encode("banana"))) == "banana"


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=60), st.integers(min_value=0, max_value=30))
def test_save_load_round_trip(tmp_path_factory, text, extra):
    tok = Tokenizer.train(text, 4 + len(set("".join(pre_tokenize(text)))) + extra)
    path = tmp_path_factory.mktemp("round") / "tok.json"
    tok.save(path)
    restored = Tokenizer.load(path)
    assert (restored.alphabet, restored.merges, restored.merge_counts) == (tok.alphabet, tok.merges, tok.merge_counts)
    assert restored.vocab == tok.vocab and restored.ranks == tok.ranks
    assert restored.encode(text) == tok.encode(text)
