"""Code spans in Markdown show invisible characters by the library's rule."""

from __future__ import annotations

from glassllm_server.render.markdown import code


def test_code_spans_show_invisible_characters_by_the_librarys_rule():
    assert code("a\tb\n\u2028▁") == "`a\\tb\\n⟨U+2028 LINE SEPARATOR⟩▁`"
    assert code("▁vez") == "`▁vez`"
    assert code("a`b") == "``a`b``"
    assert code("`") == "`` ` ``"
