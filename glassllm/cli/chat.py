"""``glassllm chat``: a conversation as the model receives it, the template's tokens apart.

    $ glassllm chat hello.json -t llama3/tokenizer.json
    ⟦<|begin_of_text|><|start_header_id|>user<|end_header_id|>⏎
    ⏎
    ⟧Hello!⟦<|eot_id|><|start_header_id|>assistant<|end_header_id|>⏎
    ⏎
    ⟧

    1 message · 12 tokens: 10 from the template, 2 from the messages (message 0: 2)
    template parts:
      line 3 {{ content }}: 6 tokens
      line 3 {{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}: 4 tokens

``-t`` is a Hugging Face ``tokenizer.json`` whose chat template is beside it (or named
with ``--template``), or a Mistral ``.model`` or Tekken JSON, encoded in Mistral's own
format (:mod:`glassllm.chat.mistral`). ``FILE`` is one conversation in JSON, or a JSONL
dataset (``.jsonl``: one conversation a line, the fine-tuning format), counted with a
summary: examples, total, the largest, the median and 95th percentile (nearest rank),
and the lines over ``--max-tokens``. On a terminal the template's text is shown in
colour, elsewhere between ``⟦ ⟧``; ``--html PAGE`` writes it as a page instead
(:mod:`glassllm.shown.chat_page`). Then the parts of the template that wrote it (a
``{{ … }}``, a ``{% … %}`` or a line of text, and its line; in Mistral's formats, what
the format inserted), with how many tokens each wrote. ``--json`` gives each template
token its part too: ``"template_part": {"line": 3, "text": "{{ content }}"}`` (no
``line`` in Mistral's formats).
"""

from __future__ import annotations

import argparse
import json
import math
import os
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path
from typing import TextIO, cast

from glassllm.chat import (
    ChatEncoding,
    ChatFormat,
    Conversation,
    TemplatePart,
    encode_chat,
    encode_chats,
    load_chat_format,
    read_conversation,
    read_dataset,
)
from glassllm.chat.conversation import is_dataset
from glassllm.chat.encoding import warning_text
from glassllm.shown.chat_page import CONVERSATIONS_SHOWN, ShownConversation, chat_page, dataset_page
from glassllm.shown.html_page import LANGUAGES
from glassllm.shown.problems import environment_locale
from glassllm.shown.visible import visible

__all__ = ["add_parser", "dataset_summary", "encoding_json", "part_counts", "part_json"]

_TEMPLATE_COLOR = "\x1b[2;7m"  # dim, reversed: the template's text, apart from what people wrote
_RESET = "\x1b[0m"


def part_json(part: TemplatePart) -> dict[str, object]:
    """A template part as ``--json`` gives it: ``{"line", "text"}``, ``{"text"}`` without a line."""
    return {"text": part.text} if part.line is None else {"line": part.line, "text": part.text}


def encoding_json(encoding: ChatEncoding) -> dict[str, object]:
    """One conversation as ``glassllm chat --json`` prints it."""
    parts = encoding.parts or [None] * len(encoding.tokens)
    # One dict per distinct part, shared by its tokens: the object per token is most of the cost.
    shown = {part: part_json(part) for part in set(parts) if part is not None}
    tokens = [
        {"id": token_id, "piece": piece, "source": {"message": source[0], "start": source[1], "end": source[2]}}
        if source is not None
        else {"id": token_id, "piece": piece, "source": "template"}
        if part is None
        else {"id": token_id, "piece": piece, "source": "template", "template_part": shown[part]}
        for (token_id, piece, source, _, _), part in zip(encoding.tokens, parts, strict=True)
    ]
    return {
        "ids": encoding.ids,
        "count": encoding.count,
        "template_count": encoding.template_count,
        "tokens": tokens,
        "warnings": encoding.warnings,
    }


def _shown(encoding: ChatEncoding, color: bool) -> str:
    """The rendered prompt, the template's stretches marked (see the module's docstring)."""
    stretches: list[list[int]] = []
    for token in encoding.tokens:
        if token.source is not None:
            continue
        if stretches and token.start <= stretches[-1][1]:
            stretches[-1][1] = max(stretches[-1][1], token.end)
        else:
            stretches.append([token.start, token.end])
    text = encoding.rendered
    out: list[str] = []
    at = 0
    for start, end in stretches:
        out.append(_visible(text[at:start]))
        out.append(_template(_visible(text[start:end]), color))
        at = end
    out.append(_visible(text[at:]))
    return "".join(out)


def _visible(text: str) -> str:
    return "⏎\n".join(map(visible, text.split("\n")))


def _template(text: str, color: bool) -> str:
    return f"{_TEMPLATE_COLOR}{text}{_RESET}" if color else f"⟦{text}⟧"


def _conversation(args: argparse.Namespace, chat: ChatFormat, out: TextIO) -> None:
    conversation = read_conversation(args.file)
    encoding = encode_chat(chat, conversation, generation_prompt=args.generation_prompt)
    if args.json:
        out.write(json.dumps(encoding_json(encoding), ensure_ascii=False) + "\n")
        return
    out.write(_shown(encoding, out.isatty() and not os.environ.get("NO_COLOR")) + "\n\n")
    by_message = [0] * len(conversation.messages)
    for token in encoding.tokens:
        if token.source is not None:
            by_message[token.source.message] += 1
    messages = ", ".join(f"message {index}: {count:,}" for index, count in enumerate(by_message))
    number = len(conversation.messages)
    out.write(
        f"{number} message{'s' if number > 1 else ''} · {encoding.count:,} tokens: {encoding.template_count:,} "
        f"from the template, {encoding.count - encoding.template_count:,} from the messages ({messages})\n"
    )
    if encoding.parts:
        out.write(f"template parts:\n{_parts_lines(encoding)}")
    locale = environment_locale()
    for warning in encoding.warnings:
        out.write(f"{'aviso' if locale == 'pt' else 'warning'}: {warning_text(warning, locale)}\n")


def part_counts(encoding: ChatEncoding) -> dict[TemplatePart, int]:
    """How many tokens each template part wrote, parts in the order they first write."""
    counts: dict[TemplatePart, int] = {}
    for part in encoding.parts:
        if part is not None:
            counts[part] = counts.get(part, 0) + 1
    return counts


def _parts_lines(encoding: ChatEncoding) -> str:
    shown = []
    for part, count in part_counts(encoding).items():
        where = "" if part.line is None else f"line {part.line} "
        shown.append(f"  {where}{visible(part.text)}: {count:,} token{'s' if count > 1 else ''}\n")
    return "".join(shown)


def _nearest_rank(ordered: list[int], percent: int) -> int:
    return ordered[max(math.ceil(percent / 100 * len(ordered)) - 1, 0)]


def dataset_summary(lines: list[int], counts: list[int], max_tokens: int) -> dict[str, object]:
    """A dataset's summary as ``--json`` prints it: percentiles by nearest rank, ``over``
    the lines with more than ``max_tokens`` tokens (none when it is 0)."""
    ordered = sorted(counts)
    return {
        "examples": len(counts),
        "total": sum(counts),
        "max": ordered[-1] if ordered else 0,
        "p50": _nearest_rank(ordered, 50) if ordered else 0,
        "p95": _nearest_rank(ordered, 95) if ordered else 0,
        "max_tokens": max_tokens,
        "over": [line for line, count in zip(lines, counts, strict=True) if max_tokens and count > max_tokens],
    }


def _dataset(args: argparse.Namespace, chat: ChatFormat, out: TextIO) -> None:
    lines: list[int] = []

    def conversations() -> Iterator[Conversation]:
        for number, conversation in read_dataset(args.file):
            lines.append(number)
            yield conversation

    counts: list[int] = []
    found = encode_chats(chat, conversations(), generation_prompt=args.generation_prompt, sources=args.json)
    for index, encoding in enumerate(found):
        counts.append(encoding.count)
        if args.json:
            out.write(json.dumps({"line": lines[index], **encoding_json(encoding)}, ensure_ascii=False) + "\n")
    summary = dataset_summary(lines, counts, args.max_tokens)
    if args.json:
        out.write(json.dumps({"summary": summary}) + "\n")
        return
    out.write(
        f"{summary['examples']:,} conversations · {summary['total']:,} tokens · max {summary['max']:,} · "
        f"p50 {summary['p50']:,} · p95 {summary['p95']:,}\n"
    )
    if args.max_tokens:
        over = cast("list[int]", summary["over"])
        listed = ", ".join(map(str, over)) if over else "none"
        out.write(f"{len(over):,} over {args.max_tokens:,} tokens (lines): {listed}\n")


def _roles(conversation: Conversation) -> list[str]:
    return [str(message.get("role")) for message in conversation.messages]


def _conversation_page(args: argparse.Namespace, chat: ChatFormat, language: str) -> str:
    conversation = read_conversation(args.file)
    encoding = encode_chat(chat, conversation, generation_prompt=args.generation_prompt)
    shown = ShownConversation(encoding, _roles(conversation), readable=chat.tokenizer.readable)
    return chat_page(shown, language, _note(args))


def _dataset_page(args: argparse.Namespace, chat: ChatFormat, language: str) -> str:
    """The first conversations traced (shown in full), the others only counted; the
    dataset read as it goes, as without ``--html``."""
    rows = read_dataset(args.file)
    first = list(islice(rows, CONVERSATIONS_SHOWN))
    prompt = args.generation_prompt
    traced = encode_chats(chat, [conversation for _, conversation in first], generation_prompt=prompt)
    shown = [
        ShownConversation(encoding, _roles(conversation), line, chat.tokenizer.readable)
        for (line, conversation), encoding in zip(first, traced, strict=True)
    ]
    lines = [line for line, _ in first]

    def rest() -> Iterator[Conversation]:
        for line, conversation in rows:
            lines.append(line)
            yield conversation

    counts = [one.encoding.count for one in shown]
    counts += [encoding.count for encoding in encode_chats(chat, rest(), generation_prompt=prompt, sources=False)]
    summary = dataset_summary(lines, counts, args.max_tokens)
    return dataset_page(summary, list(zip(lines, counts, strict=True)), shown, language, _note(args))


def _note(args: argparse.Namespace) -> str:
    template = f" · {args.template}" if args.template else ""
    return f"{args.file} · {args.tokenizer}{template}"


def _write_page(args: argparse.Namespace, chat: ChatFormat, out: TextIO) -> None:
    language = args.lang or environment_locale()
    page = (_dataset_page if is_dataset(args.file) else _conversation_page)(args, chat, language)
    Path(args.html_page).write_text(page, encoding="utf-8")
    out.write(f"{args.html_page}: chat page ({language}), open it in a browser\n")


def _run(args: argparse.Namespace, out: TextIO) -> None:
    chat = load_chat_format(args.tokenizer, template=args.template)
    try:
        if args.html_page:
            _write_page(args, chat, out)
        else:
            (_dataset if is_dataset(args.file) else _conversation)(args, chat, out)
    finally:
        chat.close()


def add_parser(add: Callable[..., argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """``glassllm chat``, with the subparsers' ``add_parser``."""
    summary = "show which tokens a model's chat template adds to a conversation, and count datasets"
    chat = add("chat", help=summary, description=summary)
    chat.add_argument("file", help="a conversation in JSON, or a JSONL dataset (.jsonl: one conversation a line)")
    chat.add_argument(
        "--tokenizer",
        "-t",
        required=True,
        help="a Hugging Face tokenizer.json (its chat template beside it), hf:ORG/NAME from the local cache, "
        "or a Mistral SentencePiece .model or Tekken JSON (Mistral's own chat format)",
    )
    chat.add_argument("--template", help="the chat template (a Jinja file) instead of the one beside the tokenizer")
    chat.add_argument(
        "--generation-prompt",
        action="store_true",
        help="end with the assistant's header, as a prompt to the model (Mistral's formats: a conversation that "
        "ends with a user's message ends with it already)",
    )
    chat.add_argument(
        "--json",
        action="store_true",
        help='print {"ids", "count", "template_count", "tokens": [{"id", "piece", "source"}], "warnings"} '
        '(a template token also has its "template_part": {"line", "text"}); for a dataset one a line, '
        'then {"summary"}',
    )
    chat.add_argument("--max-tokens", type=int, default=0, help="list the dataset's lines over this many tokens")
    # Not ``dest="html"``: the CLI's main sends every command with ``args.html`` to the text pages.
    chat.add_argument(
        "--html",
        dest="html_page",
        metavar="PAGE",
        help="write a self-contained HTML page here instead of printing: the prompt token by token, the "
        f"template's tokens apart (a dataset: its summary, each line's count, the first {CONVERSATIONS_SHOWN} "
        "conversations in full)",
    )
    chat.add_argument(
        "--lang", choices=LANGUAGES, help="the page's language (default: from LC_ALL, LC_MESSAGES or LANG)"
    )
    chat.set_defaults(run=_run)
    return chat
