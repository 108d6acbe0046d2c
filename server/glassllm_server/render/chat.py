"""What a chat document shows: its prompt's count with the template's share, a message
token's hover, and the template's text where the template inserts it."""

from __future__ import annotations

from collections.abc import Callable

from glassllm.chat import TemplatePart
from glassllm.shown.visible import visible
from glassllm_server.chat_units import ChatUnit, TemplateRun
from glassllm_server.messages import Messages
from glassllm_server.render.markdown import code

__all__ = ["HINT_CHARACTERS", "chat_hover", "chat_lens_title", "template_hint", "unit_lens_title"]

# A template's insertion longer than this (a system prompt, tool definitions) is cut in
# the hint's label; its tooltip has it whole.
HINT_CHARACTERS = 64


def _tokens(count: int, messages: Messages) -> tuple[str, str]:
    return messages.integer(count), messages("word.token" if count == 1 else "word.tokens")


def chat_lens_title(count: int, template_count: int, messages: Messages, limit: int | None = None) -> str:
    """``1,234 tokens (87 from the template)`` (``1.234 tokens (87 do modelo de chat)``);
    with a budget's ``limit``, ``3,900 / 4,096 tokens (87 from the template)``."""
    tokens, word = _tokens(count, messages)
    if limit is not None:
        tokens = messages("budget.use", tokens=tokens, limit=messages.integer(limit))
        word = messages("word.tokens")
    return messages("chat.lens", tokens=tokens, token_word=word, template=messages.integer(template_count))


def unit_lens_title(count: int, template_count: int, limit: int | None, messages: Messages) -> str:
    """A counted unit's lens: a chat template's (``template_count`` > 0) as
    :func:`chat_lens_title`; a plain text's against its budget, ``3,900 / 4,096``."""
    if template_count or limit is None:
        return chat_lens_title(count, template_count, messages, limit)
    return messages("budget.use", tokens=messages.integer(count), limit=messages.integer(limit))


def chat_hover(unit: ChatUnit, index: int, show: Callable[[str], str], messages: Messages) -> str:
    """Markdown for message token ``index`` of ``unit``: piece and ID, then where it is in
    the prompt and which message holds it."""
    token = unit.encoding.tokens[index]
    assert token.source is not None, "only a message's token has a hover"
    place = messages(
        "chat.hover",
        index=messages.integer(index),
        count=messages.integer(unit.count),
        message=token.source.message,
        role=unit.roles[token.source.message],
    )
    return f"{code(show(token.piece))} · {messages('hover.id', id=token.id)}\n\n{place}"


def template_hint(unit: ChatUnit, run: TemplateRun, show: Callable[[str], str], messages: Messages) -> tuple[str, str]:
    """The label (the template's text, written visibly and cut when long) and the
    tooltip (its tokens, each as a code span, then the template parts that wrote them)
    of a run of template tokens."""
    text = visible(unit.template_text(run))
    label = text if len(text) <= HINT_CHARACTERS else text[: HINT_CHARACTERS - 1] + "…"
    tokens, word = _tokens(run.stop - run.first, messages)
    pieces = " ".join(code(show(token.piece)) for token in unit.encoding.tokens[run.first : run.stop])
    tooltip = messages("chat.hint", tokens=tokens, token_word=word, pieces=pieces)
    counts: dict[TemplatePart, int] = {}
    for part in unit.encoding.parts[run.first : run.stop]:
        if part is not None:
            counts[part] = counts.get(part, 0) + 1
    lines = [f"- {_part(part, count, messages)}" for part, count in counts.items()]
    return label, "\n\n".join([tooltip, "\n".join(lines)]) if lines else tooltip


def _part(part: TemplatePart, count: int, messages: Messages) -> str:
    """``line 3 of the template, `{{ content }}`: 6 tokens``."""
    tokens, word = _tokens(count, messages)
    if part.line is None:
        return messages("chat.part_inserted", text=code(part.text), tokens=tokens, token_word=word)
    return messages("chat.part", line=part.line, text=code(part.text), tokens=tokens, token_word=word)
