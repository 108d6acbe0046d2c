"""The examples of the user's documents (the seeds), verbatim, with their verified outputs."""

import io
from contextlib import redirect_stdout
from pathlib import Path
from tempfile import TemporaryDirectory

from glassllm import Tokenizer
from glassllm.tokenizer import SPACE, SPECIALS, UNK_TEXT, pre_tokenize


def test_reference_construction_and_vocabulary():
    assert pre_tokenize("Olá mundo\n") == ["Olá", "▁mundo", "\n"]
    tok = Tokenizer.train("banana banana\n", vocab_size=32)
    ids = tok.encode("banana banana\n")
    assert tok.decode(ids) == "banana banana\n"
    assert tok.vocab_size <= 32
    assert len(tok.tokens(ids)) == len(ids)
    assert tok.encode("🧪") == [tok.unk_id]
    assert tok.decode([tok.unk_id]) == "⁇"


def test_reference_encode_and_explain_merges():
    tok = Tokenizer.train("banana banana\n", 32)
    detail = tok.encode_verbose("banana")
    assert detail[0]["chunk"] == "banana"
    steps = detail[0]["steps"]
    assert isinstance(steps, list)
    assert steps[0] == list("banana")
    assert steps[-1] == tok.tokens(tok.encode("banana"))


def test_reference_save_and_load():
    tok = Tokenizer.train("banana banana\n", 32)
    with TemporaryDirectory() as directory:
        path = Path(directory) / "tokenizer.json"
        tok.save(path)
        restored = Tokenizer.load(path)
        assert restored.encode("banana") == tok.encode("banana")
        assert restored.vocab == tok.vocab


def test_tokens_and_bpe_reproducible_example_prints_the_verified_output():
    """Both the English (001) and Portuguese (003) documents print exactly this."""
    out = io.StringIO()
    with redirect_stdout(out):
        t = Tokenizer.train("banana banana", vocab_size=12)
        print(t.merges)
        print(t.encode("banana banana"))
        print(t.encode_verbose("banana")[0]["steps"])
        print(t.decode(t.encode("banana banana")))
    assert out.getvalue() == (
        "[('a', 'n'), ('an', 'a'), ('an', 'ana'), ('b', 'anana')]\n"
        "[11, 7, 11]\n"
        "[['b', 'a', 'n', 'a', 'n', 'a'], ['b', 'an', 'an', 'a'], ['b', 'an', 'ana'], ['b', 'anana'], ['banana']]\n"
        "banana banana\n"
    )
    assert t.encode("🙂") == [1]
    assert t.vocab_size == 12
    # "The second chunk's space stays separate because no ('▁', 'banana') merge was learned."
    assert t.tokens(t.encode("banana banana")) == ["banana", "▁", "banana"]
    assert ("▁", "banana") not in t.ranks


def test_pre_tokenize_era_uma_vez():
    assert pre_tokenize("Era uma vez\n") == ["Era", "▁uma", "▁vez", "\n"]


def test_constants():
    assert SPACE == "▁"
    assert UNK_TEXT == "⁇"
    assert SPECIALS == ["<pad>", "<unk>", "<bos>", "<eos>"]
    tok = Tokenizer.train("banana", 16)
    assert (tok.pad_id, tok.unk_id, tok.bos_id, tok.eos_id) == (0, 1, 2, 3)
    assert tok.vocab[:4] == SPECIALS


def test_vocabulary_is_specials_then_alphabet_then_merge_results():
    tok = Tokenizer(["a", "b"], [("a", "b"), ("ab", "b")])
    assert tok.vocab == ["<pad>", "<unk>", "<bos>", "<eos>", "a", "b", "ab", "abb"]
    assert tok.ranks == {("a", "b"): 0, ("ab", "b"): 1}
    assert tok.merges == [("a", "b"), ("ab", "b")]


def test_constructor_copies_its_lists():
    alphabet, merges = ["a", "b"], [("a", "b")]
    tok = Tokenizer(alphabet, merges)
    alphabet.append("c")
    merges.clear()
    assert tok.alphabet == ["a", "b"] and tok.merges == [("a", "b")]


def test_no_id_to_token_method():
    assert not hasattr(Tokenizer, "id_to_token")


def test_empty_text_encodes_to_nothing():
    tok = Tokenizer.train("banana banana\n", 32)
    assert tok.encode("") == []
    assert tok.decode([]) == ""
    assert tok.encode_verbose("") == []


def test_train_rejects_a_size_that_cannot_hold_specials_and_alphabet():
    import pytest

    # "banana" has the alphabet a, b, n: 4 specials + 3 characters = 7.
    with pytest.raises(ValueError, match="at least 7"):
        Tokenizer.train("banana", 6)
    assert Tokenizer.train("banana", 7).merges == []


def test_the_size_is_an_upper_bound():
    tok = Tokenizer.train("ab", 1000)
    assert tok.vocab_size == 4 + 2 + 1


def test_tokens_uses_list_indexing():
    import pytest

    tok = Tokenizer.train("banana banana", vocab_size=12)
    assert tok.tokens([-1]) == [tok.vocab[-1]]
    with pytest.raises(IndexError):
        tok.tokens([12])


def test_decode_omits_pad_bos_eos_and_shows_unk():
    tok = Tokenizer.train("banana banana", vocab_size=12)
    assert tok.decode([tok.bos_id, 11, tok.pad_id, 7, tok.unk_id, tok.eos_id]) == "banana ⁇"


def test_a_chunk_without_merges_still_has_its_initial_state():
    tok = Tokenizer.train("banana banana", vocab_size=12)
    assert tok.encode_verbose("🙂 x") == [
        {"chunk": "🙂", "steps": [["🙂"]]},
        {"chunk": "▁x", "steps": [["▁", "x"]]},
    ]


def test_merges_never_cross_chunks():
    tok = Tokenizer.train("ab ab ab", vocab_size=20)
    assert ("b", "▁") not in tok.ranks
    assert [entry["chunk"] for entry in tok.encode_verbose("ab ab")] == ["ab", "▁ab"]


def test_literal_marker_is_treated_as_a_space():
    tok = Tokenizer.train("a b", vocab_size=20)
    assert tok.decode(tok.encode("a▁b")) == "a b"


def test_nfc_changes_the_text():
    tok = Tokenizer.train("café", vocab_size=20)
    assert tok.decode(tok.encode("cafe\u0301")) == "café"
