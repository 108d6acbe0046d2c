"""Where each message's content text lies in a template's rendering, exactly.

The template renders the conversation twice: as given, and with every content text (a
string content, or each text part) replaced by a marker. The marked rendering is the
template's own text with markers where it put contents; putting the contents back in
place of the markers must give the real rendering character for character, and then
every stretch is known: the template's, or an exact stretch of a message's content.

A template that changes a content as it writes it (Llama 3's ``| trim``) breaks that
equality. Then the real rendering is read from the start against the marked one's
template text: where a marker stood, the content as given, else trimmed, followed by the
next stretch of template text, else whatever runs up to that text. A stretch found
inside the content it stands for (a trimmed content is) is placed at that offset in it,
exactly; trying the trimmed content before searching keeps a content that holds the
template's own markup (``<|eot_id|><|start_header_id|>…``) whole. A stretch that is not
found (``| upper``, a content the template rewrote), or a rendering whose template text
is not where the marked one has it (a template whose output depends on what the
contents say), leaves those contents *changed*: their text counts as the template's, and
the caller warns.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from glassllm.chat.conversation import Conversation

__all__ = ["Placed", "locate", "marked"]

# Rare brackets open and close a marker; the first pair that neither the conversation nor
# the template holds is used. Printable ones: a template that writes a content with
# Python's repr (a list of parts, say) escapes unprintable characters, private-use too.
_MARKS = (("⦃", "⦄"), ("⦅", "⦆"), ("⧼", "⧽"), ("⟬", "⟭"), ("⦗", "⦘"), ("⸦", "⸧"))


@dataclass(frozen=True)
class Placed:
    """A stretch ``[start, end)`` of the rendering that is message ``message``'s
    content text from offset ``offset``."""

    start: int
    end: int
    message: int
    offset: int


def _pair(conversation: Conversation, template: str) -> tuple[str, str]:
    texts = [part for index in range(len(conversation.messages)) for part in conversation.parts(index)]
    texts.append(template)
    for pair in _MARKS:
        if not any(pair[0] in text for text in texts):
            return pair
    return _MARKS[0]  # every pair in use: the equality check below still refuses a false placement


def marked(conversation: Conversation, template: str) -> tuple[list[dict[str, Any]], tuple[str, str]]:
    """The messages with each content text replaced by its marker (``message.part``),
    and the marker pair used (one ``template``, its source, does not hold)."""
    opening, closing = _pair(conversation, template)
    messages = []
    for index, message in enumerate(conversation.messages):
        content = message.get("content")
        if isinstance(content, str):
            content = f"{opening}{index}.0{closing}"
        elif isinstance(content, list):
            content = _marked_parts(content, index, opening, closing)
        messages.append({**message, "content": content} if "content" in message else message)
    return messages, (opening, closing)


def _marked_parts(parts: list[Any], index: int, opening: str, closing: str) -> list[Any]:
    found = []
    number = 0
    for part in parts:
        if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
            part = {**part, "text": f"{opening}{index}.{number}{closing}"}
            number += 1
        found.append(part)
    return found


def locate(
    conversation: Conversation, rendered: str, marked_rendering: str, pair: tuple[str, str]
) -> tuple[list[Placed], set[int]]:
    """The content stretches of ``rendered`` in order, and the messages whose content the
    template changed (see the module's docstring)."""
    pattern = re.compile(f"{re.escape(pair[0])}(\\d+)\\.(\\d+){re.escape(pair[1])}")
    pieces = pattern.split(marked_rendering)
    literals = pieces[::3]
    keys = [(int(pieces[i]), int(pieces[i + 1])) for i in range(1, len(pieces), 3)]
    parts = {index: conversation.parts(index) for index in {message for message, _ in keys}}
    texts = [parts[message][part] for message, part in keys]
    if _interleave(literals, texts) == rendered:
        return _in_place(literals, texts, keys, parts, lambda text, stretch: 0), set()
    # Between two markers with no template text, where one content ends is anyone's guess.
    if any(not literal for literal in literals[1:-1]):
        return [], {message for message, _ in keys}
    stretches = _walk(literals, texts, rendered)
    if stretches is None:
        return [], {message for message, _ in keys}
    changed = {key[0] for key, text, stretch in zip(keys, texts, stretches, strict=True) if _inside(text, stretch) < 0}
    placed = _in_place(literals, stretches, keys, parts, lambda text, stretch: _inside(text, stretch))
    return [found for found in placed if found.message not in changed], changed


def _walk(literals: list[str], texts: list[str], rendered: str) -> list[str] | None:
    """What the template wrote where each marker stood, reading ``rendered`` from the
    start: the content as given, else trimmed (both sides, then either), followed by the
    next stretch of template text; else whatever runs up to that text. ``None``: the
    template's own text is not where the marked rendering has it."""
    if not rendered.startswith(literals[0]):
        return None
    at = len(literals[0])
    stretches = []
    for number, (text, literal) in enumerate(zip(texts, literals[1:], strict=True)):
        last = number == len(texts) - 1
        candidates = (text, text.strip(), text.rstrip(), text.lstrip())
        found = next((c for c in candidates if _fits(rendered, at, c + literal, last)), None)
        if found is None:
            end = len(rendered) - len(literal) if last else rendered.find(literal, at)
            if end < at or (last and rendered[end:] != literal):
                return None
            found = rendered[at:end]
        stretches.append(found)
        at += len(found) + len(literal)
    return stretches


def _fits(rendered: str, at: int, expected: str, last: bool) -> bool:
    """Whether ``rendered`` holds ``expected`` at ``at`` (and ends there, if ``last``)."""
    return rendered.startswith(expected, at) and (not last or at + len(expected) == len(rendered))


def _interleave(literals: list[str], texts: list[str]) -> str:
    return "".join(part for pair in zip(literals, [*texts, ""], strict=True) for part in pair)


def _inside(text: str, stretch: str) -> int:
    """Where ``stretch`` (what the template wrote of ``text``) starts in ``text``: at
    the start of its trimmed form first (``| trim``), else its first occurrence; -1."""
    if stretch == text:
        return 0
    trimmed = len(text) - len(text.lstrip())
    if text.startswith(stretch, trimmed):
        return trimmed
    return text.find(stretch) if stretch else 0


def _in_place(
    literals: list[str],
    stretches: list[str],
    keys: list[tuple[int, int]],
    parts: dict[int, list[str]],
    offset_in: Callable[[str, str], int],
) -> list[Placed]:
    """Each stretch placed in the rendering (after its literal), at its content offset:
    the lengths of the message's earlier parts plus where it lies in its own part."""
    placed = []
    at = 0
    for literal, stretch, (message, part) in zip(literals, stretches, keys, strict=False):
        at += len(literal)
        text = parts[message][part]
        before = sum(map(len, parts[message][:part]))
        placed.append(Placed(at, at + len(stretch), message, before + offset_in(text, stretch)))
        at += len(stretch)
    return placed
