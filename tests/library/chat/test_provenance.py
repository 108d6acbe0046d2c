"""glassllm.chat.provenance: where each content lies in a rendering, found from the
rendering with markers, exactly or not at all: verbatim, trimmed, rewritten, and
contents with no template text between them.
"""

from __future__ import annotations

from glassllm.chat.conversation import conversation_from
from glassllm.chat.provenance import Placed, locate, marked


def _locate(messages, render):
    """``render(messages)`` stands for a template; locate its contents."""
    conversation = conversation_from(messages, "test")
    with_markers, pair = marked(conversation, "")
    return render(conversation.messages), locate(
        conversation, render(conversation.messages), render(with_markers), pair
    )


def test_verbatim_contents_are_placed_exactly():
    def render(messages):
        return "".join(f"<{m['role']}>{m['content']}</>" for m in messages)

    rendered, (placed, changed) = _locate([{"role": "u", "content": "Hi"}, {"role": "a", "content": "Yo!"}], render)
    assert changed == set()
    assert placed == [Placed(3, 5, 0, 0), Placed(11, 14, 1, 0)]
    assert [rendered[p.start : p.end] for p in placed] == ["Hi", "Yo!"]


def test_text_parts_count_from_the_joined_content_text():
    def render(messages):
        return "|".join(part.get("text", "") for m in messages for part in m["content"])

    parts = [{"type": "text", "text": "ab"}, {"type": "image"}, {"type": "text", "text": "cde"}]
    rendered, (placed, changed) = _locate([{"role": "u", "content": parts}], render)
    assert (rendered, changed) == ("ab||cde", set())
    assert placed == [Placed(0, 2, 0, 0), Placed(4, 7, 0, 2)]


def test_a_trimmed_content_is_placed_at_its_offset_inside():
    def render(messages):
        return "".join(f"[{m['content'].strip()}]" for m in messages)

    rendered, (placed, changed) = _locate(
        [{"role": "u", "content": "  padded \n"}, {"role": "u", "content": "x"}], render
    )
    assert (rendered, changed) == ("[padded][x]", set())
    assert placed == [Placed(1, 7, 0, 2), Placed(9, 10, 1, 0)]


def test_a_rewritten_content_is_changed_and_not_placed():
    def render(messages):
        return "".join(f"[{m['content'].upper()}]" for m in messages)

    _, (placed, changed) = _locate([{"role": "u", "content": "shout"}, {"role": "u", "content": "ABC"}], render)
    assert changed == {0}
    assert placed == [Placed(8, 11, 1, 0)]


def test_contents_with_no_template_text_between_them_are_not_guessed():
    def render(messages):
        return "".join(m["content"].strip() for m in messages)

    _, (placed, changed) = _locate([{"role": "u", "content": " a"}, {"role": "u", "content": "b "}], render)
    assert (placed, changed) == ([], {0, 1})


def test_markers_avoid_the_brackets_a_conversation_holds():
    conversation = conversation_from([{"role": "u", "content": "set ⦃1.0⦄ notation"}], "test")
    _, pair = marked(conversation, "")
    assert pair[0] not in "set ⦃1.0⦄ notation"


def test_a_trimmed_content_that_holds_the_templates_markup_stays_whole():
    # Llama 3's template trims contents; this one holds the text that follows a content,
    # so the first place that text appears is inside the content, not after it.
    def render(messages):
        return "".join(f"<h>{m['content'].strip()}<eot>" for m in messages)

    injected = " A<eot><h>B "
    rendered, (placed, changed) = _locate([{"role": "u", "content": injected}, {"role": "u", "content": "C"}], render)
    assert (rendered, changed) == ("<h>A<eot><h>B<eot><h>C<eot>", set())
    assert placed == [Placed(3, 13, 0, 1), Placed(21, 22, 1, 0)]
