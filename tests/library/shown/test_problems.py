"""Library errors: the documented type and English message, and the same problem worded
in Portuguese for a Portuguese reader (the command line follows the locale)."""

import json
import os
import subprocess
import sys

import pytest

from glassllm import Tokenizer, __version__, packaged
from glassllm.shown.problems import MESSAGES, describe, environment_locale
from glassllm.training.chunk_counting import count_files
from glassllm.training.counts_files import counts_stamp


@pytest.mark.parametrize("code", sorted(MESSAGES))
def test_every_problem_is_worded_in_both_languages(code):
    english, portuguese = MESSAGES[code]
    assert english and portuguese and english != portuguese


def load_error(tmp_path, contents: str) -> Exception:
    path = tmp_path / "bad.json"
    path.write_text(contents, encoding="utf-8")
    with pytest.raises((OSError, KeyError, ValueError)) as caught:
        Tokenizer.load(path)
    return caught.value


@pytest.mark.parametrize(
    ("contents", "english", "portuguese"),
    [
        ('{"version": 1, "alphabet": ["a", "a"], "merges": []}', "'a' is a duplicate", "'a' está repetido"),
        ('{"version": 1, "alphabet": []}', "missing key 'merges'", "falta a chave 'merges'"),
        ('{"version": 2, "alphabet": [], "merges": []}', "unknown version 2", "versão desconhecida 2"),
        ('{"version": 1,', "not valid JSON: Expecting", "não é JSON válido: Expecting"),
    ],
)
def test_a_broken_file_is_described_in_english_as_raised_and_in_portuguese(tmp_path, contents, english, portuguese):
    error = load_error(tmp_path, contents)
    in_english = describe(error, "en")
    assert english in in_english and str(tmp_path / "bad.json") in in_english
    assert in_english == (error.args[0] if isinstance(error, KeyError) else str(error))
    in_portuguese = describe(error, "pt")
    assert portuguese in in_portuguese and str(tmp_path / "bad.json") in in_portuguese


def test_file_system_errors_keep_their_type_and_errno_and_read_in_portuguese(tmp_path):
    missing = tmp_path / "nowhere.json"
    with pytest.raises(FileNotFoundError) as caught:
        Tokenizer.load(missing)
    assert caught.value.filename == str(missing)
    assert "cannot read tokenizer file: " in str(caught.value)
    assert describe(caught.value, "pt") == (
        f"não foi possível ler o arquivo de tokenizador {missing}: arquivo ou diretório inexistente"
    )
    with pytest.raises(FileNotFoundError) as caught:
        count_files([missing])
    assert describe(caught.value, "pt").startswith("não foi possível ler o arquivo do corpus ")


def test_training_and_packaged_errors_read_in_portuguese():
    with pytest.raises(ValueError) as caught:
        Tokenizer.train("banana", 5)
    assert "at least 7 is needed" in str(caught.value)
    assert "são precisos pelo menos 7" in describe(caught.value, "pt")
    with pytest.raises(ValueError) as caught:
        packaged("de")
    assert describe(caught.value, "pt") == "não há tokenizador empacotado 'de'; os empacotados são pt, en"


def test_an_error_the_library_did_not_word_is_its_own_message():
    assert describe(ValueError("something else"), "pt") == "something else"


def test_the_locale_is_the_first_of_lc_all_lc_messages_and_lang():
    assert environment_locale({}) == "en"
    assert environment_locale({"LANG": "pt_BR.UTF-8"}) == "pt"
    assert environment_locale({"LC_MESSAGES": "en_US.UTF-8", "LANG": "pt_BR.UTF-8"}) == "en"
    assert environment_locale({"LC_ALL": "pt_PT", "LC_MESSAGES": "en_US"}) == "pt"
    assert environment_locale({"LC_ALL": "", "LANG": "pt_BR"}) == "pt"


def run_cli(args, **environment):
    env = {key: value for key, value in os.environ.items() if key not in ("LC_ALL", "LC_MESSAGES", "LANG")}
    return subprocess.run(
        [sys.executable, "-m", "glassllm.cli", *args], capture_output=True, text=True, env={**env, **environment}
    )


def test_the_command_line_speaks_the_locales_language(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text(json.dumps({"version": 1, "alphabet": ["ab"], "merges": []}), encoding="utf-8")
    english = run_cli(["encode", "-t", str(path), "x"])
    assert english.returncode == 1
    assert english.stderr == f"glassllm encode: {path}: alphabet[0] must be one character, found 'ab'\n"
    portuguese = run_cli(["encode", "-t", str(path), "x"], LANG="pt_BR.UTF-8")
    assert portuguese.stderr == f"glassllm encode: {path}: alphabet[0] deve ser um caractere, encontrou 'ab'\n"
    assert "IDs fora do intervalo para 1024 entradas" in run_cli(["decode", "5000"], LC_ALL="pt_BR.UTF-8").stderr
    refused = run_cli(["export", "pt", "-o", str(path)], LC_MESSAGES="pt_BR.UTF-8")
    assert "não é um arquivo de tokenizador do Hugging Face" in refused.stderr


def test_counts_and_corpus_errors_speak_the_locales_language(tmp_path):
    stale = tmp_path / "old.counts"
    stale.write_text(json.dumps({**counts_stamp(), "glassllm": "0.0.1"}) + '\n["a", 1]\n', encoding="utf-8")
    train = ["train", "--counts", str(stale), "-o", str(tmp_path / "tok.json")]
    assert run_cli(train, LANG="en_US.UTF-8").stderr == (
        f"glassllm train: {stale}: counted by glassllm '0.0.1', this is glassllm '{__version__}'; "
        "count the corpus again with this version\n"
    )
    assert run_cli(train, LANG="pt_BR.UTF-8").stderr == (
        f"glassllm train: {stale}: contado pelo glassllm '0.0.1', este é o glassllm '{__version__}'; "
        "conte o corpus de novo com esta versão\n"
    )
    corpus, notes = tmp_path / "corpus.txt", tmp_path / "notes.txt"
    corpus.write_text("banana banana\n", encoding="utf-8")
    notes.write_text("my notes\n", encoding="utf-8")
    refused = run_cli(["count", str(corpus), "-o", str(notes)], LC_MESSAGES="pt_BR.UTF-8")
    assert refused.stderr == (
        f"glassllm count: {notes} existe e não é um arquivo de contagens que este glassllm lê; "
        "não foi substituído (--force o substitui)\n"
    )
    assert notes.read_text(encoding="utf-8") == "my notes\n"

    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("uma linha\noutra\nação\n".encode("latin-1"))
    # Two processes: the error crosses from the one that counted the file, its problem too.
    count = ["count", "--quiet", "--jobs", "2", str(latin1), "-o", str(tmp_path / "c.counts")]
    english = run_cli(count, LC_ALL="C.UTF-8")
    assert english.returncode == 1
    assert english.stderr == f"glassllm count: {latin1}:3: not UTF-8 text (invalid continuation byte)\n"
    portuguese = run_cli(count, LC_ALL="pt_BR.UTF-8", LANG="en_US.UTF-8")
    assert portuguese.returncode == 1
    assert portuguese.stderr == f"glassllm count: {latin1}:3: não é texto UTF-8 (invalid continuation byte)\n"
    assert not (tmp_path / "c.counts").exists()


def test_corpus_files_that_name_nothing_keep_their_type_and_read_in_portuguese(tmp_path):
    with pytest.raises(FileNotFoundError) as caught:
        count_files([str(tmp_path / "*.jsonl")])
    assert caught.value.filename == str(tmp_path / "*.jsonl")
    assert str(caught.value) == f"[Errno 2] no corpus file matches this pattern: '{tmp_path / '*.jsonl'}'"
    assert describe(caught.value, "pt") == f"{tmp_path / '*.jsonl'}: nenhum arquivo do corpus corresponde a este padrão"
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError) as caught:
        count_files([tmp_path / "empty"])
    assert describe(caught.value, "pt") == f"{tmp_path / 'empty'}: nenhum arquivo do corpus nesta pasta"
