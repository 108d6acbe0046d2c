"""glassllm.chat.template: where a tokenizer's chat template comes from (a named file,
chat_template.jinja beside it, tokenizer_config.json's chat_template, one of named
templates) and the special tokens transformers gives it.
"""

from __future__ import annotations

import json

import pytest

from glassllm.chat.template import find_template


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "tokenizer.json").write_text("{}", encoding="utf-8")
    config = {
        "chat_template": [{"name": "default", "template": "plain"}, {"name": "tool_use", "template": "tools"}],
        "bos_token": "<s>",
        "eos_token": {"content": "</s>", "lstrip": False},
        "pad_token": None,
        "additional_special_tokens": ["<x>"],
    }
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return tmp_path


def test_named_templates_and_the_special_tokens(folder):
    found = find_template(folder / "tokenizer.json")
    assert found.path == str(folder / "tokenizer_config.json")
    assert (found.source(with_tools=False), found.source(with_tools=True)) == ("plain", "tools")
    assert found.variables == {"bos_token": "<s>", "eos_token": "</s>"}


def test_chat_template_jinja_beside_comes_first_and_a_named_file_before_it(folder):
    (folder / "chat_template.jinja").write_text("beside", encoding="utf-8")
    assert find_template(folder / "tokenizer.json").source(with_tools=True) == "beside"
    (folder / "mine.jinja").write_text("mine", encoding="utf-8")
    found = find_template(folder / "tokenizer.json", folder / "mine.jinja")
    assert (found.path, found.source(with_tools=False)) == (str(folder / "mine.jinja"), "mine")
    assert found.variables["bos_token"] == "<s>"


def test_no_template_says_where_it_looked(tmp_path):
    (tmp_path / "tokenizer.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match=r"no chat template beside it .*name one with --template$"):
        find_template(tmp_path / "tokenizer.json")


def test_a_template_list_without_default_is_refused(folder):
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": [{"name": "x", "template": "y"}]}))
    with pytest.raises(ValueError, match="chat_template must be a string or a list of named templates"):
        find_template(folder / "tokenizer.json")
