"""A conversation through a model's chat template, token by token, each token's source known.

As transformers' ``apply_chat_template(…, tokenize=True)`` does: the template renders
the conversation (:mod:`~glassllm.chat.sandbox`), then the rendering is tokenized with
the model's special tokens read as special tokens and nothing added around it
(``add_special_tokens=False``). Each token is then the template's, or holds an exact
stretch of a message's content text (:mod:`~glassllm.chat.provenance`); a token that
holds both (where a content meets the template's text and BPE merges across) is the
message's, its offsets those of the content's share of it. A template's token also
knows which part of the template wrote it (:class:`TemplatePart`): the ``{{ … }}``, the
``{% … %}`` or the line of text that wrote its first character, and its line
(:class:`~glassllm.chat.sandbox.Traced`); in Mistral's formats, what the format
inserted (``<s>``, ``[INST]``, the blank line after the system prompt…).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import Any, NamedTuple, cast

from glassllm.chat.conversation import Conversation
from glassllm.chat.mistral import DUMMY_PREFIX, MistralFormat, Special, mistral_format, mistral_parts
from glassllm.chat.provenance import Placed, locate, marked
from glassllm.chat.sandbox import Renderer, RenderFailure, Traced
from glassllm.chat.template import ChatTemplate, find_template
from glassllm.formats.hub import PREFIX, resolve
from glassllm.formats.load import load_model, model_kind, read_model_file
from glassllm.formats.model_tokenizer import ModelTokenizer
from glassllm.shown.problems import Locale, Problem, problem

__all__ = [
    "ChatEncoding",
    "ChatFormat",
    "ChatToken",
    "ChatWarning",
    "TemplatePart",
    "TokenSource",
    "encode_chat",
    "encode_chats",
    "load_chat_format",
    "warning_text",
]

# Conversations sent to the template's worker in one request.
_BATCH = 64
# transformers passes a message's reasoning under each of these names (the first is the
# one templates read), filled in from whichever the message has.
_REASONING = ("reasoning_content", "thinking", "reasoning")


class TokenSource(NamedTuple):
    """Where a token's text is in message ``message`` (counted from 0): code points
    ``[start, end)`` of its content text."""

    message: int
    start: int
    end: int


class ChatWarning(str):
    """A warning about a conversation: the string is its English text (as
    ``ChatEncoding.warnings`` and ``--json`` give it), :meth:`text` words it in the
    reader's language."""

    problem: Problem

    def __new__(cls, code: str, /, **fields: object) -> ChatWarning:
        found = Problem(code, fields)
        warning = super().__new__(cls, found.text("en"))
        warning.problem = found
        return warning

    def text(self, locale: Locale = "en") -> str:
        """The warning in ``locale``."""
        return self.problem.text(locale)


def warning_text(warning: str, locale: Locale) -> str:
    """A warning of ``ChatEncoding.warnings`` in ``locale`` (as given, if it has no other words)."""
    return warning.text(locale) if isinstance(warning, ChatWarning) else warning


class TemplatePart(NamedTuple):
    """The part of a chat template that wrote a token: its ``text`` (a Jinja tag's
    source, or a line of the template's text, cut past 100 characters) and the ``line``
    of the template where it starts, counted from 1; in Mistral's formats, what the
    format inserted, and no line."""

    line: int | None
    text: str


class ChatToken(NamedTuple):
    """One token of a conversation: ``source`` ``None`` when the template wrote it;
    ``start``/``end`` are its characters in the rendered prompt."""

    id: int
    piece: str
    source: TokenSource | None
    start: int
    end: int


_CHAT_TOKEN = cast(
    "Callable[[tuple[int, str, TokenSource | None, int, int]], ChatToken]", partial(tuple.__new__, ChatToken)
)


@dataclass(frozen=True)
class ChatEncoding:
    """A conversation as the model receives it: ``ids``, the ``rendered`` prompt, each
    token with its source (``tokens``, empty when only counted), what to warn about,
    and beside each token the template part that wrote it (``parts``: ``None`` for a
    message's token; empty when only counted)."""

    ids: list[int]
    rendered: str
    tokens: list[ChatToken]
    warnings: list[str]
    parts: list[TemplatePart | None] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.ids)

    @cached_property  # asked of every conversation at each code lens of a dataset
    def template_count(self) -> int:
        """The tokens the template added (0 when only counted: no sources were traced)."""
        return sum(token.source is None for token in self.tokens)


@dataclass
class ChatFormat:
    """A model's tokenizer with its chat format: a Hugging Face chat template (the
    tokenizer matching special tokens, as transformers tokenizes a rendering; the worker
    that renders it) or one of Mistral's formats (the tokenizer reading special-token
    text as ordinary text, as mistral-common encodes a message)."""

    tokenizer: ModelTokenizer
    template: ChatTemplate | MistralFormat
    renderer: Renderer

    def close(self) -> None:
        """End the template's worker process (it ends with the program otherwise)."""
        self.renderer.close()


def load_chat_format(spec: str | Path, *, template: str | Path | None = None) -> ChatFormat:
    """A tokenizer file (or ``hf:ORG/NAME``) and its chat template: the file ``template``
    names, else the one beside the tokenizer (see :func:`~glassllm.chat.template.find_template`)."""
    path = resolve(spec) if isinstance(spec, str) and spec.startswith(PREFIX) else Path(spec)
    data = read_model_file(path)
    kind = model_kind(data)
    mistral = template is None and kind in ("sentencepiece", "tekken")
    tokenizer = load_model(path, match_specials=not mistral)
    if not isinstance(tokenizer, ModelTokenizer):
        raise problem(ValueError, "chat.own_tokenizer", path=spec)
    found = mistral_format(path, str(kind)) if mistral else find_template(path, template)
    return ChatFormat(tokenizer, found, Renderer())


def _normalized(message: dict[str, Any]) -> dict[str, Any]:
    """A message as transformers gives it to a template: keys whose value is ``null``
    dropped, reasoning under each of its names."""
    message = {key: value for key, value in message.items() if value is not None}
    reasoning = next((message[key] for key in _REASONING if key in message), None)
    if reasoning is not None:
        message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
    return message


def _variables(
    template: ChatTemplate, messages: list[dict[str, Any]], conversation: Conversation, prompt: bool
) -> dict[str, Any]:
    return {
        **template.variables,
        "messages": messages,
        "tools": conversation.tools,
        "documents": conversation.documents,
        "add_generation_prompt": prompt,
    }


def encode_chat(chat: ChatFormat, conversation: Conversation, *, generation_prompt: bool = False) -> ChatEncoding:
    """``conversation`` as the model receives it, each token's source traced."""
    return next(encode_chats(chat, [conversation], generation_prompt=generation_prompt))


def encode_chats(
    chat: ChatFormat, conversations: Iterable[Conversation], *, generation_prompt: bool = False, sources: bool = True
) -> Generator[ChatEncoding, None, None]:
    """Each conversation as :func:`encode_chat` gives it, rendered a batch at a time (one
    round trip to the template's worker per batch); ``sources=False`` only counts (no
    tokens, no warnings that need them: several times faster)."""
    if isinstance(chat.template, MistralFormat):
        for conversation in conversations:
            yield _mistral(chat.tokenizer, chat.template, conversation, sources)
        return
    batch: list[Conversation] = []
    for conversation in conversations:
        batch.append(conversation)
        if len(batch) == _BATCH:
            yield from _rendered(chat, batch, generation_prompt, sources)
            batch = []
    if batch:
        yield from _rendered(chat, batch, generation_prompt, sources)


def _rendered(chat: ChatFormat, batch: list[Conversation], prompt: bool, sources: bool) -> Iterator[ChatEncoding]:
    """One request to the template's worker, its answer read before anything is yielded
    (so a caller that stops early leaves nothing unread), then each encoding."""
    _send(chat, batch, prompt, sources)
    answers = chat.renderer.receive()
    return _finish(chat, batch, answers, sources)


def _send(chat: ChatFormat, batch: list[Conversation], prompt: bool, sources: bool) -> None:
    assert isinstance(chat.template, ChatTemplate)
    requests: list[tuple[str, dict[str, Any], bool]] = []
    for conversation in batch:
        source = chat.template.source(bool(conversation.tools))
        messages = [_normalized(message) for message in conversation.messages]
        # The real rendering says which template part wrote what (when sources are traced).
        requests.append((source, _variables(chat.template, messages, conversation, prompt), sources))
        if sources:
            marked_messages = marked(Conversation(messages), source)[0]
            requests.append((source, _variables(chat.template, marked_messages, conversation, prompt), False))
    chat.renderer.send(requests)


def _finish(
    chat: ChatFormat, batch: list[Conversation], answers: list[str | Traced | RenderFailure], sources: bool
) -> Iterator[ChatEncoding]:
    assert isinstance(chat.template, ChatTemplate)
    step = 2 if sources else 1
    for number, failure in enumerate(answers):
        if isinstance(failure, RenderFailure):
            raise _failure(chat.template.path, failure, _where(batch, number // step, len(answers) == 1))
    for number, conversation in enumerate(batch):
        rendered = answers[number * step]
        if not sources:
            assert isinstance(rendered, str)
            yield ChatEncoding(chat.tokenizer.encode(rendered), rendered, [], [])
            continue
        marked_rendering = answers[number * step + 1]
        assert isinstance(rendered, Traced) and isinstance(marked_rendering, str)
        normalized = Conversation([_normalized(message) for message in conversation.messages])
        pair = marked(normalized, chat.template.source(bool(conversation.tools)))[1]
        placed, changed = locate(normalized, rendered.text, marked_rendering, pair)
        yield _traced(chat.tokenizer, rendered, placed, changed)


def _where(batch: list[Conversation], number: int, whole: bool) -> str:
    """Which conversation a failure is about, as its message says it: `` (FILE:LINE)``;
    a stopped worker's is the whole batch's (``FILE:1 to FILE:64``)."""
    if whole and len(batch) > 1 and batch[0].where:
        return f" ({batch[0].where} to {batch[-1].where})"
    return f" ({batch[number].where})" if batch[number].where else ""


def _failure(path: str, failure: RenderFailure, at: str) -> ValueError:
    if failure.kind == "syntax":  # the template's own fault, whatever the conversation
        at = ""
    return problem(ValueError, f"chat.template_{failure.kind}", path=path, detail=failure.detail, at=at)


def _traced(tokenizer: ModelTokenizer, rendered: Traced, placed: list[Placed], changed: set[int]) -> ChatEncoding:
    tokens = _trace(tokenizer, rendered.text, placed, 0)
    ids = [token.id for token in tokens]
    stretches = [(end, TemplatePart(line or None, text)) for end, line, text in rendered.parts]
    warnings = _warnings(tokenizer, tokens, changed, template=True)
    return ChatEncoding(ids, rendered.text, tokens, warnings, _parts_of(tokens, stretches))


def _parts_of(tokens: list[ChatToken], stretches: list[tuple[int, TemplatePart]]) -> list[TemplatePart | None]:
    """Beside each template token, the part whose stretch of the rendering (each up to
    its ``end``, from the previous one's) holds the token's first character."""
    ends = [end for end, _ in stretches]
    found: list[TemplatePart | None] = []
    for token in tokens:
        if token.source is not None or not stretches:
            found.append(None)
            continue
        place = min(bisect_right(ends, token.start), len(stretches) - 1)
        found.append(stretches[place][1])
    return found


def _trace(tokenizer: ModelTokenizer, text: str, placed: list[Placed], base: int) -> list[ChatToken]:
    """The tokens of ``text`` with their sources; ``base``: where ``text`` starts in the
    rendered prompt. A token that holds no character (SentencePiece's dummy prefix) is
    the template's; one over two text parts of a message that the template writes
    side by side has both parts' shares, else the first stretch's."""
    ids, pieces, starts, ends, _ = tokenizer.encode_columns(text)
    sources: list[TokenSource | None] = [None] * len(ids)
    previous: Placed | None = None
    for stretch in placed:
        # The tokens that overlap the stretch: offsets only grow, token after token.
        first = bisect_right(ends, stretch.start)
        shift = stretch.offset - stretch.start
        joined = previous is not None and previous.end == stretch.start and previous.message == stretch.message
        for number in range(first, bisect_left(starts, stretch.end, first)):
            start, end = starts[number], ends[number]
            if start >= end:
                continue
            share = TokenSource(stretch.message, max(start, stretch.start) + shift, min(end, stretch.end) + shift)
            before = sources[number]
            if before is None:
                sources[number] = share
            elif joined and before.end == share.start:
                sources[number] = TokenSource(share.message, before.start, share.end)
        previous = stretch
    if base:
        starts, ends = [start + base for start in starts], [end + base for end in ends]
    # Built by tuple.__new__ in C, not a call per token: the records are most of the cost.
    return list(map(_CHAT_TOKEN, zip(ids, pieces, sources, starts, ends, strict=True)))


def _mistral(tokenizer: ModelTokenizer, chat: MistralFormat, conversation: Conversation, sources: bool) -> ChatEncoding:
    rendered = ""
    tokens: list[ChatToken] = []
    parts: list[TemplatePart | None] = []
    ids: list[int] = []
    for part in mistral_parts(chat, tokenizer, conversation, conversation.where or chat.path):
        if isinstance(part, Special):
            piece = tokenizer.vocab[part.id]
            tokens.append(ChatToken(part.id, piece, None, len(rendered), len(rendered) + len(piece)))
            parts.append(TemplatePart(None, part.name))
            ids.append(part.id)
            rendered += piece
        elif sources:
            traced = _trace(tokenizer, part.text, part.placed, len(rendered))
            tokens.extend(traced)
            parts.extend(_inserted_parts(traced, part.inserted, len(rendered)))
            rendered += part.text
        else:
            ids.extend(tokenizer.encode(part.text))
            rendered += part.text
    if not sources:
        return ChatEncoding(ids, rendered, [], [])
    warnings = _warnings(tokenizer, tokens, set())
    return ChatEncoding([token.id for token in tokens], rendered, tokens, warnings, parts)


def _inserted_parts(
    tokens: list[ChatToken], inserted: list[tuple[int, int, str]], base: int
) -> list[TemplatePart | None]:
    """Beside each template token of a Mistral text (at ``base`` in the prompt), what
    the format inserted where its first character is; a token that holds no character
    is the dummy prefix SentencePiece puts before a text."""
    starts = [base + start for start, _, _ in inserted]
    found: list[TemplatePart | None] = []
    for token in tokens:
        place = bisect_right(starts, token.start) - 1
        if token.source is not None:
            found.append(None)
        elif place >= 0 and token.start < base + inserted[place][1] and token.start < token.end:
            found.append(TemplatePart(None, inserted[place][2]))
        else:
            found.append(TemplatePart(None, DUMMY_PREFIX))
    return found


def _warnings(
    tokenizer: ModelTokenizer, tokens: list[ChatToken], changed: set[int], template: bool = False
) -> list[str]:
    found: list[str] = [ChatWarning("chat.changed", message=index) for index in sorted(changed)]
    for token in tokens:
        if token.source is not None and tokenizer.is_matched(token.id):
            message, start, _ = token.source
            found.append(ChatWarning("chat.injection", message=message, piece=token.piece, start=start))
    before = tokenizer.around[0]
    if template and before and tuple(token.id for token in tokens[: len(before)]) == before:
        found.append(ChatWarning("chat.double_bos", names=" ".join(tokenizer.tokens(before))))
    return found
