"""Conversations as people write them: OpenAI-style messages, checked before any template
sees them, so that a mistake is one line naming the file, the line and the field.

A conversation is a list of messages, or an object with ``messages`` and optional
``tools`` (and ``documents``, which transformers passes on too). A message is an object
with a ``role`` (a string) and a ``content`` that is a string, a list of parts (a text
part is ``{"type": "text", "text": …}``; other parts go to the template as they are) or
absent or ``null`` (an assistant message with ``tool_calls``, say); anything else in it
(``tool_calls``, ``tool_call_id``, ``name``…) goes to the template as given.

A message's *content text* is its string, or its text parts joined in order: token
offsets count code points into it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from glassllm.formats.files import read_bounded
from glassllm.shown.problems import os_problem, problem

__all__ = ["Conversation", "conversation_from", "field_problem", "is_dataset", "read_conversation", "read_dataset"]


_CONTENT = "a string or a list of parts"


@dataclass(frozen=True)
class Conversation:
    """Checked messages, with the tools and documents the template may show."""

    messages: list[dict[str, Any]]
    tools: list[Any] | None = None
    documents: list[Any] | None = None
    where: str = ""  # the file (and line) it came from, as errors name it

    def parts(self, index: int) -> list[str]:
        """Message ``index``'s content text, part by part (one part for a string)."""
        content = self.messages[index].get("content")
        if isinstance(content, str):
            return [content]
        if isinstance(content, list):
            return [part["text"] for part in content if _is_text_part(part)]
        return []

    def content(self, index: int) -> str:
        """Message ``index``'s content text (see the module's docstring)."""
        return "".join(self.parts(index))


def _is_text_part(part: object) -> bool:
    return isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)


def conversation_from(value: object, where: str) -> Conversation:
    """``value`` (parsed JSON) checked as a conversation; ``where`` (``FILE`` or
    ``FILE:LINE``) opens every error's message, with the field at fault."""
    if isinstance(value, dict):
        if "messages" not in value:
            raise problem(ValueError, "chat.no_messages", where=where)
        tools, documents = value.get("tools"), value.get("documents")
        for name, found in (("tools", tools), ("documents", documents)):
            if found is not None and not isinstance(found, list):
                raise field_problem(where, name, "a list", found)
        value = value["messages"]
    else:
        tools = documents = None
    if not isinstance(value, list) or not value:
        found, found_pt = _kind(value)
        raise problem(ValueError, "chat.not_messages", where=where, found=found, found_pt=found_pt)
    for index, message in enumerate(value):
        _check_message(message, f"messages[{index}]", where)
    return Conversation(value, tools, documents, where)


def _check_message(message: object, field: str, where: str) -> None:
    if not isinstance(message, dict):
        raise field_problem(where, field, "an object", message)
    role = message.get("role")
    if not isinstance(role, str):
        raise field_problem(where, f"{field}.role", "a string", role)
    content = message.get("content")
    if content is None or isinstance(content, str):
        return
    if not isinstance(content, list):
        raise field_problem(where, f"{field}.content", _CONTENT, content)
    for number, part in enumerate(content):
        if not isinstance(part, dict):
            raise field_problem(where, f"{field}.content[{number}]", "an object", part)
        if part.get("type") == "text" and not isinstance(part.get("text"), str):
            raise field_problem(where, f"{field}.content[{number}].text", "a string", part.get("text"))


_KINDS = {
    bool: ("a boolean", "um booleano"),
    int: ("a number", "um número"),
    float: ("a number", "um número"),
    str: ("a string", "uma string"),
    list: ("a list", "uma lista"),
    dict: ("an object", "um objeto"),
}
# What a field must be, in each language.
_EXPECTED = {
    "a list": "uma lista",
    "an object": "um objeto",
    "a string": "uma string",
    _CONTENT: "uma string ou uma lista de partes",
    "a string or an object": "uma string ou um objeto",
}


def _kind(value: object) -> tuple[str, str]:
    """What a JSON value is, as an error names it, in English and Portuguese."""
    if value is None:
        return "null", "null"
    if value == []:
        return "an empty list", "uma lista vazia"
    return _KINDS.get(type(value), (type(value).__name__, type(value).__name__))


def field_problem(where: str, field: str, expected: str, value: object) -> ValueError:
    """The one-line error for a field of a conversation that is not what it must be."""
    found, found_pt = _kind(value)
    return problem(
        ValueError,
        "chat.field",
        where=where,
        field=field,
        expected=expected,
        expected_pt=_EXPECTED[expected],
        found=found,
        found_pt=found_pt,
    )


def _parse(text: str, where: str) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise problem(ValueError, "chat.not_json", where=where, reason=f"{error.msg}, column {error.colno}") from None
    except (ValueError, RecursionError) as error:
        raise problem(ValueError, "chat.not_json", where=where, reason=type(error).__name__) from None


def read_conversation(path: str | Path) -> Conversation:
    """The one conversation of a JSON file."""
    text = read_bounded(path, "conversation file")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        where = f"{path}:{error.lineno}"
        raise problem(ValueError, "chat.not_json", where=where, reason=f"{error.msg}, column {error.colno}") from None
    except (ValueError, RecursionError) as error:
        raise problem(ValueError, "chat.not_json", where=str(path), reason=type(error).__name__) from None
    return conversation_from(value, str(path))


def read_dataset(path: str | Path) -> Iterator[tuple[int, Conversation]]:
    """Each ``(line number, conversation)`` of a JSONL file, one conversation a line
    (blank lines skipped), read as it goes: a dataset may be larger than memory."""
    try:
        lines = open(path, "rb")  # noqa: SIM115 (closed below; opening is what may fail here)
    except OSError as error:
        raise os_problem(error, "file.unreadable", "conversation file", str(path)) from error
    with lines:
        for number, raw in enumerate(lines, 1):
            where = f"{path}:{number}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise problem(ValueError, "chat.not_utf8", where=where, byte=error.start) from None
            if line.strip():
                yield number, conversation_from(_parse(line, where), where)


def is_dataset(path: str | Path) -> bool:
    """Whether ``path`` names a JSONL dataset (by its name: ``.jsonl``) rather than one
    conversation in JSON."""
    return str(path).endswith((".jsonl", ".ndjson"))
