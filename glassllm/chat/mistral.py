"""Mistral's chat formats, as mistral-common's ``encode_chat_completion`` builds them.

mistral-common also validates a request before it encodes it (it refuses a system
message after an assistant's, and, outside its fine-tuning mode, a conversation that
ends with an assistant's message; from v3, a tool call id that is not nine letters and
digits; tool calls without as many results); glassllm shows what the encoder makes of
any order.

Mistral ships no Jinja template: mistral-common builds the tokens in code, version by
version, and glassllm follows it for ``system``, ``user``, ``assistant`` and ``tool``
messages and the conversation's ``tools`` (other roles are refused):

- consecutive messages of one role become one, their non-empty texts (and a message's
  text parts) joined with a blank line (``"\\n\\n"``); an assistant's tool calls are
  gathered in order; tool messages stay one by one;
- up to v3 the system messages leave the conversation: their texts, joined the same way,
  open the first user message (v1) or the last one (v2, v3), followed by a blank line; a
  conversation that then does not open with a user message gets an empty one first;
- v7 keeps each system message where it is, between ``[SYSTEM_PROMPT]`` and
  ``[/SYSTEM_PROMPT]``;
- ``<s>`` opens the conversation; a user message is ``[INST]`` + its text + ``[/INST]``
  (v1: the text ``"[INST] " + text + " [/INST]"``, encoded as ordinary text); an
  assistant message is its text (from v2, without trailing spaces), its tool calls, and
  ``</s>``.

Tools (v2 on; v1 has none: mistral-common refuses tool calls and tool messages there and
leaves ``tools`` out, so glassllm refuses all three rather than count a prompt without
them). JSON is written as ``json.dumps(…, ensure_ascii=False)`` writes it:

- ``[AVAILABLE_TOOLS]`` + the tools (``[{"type": "function", "function": {"name",
  "description", "parameters"}}]``) + ``[/AVAILABLE_TOOLS]`` open the last user message,
  before its ``[INST]``;
- an assistant's calls are ``[TOOL_CALLS]`` + ``[{"name", "arguments", "id"}, …]`` (v2:
  no ``id``; none either when a call has none), the arguments parsed as JSON and written
  again (a text that is not JSON becomes a JSON string, an empty one ``{}``); before v7 an
  assistant turn holds text or calls, not both;
- a tool message is ``[TOOL_RESULTS]`` + its result + ``[/TOOL_RESULTS]``: v2
  ``[{"name", "content"}]``, v3 ``{"content", "call_id"}`` (the content parsed and written
  again as the arguments are), v7 the ``tool_call_id`` as text, ``[TOOL_CONTENT]`` and the
  content as given;
- v2 leaves out the calls and results before the last user message and refuses two
  results for one turn after it.

Where each token comes from: the tools are the conversation's, not a message's content,
so their JSON is the format's (:data:`TOOLS`); so are a call's name, id and arguments —
the arguments come from the message's ``tool_calls``, not its content, and are named
:data:`ARGUMENTS`. A tool result is the tool message's content: placed at its offsets
where the format writes it verbatim (always in v7; in v2 and v3 when the content is JSON
already written as ``json.dumps`` writes it, or text needing no escape, set between the
format's quotes), else named :data:`RESULT`, the content rewritten.

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
from typing import Any, NamedTuple

from glassllm.chat.conversation import Conversation, field_problem
from glassllm.chat.provenance import Placed
from glassllm.formats.files import read_bounded_bytes
from glassllm.formats.model_tokenizer import ModelTokenizer
from glassllm.shown.problems import problem

__all__ = [
    "AFTER_SYSTEM",
    "ARGUMENTS",
    "BOS",
    "CALLS_JSON",
    "CALL_ID",
    "DUMMY_PREFIX",
    "EOS",
    "JOIN",
    "RESULT",
    "RESULT_JSON",
    "TOOLS",
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
TOOLS = "the tools, in JSON (the conversation's tools)"
CALLS_JSON = "the tool calls' JSON around their arguments"
ARGUMENTS = "a tool call's arguments (the assistant message's tool_calls), written in JSON"
RESULT_JSON = "the tool result's JSON around its content"
RESULT = "a tool result's content, rewritten in JSON"
CALL_ID = "the tool message's tool_call_id"
_V1_OPEN = "[INST] (v1, as text)"
_V1_CLOSE = "[/INST] (v1, as text)"
_VERSIONS = ("v1", "v2", "v3", "v7")
_ROLES = ("system", "user", "assistant", "tool")


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


def _groups(conversation: Conversation, where: str, version: str) -> list[tuple[str, list[int]]]:
    """Consecutive messages of one role, as ``(role, their indices)``; each tool message
    is a group of its own, as mistral-common keeps them."""
    groups: list[tuple[str, list[int]]] = []
    for index, message in enumerate(conversation.messages):
        role = message["role"]
        if role not in _ROLES:
            raise problem(ValueError, "chat.mistral_role", where=where, field=f"messages[{index}].role", role=role)
        if version == "v1" and (role == "tool" or message.get("tool_calls")):
            raise problem(ValueError, "chat.mistral_tools", where=where, field=f"messages[{index}]")
        if groups and groups[-1][0] == role and role != "tool":
            groups[-1][1].append(index)
        else:
            groups.append((role, [index]))
    if version == "v1" and conversation.tools:
        raise problem(ValueError, "chat.mistral_tools", where=where, field="tools")
    return groups


def _joined(into: Text, texts: list[tuple[int, str, int]]) -> Text:
    for number, (message, text, offset) in enumerate(texts):
        into.template(_JOIN if number else "", JOIN).content(message, text, offset)
    return into


def mistral_parts(
    chat: MistralFormat, tokenizer: ModelTokenizer, conversation: Conversation, where: str
) -> list[Special | Text]:
    """The conversation as the format builds it: special token IDs and texts to encode."""
    groups = _groups(conversation, where, chat.version)
    system: list[tuple[int, str, int]] = []
    if chat.version != "v7":
        system = [
            text for role, indices in groups if role == "system" for i in indices for text in _texts(conversation, i)
        ]
        groups = [group for group in groups if group[0] != "system"]
        if not groups or groups[0][0] != "user":
            groups.insert(0, ("user", []))
    users = [number for number, (role, _) in enumerate(groups) if role == "user"]
    last_user = users[-1] if users else -1
    if chat.version == "v2":
        _check_v2_results(conversation, groups, last_user, where)
    build = _Builder(chat, tokenizer, conversation, where)
    build.special("<s>", BOS)
    for number, (role, indices) in enumerate(groups):
        if role == "assistant":
            build.assistant(indices, number < last_user)
        elif role == "tool":
            build.tool(indices[0], number < last_user)
        elif role == "system":
            for index in indices:
                build.special("[SYSTEM_PROMPT]").text(_joined(Text(), _texts(conversation, index)))
                build.special("[/SYSTEM_PROMPT]")
        else:
            first = users[0] if chat.version == "v1" else last_user
            build.user(indices, system if number == first else [], number == last_user)
    return build.parts


def _check_v2_results(
    conversation: Conversation, groups: list[tuple[str, list[int]]], last_user: int, where: str
) -> None:
    """v2 refuses two tool results for one assistant turn that it writes (those from the
    last user message on), as mistral-common does."""
    calls, results = False, 0
    for role, indices in groups[max(last_user, 0) :]:
        if role == "tool":
            results += calls
            if results > 1:
                raise problem(ValueError, "chat.mistral_v2_results", where=where, field=f"messages[{indices[0]}]")
        else:
            calls = role == "assistant" and any(conversation.messages[i].get("tool_calls") for i in indices)
            results = 0


@dataclass
class _Builder:
    """The parts of one conversation, added turn by turn."""

    chat: MistralFormat
    tokenizer: ModelTokenizer
    conversation: Conversation
    where: str
    parts: list[Special | Text] = field(default_factory=list)

    def special(self, name: str, called: str | None = None) -> _Builder:
        self.parts.append(Special(self.tokenizer.specials[name], called or name))
        return self

    def text(self, text: Text) -> _Builder:
        self.parts.append(text)
        return self

    def user(self, indices: list[int], system: list[tuple[int, str, int]], last: bool) -> None:
        v1 = self.chat.version == "v1"
        if last and not v1 and self.conversation.tools:
            tools = _tools_json(self.conversation.tools, self.where)
            self.special("[AVAILABLE_TOOLS]").text(Text().template(tools, TOOLS)).special("[/AVAILABLE_TOOLS]")
        text = Text().template("[INST] " if v1 else "", _V1_OPEN)
        if system:
            _joined(text, system).template(_JOIN, AFTER_SYSTEM)
        _joined(text, [found for index in indices for found in _texts(self.conversation, index)])
        if v1:
            self.text(text.template(" [/INST]", _V1_CLOSE))
        else:
            self.special("[INST]").text(text).special("[/INST]")

    def assistant(self, indices: list[int], before_last_user: bool) -> None:
        texts = [text for index in indices for text in _texts(self.conversation, index)]
        calls = [(index, call) for index in indices for call in _calls(self.conversation, index, self.where)]
        field = f"messages[{indices[0]}]"
        if not texts and not calls:
            raise problem(ValueError, "chat.mistral_empty", where=self.where, field=f"{field}.content")
        if texts and calls and self.chat.version != "v7":
            raise problem(ValueError, "chat.mistral_text_and_calls", where=self.where, field=field)
        if calls and self.chat.version == "v2" and before_last_user:
            return  # v2 leaves out the tool calls before the last user message, </s> and all
        if texts:
            self.text(_assistant_text(self.chat, texts))
        if calls:
            self.special("[TOOL_CALLS]").text(self._calls_json(calls))
        self.special("</s>", EOS)

    def _calls_json(self, calls: list[tuple[int, tuple[str, str, str]]]) -> Text:
        text = Text().template("[", CALLS_JSON)
        for number, (_, (name, arguments, call_id)) in enumerate(calls):
            text.template(", " * bool(number) + '{"name": ' + _dumps(name) + ', "arguments": ', CALLS_JSON)
            text.template(arguments, ARGUMENTS)
            if self.chat.version != "v2" and call_id != "null":
                text.template(', "id": ' + _dumps(call_id), CALLS_JSON)
            text.template("}", CALLS_JSON)
        return text.template("]", CALLS_JSON)

    def tool(self, index: int, before_last_user: bool) -> None:
        if self.chat.version == "v2" and before_last_user:
            return  # v2 leaves out the tool results before the last user message
        texts = _texts(self.conversation, index)
        self.special("[TOOL_RESULTS]")
        if self.chat.version == "v7":
            call_id = _tool_field(self.conversation, index, "tool_call_id", self.where, needed=True)
            self.text(Text().template(call_id or "", CALL_ID)).special("[TOOL_CONTENT]").text(_joined(Text(), texts))
        elif self.chat.version == "v2":
            name = _tool_field(self.conversation, index, "name", self.where, needed=False)
            text = Text().template('[{"name": ' + _dumps(name) + ', "content": ', RESULT_JSON)
            self.text(_result(text, texts).template("}]", RESULT_JSON))
        else:
            call_id = _tool_field(self.conversation, index, "tool_call_id", self.where, needed=True)
            text = _result(Text().template('{"content": ', RESULT_JSON), texts)
            self.text(text.template(', "call_id": ' + _dumps(call_id) + "}", RESULT_JSON))
        self.special("[/TOOL_RESULTS]")


def _assistant_text(chat: MistralFormat, texts: list[tuple[int, str, int]]) -> Text:
    if chat.version != "v1":
        # mistral-common strips the spaces that end an assistant's text (v2 on); a text
        # left empty keeps the blank line before it, as stripping the joined text does.
        message, last, offset = texts[-1]
        texts = [*texts[:-1], (message, last.rstrip(" "), offset)]
    return _joined(Text(), texts)


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _loaded(text: str) -> object:
    """``text`` parsed as JSON, or ``text`` itself when it is not JSON (mistral-common's
    ``_parse_json_content``)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


def _as_json(text: str) -> str:
    """A tool call's arguments or a tool result's content as mistral-common writes it in
    JSON: normalized (empty: ``{}``; JSON: re-serialized), parsed again, then dumped."""
    normalized = "{}"
    if text:
        try:
            normalized = _dumps(json.loads(text))
        except (ValueError, RecursionError):
            normalized = text
    return _dumps(_loaded(normalized))


def _result(into: Text, texts: list[tuple[int, str, int]]) -> Text:
    """A tool result's content in its JSON (v2, v3): the message's own text where the JSON
    holds it verbatim (JSON already written as ``json.dumps`` writes it, or a string
    that needs no escape, between quotes), else the format's rewriting of it."""
    content = _JOIN.join(text for _, text, _ in texts)
    written = _as_json(content)
    if written == content:
        return _joined(into, texts)
    if written == f'"{content}"':
        return _joined(into.template('"', RESULT_JSON), texts).template('"', RESULT_JSON)
    return into.template(written, RESULT)


def _calls(conversation: Conversation, index: int, where: str) -> list[tuple[str, str, str]]:
    """Message ``index``'s tool calls: ``(name, arguments as written in JSON, id)``;
    ``"null"`` stands for no id, as in mistral-common."""
    calls = conversation.messages[index].get("tool_calls")
    if not calls:
        return []
    if not isinstance(calls, list):
        raise field_problem(where, f"messages[{index}].tool_calls", "a list", calls)
    return [_call(call, f"messages[{index}].tool_calls[{number}]", where) for number, call in enumerate(calls)]


def _call(call: object, field: str, where: str) -> tuple[str, str, str]:
    if not isinstance(call, dict):
        raise field_problem(where, field, "an object", call)
    function = call.get("function")
    if not isinstance(function, dict):
        raise field_problem(where, f"{field}.function", "an object", function)
    name, arguments, call_id = function.get("name"), function.get("arguments"), call.get("id")
    if not isinstance(name, str):
        raise field_problem(where, f"{field}.function.name", "a string", name)
    if call_id is not None and not isinstance(call_id, str):
        raise field_problem(where, f"{field}.id", "a string", call_id)
    if isinstance(arguments, dict):
        arguments = json.dumps(arguments)  # as mistral-common's FunctionCall takes an object
    elif arguments is None:
        arguments = "{}"
    elif not isinstance(arguments, str):
        raise field_problem(where, f"{field}.function.arguments", "a string or an object", arguments)
    return name, _as_json(arguments), call_id or "null"


def _tool_field(conversation: Conversation, index: int, name: str, where: str, *, needed: bool) -> str | None:
    """A tool message's ``tool_call_id`` (v3 and v7 need it) or ``name`` (v2's, may be absent)."""
    value = conversation.messages[index].get(name)
    if not isinstance(value, str) and (needed or value is not None):
        raise field_problem(where, f"messages[{index}].{name}", "a string", value)
    return value


def _tools_json(tools: list[Any], where: str) -> str:
    """The conversation's tools as mistral-common dumps them: each one's ``function``
    with its ``name``, ``description`` (empty when absent) and ``parameters``; other
    keys are left out."""
    dumped = []
    for number, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise field_problem(where, f"tools[{number}]", "an object", tool)
        function = tool.get("function")
        if not isinstance(function, dict):
            raise field_problem(where, f"tools[{number}].function", "an object", function)
        kept = {"name": function.get("name"), "description": function.get("description", "")}
        kept["parameters"] = function.get("parameters")
        for key, value in kept.items():
            expected = "an object" if key == "parameters" else "a string"
            if not isinstance(value, dict if key == "parameters" else str):
                raise field_problem(where, f"tools[{number}].function.{key}", expected, value)
        dumped.append({"type": "function", "function": kept})
    return _dumps(dumped)
