"""Over TCP, what the server may read and how it words a broken file: nothing of its content."""

from __future__ import annotations

import json

import pytest

from glassllm import Tokenizer
from glassllm_server.confinement import OutsideWorkspace, inside, quiet_problem


def test_inside_resolves_links_and_dots(tmp_path):
    workspace, outside = tmp_path / "workspace", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (workspace / "escape").symlink_to(outside)
    assert inside(workspace / "tok.json", [workspace])
    assert inside(workspace / "missing" / "tok.json", [workspace])
    assert not inside(workspace / ".." / "outside" / "tok.json", [workspace])
    assert not inside(workspace / "escape" / "tok.json", [workspace])
    assert inside(workspace / "escape" / "tok.json", [workspace, outside])
    (workspace / "loop").symlink_to(workspace / "loop")
    assert not inside(workspace / "loop", [workspace])
    assert not inside(workspace / "a\0b", [workspace])


SECRET = "TOPSECRET"


@pytest.mark.parametrize(
    ("contents", "english", "portuguese"),
    [
        (
            {"version": SECRET, "alphabet": [], "merges": []},
            "{path}: not a tokenizer file glassllm can use: version is not valid",
            "{path}: não é um arquivo de tokenizador que o glassllm possa usar: version não é válido",
        ),
        (
            {"version": 1, "alphabet": ["a", SECRET], "merges": []},
            "{path}: not a tokenizer file glassllm can use: alphabet[1] is not valid",
            "{path}: não é um arquivo de tokenizador que o glassllm possa usar: alphabet[1] não é válido",
        ),
        (
            {"version": 1, "alphabet": ["a", "T"], "merges": [["a", "T"], ["T", SECRET]]},
            "{path}: not a tokenizer file glassllm can use: merges[1] is not valid",
            "{path}: não é um arquivo de tokenizador que o glassllm possa usar: merges[1] não é válido",
        ),
        (
            {"version": 1, "alphabet": ["a"], "merges": [["a", "a"]], "merge_counts": [SECRET]},
            "{path}: not a tokenizer file glassllm can use: merge_counts[0] is not valid",
            "{path}: não é um arquivo de tokenizador que o glassllm possa usar: merge_counts[0] não é válido",
        ),
        (
            {"version": 1, "alphabet": SECRET, "merges": []},
            "{path}: 'alphabet' must be a list, found str",
            "{path}: 'alphabet' deve ser uma lista, encontrou str",
        ),
    ],
)
def test_a_broken_file_is_described_without_its_content(tmp_path, contents, english, portuguese):
    path = tmp_path / "tok.json"
    path.write_text(json.dumps(contents), encoding="utf-8")
    with pytest.raises((KeyError, ValueError)) as caught:
        Tokenizer.load(path)
    said = quiet_problem(caught.value, str(path), "en")
    assert said.startswith(english.format(path=path)) and SECRET not in said
    assert quiet_problem(caught.value, str(path), "pt").startswith(portuguese.format(path=path))


def test_errors_the_library_did_not_word_are_not_quoted():
    said = quiet_problem(RuntimeError(f"unexpected {SECRET}"), "/w/tok.json", "en")
    assert (
        said == "/w/tok.json: not a tokenizer file glassllm can use (over TCP, messages do not quote a file's content)"
    )


def test_outside_the_workspace_reads_the_same_whether_the_file_exists_or_not(tmp_path):
    error = OutsideWorkspace("/etc/passwd", [tmp_path])
    assert quiet_problem(error, "/etc/passwd", "en") == (
        "it is outside the workspace folders, and over TCP glassllm reads tokenizer files only inside them "
        f"({tmp_path})"
    )
    assert quiet_problem(error, "/etc/passwd", "pt").startswith("ele está fora das pastas do espaço de trabalho")
