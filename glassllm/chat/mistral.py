"""Mistral's chat formats, as mistral-common's ``encode_chat_completion`` builds them.

mistral-common also validates a request before it encodes it (it refuses a system
message after an assistant's, and, outside its fine-tuning mode, a conversation that
ends with an assistant's message); glassllm shows what the encoder makes of any order.

Mistral ships no Jinja template: mistral-common builds the tokens in code, version by
version, and glassllm follows it for conversations of text (``system``, ``user`` and
``assistant`` messages; tools and tool messages are refused with a clear message):

- consecutive messages of one role become one, their non-empty texts (and a message's
  text parts) joined with a blank line (``"\\n\\n"``);
- up to v3 the system messages leave the conversation: their texts, joined the same way,
  open the first user message (v1) or the last one (v2, v3), followed by a blank line; a
  conversation that then does not open with a user message gets an empty one first;
- v7 keeps each system message where it is, between ``[SYSTEM_PROMPT]`` and
  ``[/SYSTEM_PROMPT]``;
- ``<s>`` opens the conversation; a user message is ``[INST]`` + its text + ``[/INST]``
  (v1: the text ``"[INST] " + text + " [/INST]"``, encoded as ordinary text); an
  assistant message is its text (from v2, without trailing spaces) and ``</s>``.

Each text is encoded on its own, as mistral-common's ``encode(text, bos=False, eos=False)``
(special-token text in it stays ordinary text, so a message cannot end its turn). A
conversation that ends with a user message ends with ``[/INST]``: that is the prompt for
the assistant, so these formats have no generation prompt of their own.

What the format inserts is named by what inserted it (:data:`BOS`, ``[INST]``,
:data:`JOIN`, :data:`AFTER_SYSTEM`…), as a Hugging Face template's tokens are by the part
of the template that wrote them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from glassllm.chat.conversation import Conversation
from glassllm.chat.provenance import Placed
from glassllm.formats.files import read_bounded_bytes
from glassllm.formats.model_tokenizer import ModelTokenizer
from glassllm.shown.problems import problem

__all__ = [
    "AFTER_SYSTEM",
    "BOS",
    "DUMMY_PREFIX",
    "EOS",
    "JOIN",
    "MistralFormat",
    "Special",
    "Text",
    "mistral_format",
    "mistral_parts",
]

_JOIN = "\n\n"
# The names of what the formats insert besides their special tokens' own names.
BOS = "<s> (BOS)"
EOS = "</s> (EOS)"
JOIN = "\n\n joining two texts"
AFTER_SYSTEM = "\n\n after the system prompt, placed in this user message"
DUMMY_PREFIX = "▁ (SentencePiece's dummy prefix before a text)"
_V1_OPEN = "[INST] (v1, as text)"
_V1_CLOSE = "[/INST] (v1, as text)"
_VERSIONS = ("v1", "v2", "v3", "v7")


@dataclass(frozen=True)
class MistralFormat:
    """Which of mistral-common's instruct versions a tokenizer file is for."""

    path: str
    version: str


class Special(NamedTuple):
    """A special token the format inserts, and its name (:data:`BOS`, ``[INST]``…)."""

    id: int
    name: str


@dataclass
class Text:
    """A text the format encodes on its own, with the messages' stretches in it and
    what the format inserted in it (``inserted``: ``(start, end, name)``)."""

    text: str = ""
    placed: list[Placed] = field(default_factory=list)
    inserted: list[tuple[int, int, str]] = field(default_factory=list)

    def template(self, text: str, name: str) -> Text:
        if text:
            self.inserted.append((len(self.text), len(self.text) + len(text), name))
        self.text += text
        return self

    def content(self, message: int, text: str, offset: int = 0) -> Text:
        self.placed.append(Placed(len(self.text), len(self.text) + len(text), message, offset))
        self.text += text
        return self


def mistral_format(path: str | Path, kind: str) -> MistralFormat:
    """The version of a Mistral tokenizer file: a SentencePiece ``.model.vN`` says it in
    its name (a bare ``.model`` is v1, as mistral-common reads it), a Tekken JSON in its
    ``config``; ``ValueError`` naming the file for a version glassllm does not follow."""
    if kind == "tekken":
        config = json.loads(read_bounded_bytes(path, "tokenizer file")).get("config", {})
        version = str(config.get("version"))
    else:
        found = re.search(r"\.model(?:\.(v\d+)(?:m\d+)?)?$", str(path))
        version = (found.group(1) or "v1") if found else "v1"
    if version not in _VERSIONS:
        raise problem(ValueError, "chat.mistral_version", path=path, version=version, known=", ".join(_VERSIONS))
    return MistralFormat(str(path), version)


def _texts(conversation: Conversation, index: int) -> list[tuple[int, str, int]]:
    """Message ``index``'s non-empty texts: ``(message, text, offset in its content)``."""
    found = []
    offset = 0
    for part in conversation.parts(index):
        if part:
            found.append((index, part, offset))
        offset += len(part)
    return found


def _groups(conversation: Conversation, where: str) -> list[tuple[str, list[int]]]:
    """Consecutive messages of one role, as ``(role, their indices)``."""
    groups: list[tuple[str, list[int]]] = []
    for index, message in enumerate(conversation.messages):
        role = message["role"]
        if role not in ("system", "user", "assistant") or message.get("tool_calls") or conversation.tools:
            raise problem(ValueError, "chat.mistral_tools", where=where, field=f"messages[{index}]")
        if groups and groups[-1][0] == role:
            groups[-1][1].append(index)
        else:
            groups.append((role, [index]))
    return groups


def _joined(into: Text, texts: list[tuple[int, str, int]]) -> Text:
    for number, (message, text, offset) in enumerate(texts):
        into.template(_JOIN if number else "", JOIN).content(message, text, offset)
    return into


def mistral_parts(
    chat: MistralFormat, tokenizer: ModelTokenizer, conversation: Conversation, where: str
) -> list[Special | Text]:
    """The conversation as the format builds it: special token IDs and texts to encode."""
    groups = _groups(conversation, where)
    system: list[tuple[int, str, int]] = []
    if chat.version != "v7":
        system = [
            text for role, indices in groups if role == "system" for i in indices for text in _texts(conversation, i)
        ]
        groups = [group for group in groups if group[0] != "system"]
        if not groups or groups[0][0] != "user":
            groups.insert(0, ("user", []))
    users = [number for number, (role, _) in enumerate(groups) if role == "user"]

    def special(name: str, called: str | None = None) -> Special:
        return Special(tokenizer.specials[name], called or name)

    parts: list[Special | Text] = [special("<s>", BOS)]
    for number, (role, indices) in enumerate(groups):
        texts = [text for index in indices for text in _texts(conversation, index)]
        if role == "assistant":
            parts.extend([_assistant(chat, texts, indices[0], where), special("</s>", EOS)])
        elif role == "system":
            for index in indices:
                text = _joined(Text(), _texts(conversation, index))
                parts.extend([special("[SYSTEM_PROMPT]"), text, special("[/SYSTEM_PROMPT]")])
        else:
            text = Text().template("[INST] " if chat.version == "v1" else "", _V1_OPEN)
            if system and number == (users[0] if chat.version == "v1" else users[-1]):
                _joined(text, system).template(_JOIN, AFTER_SYSTEM)
            _joined(text, texts)
            if chat.version == "v1":
                parts.append(text.template(" [/INST]", _V1_CLOSE))
            else:
                parts.extend([special("[INST]"), text, special("[/INST]")])
    return parts


def _assistant(chat: MistralFormat, texts: list[tuple[int, str, int]], first: int, where: str) -> Text:
    if not texts:
        raise problem(ValueError, "chat.mistral_empty", where=where, field=f"messages[{first}].content")
    if chat.version != "v1":
        # mistral-common strips the spaces that end an assistant's text (v2 on); a text
        # left empty keeps the blank line before it, as stripping the joined text does.
        message, last, offset = texts[-1]
        texts = [*texts[:-1], (message, last.rstrip(" "), offset)]
    return _joined(Text(), texts)
