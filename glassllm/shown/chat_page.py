"""What a model receives, on a page: the self-contained HTML of ``glassllm chat --html``.

For a conversation, the rendered prompt token by token, the chat template's tokens marked
apart from each message's (hatched, and said in each token's text alternative), each
token focusable with a tooltip that gives its ID and its source: the part of the
template that wrote it (its line and source), or the message and the characters of its
content it holds; then the counts (the template's share), the tokens of each message and
of each template part, and the warnings. For a JSONL dataset, the summary, each line's
count (the first :data:`LINES_SHOWN` lines), and the first :data:`CONVERSATIONS_SHOWN`
conversations in full; the page says how many it shows.

As the other pages (:mod:`glassllm.shown.html_page`): one file, a Content-Security-Policy
that forbids every request, light and dark schemes, English or Portuguese, a phone's width.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape

from glassllm.chat import ChatEncoding, TemplatePart
from glassllm.chat.encoding import warning_text
from glassllm.shown.html_page import PageWords, token_page, token_script
from glassllm.shown.problems import Locale
from glassllm.shown.visible import visible

__all__ = ["CONVERSATIONS_SHOWN", "LINES_SHOWN", "ShownConversation", "chat_page", "dataset_page"]

# A dataset's conversations shown token by token, and its lines listed with their counts:
# enough to see what the template does and where the large lines are; the page stays a
# file a browser opens at once.
CONVERSATIONS_SHOWN = 10
LINES_SHOWN = 1000

_WORDS = {
    "en": {
        "title": "What the model receives",
        "help": "The template's tokens are hatched, each message's in its own colour. Hover, tap or focus a token "
        "(Tab, then the arrow keys) to see its ID and where it comes from.",
        "counts": "{tokens} tokens: {template} from the template ({share}), {messages} from the messages",
        "prompt": "The prompt, token by token",
        "legend": "Template",
        "message": "message {message} ({role})",
        "messages": "Tokens of each message",
        "role": "role",
        "tokens": "tokens",
        "parts": "Parts of the template that wrote tokens",
        "line": "line",
        "part": "part",
        "inserted": "inserted by the format",
        "warnings": "Warnings",
        "no_warnings": "No warnings.",
        "template": "template",
        "id": "ID",
        "token": "token",
        "of": "of",
        "characters": "characters {start}–{end} of its content",
        "empty": "(no character)",
        "space": "space",
        "dataset": "{examples} conversations · {total} tokens · max {max} · p50 {p50} · p95 {p95}",
        "over": "{count} over {limit} tokens (lines): {lines}",
        "none": "none",
        "summary": "Summary",
        "lines": "Tokens of each line",
        "lines_shown": "The first {shown} of {examples} lines.",
        "line_head": "line {line}",
        "shown": "The first {shown} of {examples} conversations in full",
        "conversation": "Line {line}: {counts}",
        "made": "Made by glassllm {version}: the template rendered in Jinja2's sandbox, then tokenized as "
        "transformers' apply_chat_template(…, tokenize=True) does (Mistral's formats as mistral-common's "
        "encode_chat_completion).",
    },
    "pt": {
        "title": "O que o modelo recebe",
        "help": "Os tokens do modelo de chat são hachurados, os de cada mensagem têm a sua cor. Passe o mouse, "
        "toque ou foque um token (Tab, depois as setas) para ver o ID dele e de onde ele vem.",
        "counts": "{tokens} tokens: {template} do modelo de chat ({share}), {messages} das mensagens",
        "prompt": "O prompt, token por token",
        "legend": "Modelo de chat",
        "message": "mensagem {message} ({role})",
        "messages": "Tokens de cada mensagem",
        "role": "papel",
        "tokens": "tokens",
        "parts": "Partes do modelo de chat que escreveram tokens",
        "line": "linha",
        "part": "parte",
        "inserted": "inserido pelo formato",
        "warnings": "Avisos",
        "no_warnings": "Nenhum aviso.",
        "template": "modelo de chat",
        "id": "ID",
        "token": "token",
        "of": "de",
        "characters": "caracteres {start}–{end} do conteúdo",
        "empty": "(nenhum caractere)",
        "space": "espaço",
        "dataset": "{examples} conversas · {total} tokens · máx. {max} · p50 {p50} · p95 {p95}",
        "over": "{count} acima de {limit} tokens (linhas): {lines}",
        "none": "nenhuma",
        "summary": "Resumo",
        "lines": "Tokens de cada linha",
        "lines_shown": "As primeiras {shown} de {examples} linhas.",
        "line_head": "linha {line}",
        "shown": "As primeiras {shown} de {examples} conversas por inteiro",
        "conversation": "Linha {line}: {counts}",
        "made": "Feito pelo glassllm {version}: o modelo de chat renderizado na sandbox do Jinja2, depois "
        "tokenizado como o apply_chat_template(…, tokenize=True) do transformers tokeniza (os formatos da "
        "Mistral como o encode_chat_completion do mistral-common).",
    },
}


@dataclass(frozen=True)
class ShownConversation:
    """A conversation shown in full: its encoding, its messages' roles, its line in a
    dataset (0 for a conversation file) and how its tokenizer writes a piece for a
    person (``ModelTokenizer.readable``: a byte-level ``Ġbrief`` as ``▁brief``)."""

    encoding: ChatEncoding
    roles: list[str]
    line: int = 0
    readable: Callable[[str], str] = str


def _part_words(part: TemplatePart, words: PageWords) -> str:
    where = words("inserted") if part.line is None else f"{words('line')} {part.line}"
    return f"{words('template')}: {where} · {visible(part.text)}"


def _surface(text: str) -> str:
    return "⏎\n".join(map(visible, text.split("\n")))


def _token(shown: ShownConversation, index: int, prefix: str, words: PageWords) -> str:
    """One token as a focusable span: its class says whose it is, its data and text
    alternative say its ID and source."""
    encoding = shown.encoding
    token = encoding.tokens[index]
    part = encoding.parts[index] if encoding.parts else None
    if token.source is None:
        kind = "tok tpl"
        source = _part_words(part, words) if part is not None else words("template")
    else:
        kind = f"tok m{token.source.message % 6}"
        message = words("message", message=token.source.message, role=shown.roles[token.source.message])
        source = f"{message} · {words('characters', start=token.source.start, end=token.source.end)}"
    piece = visible(shown.readable(token.piece))
    text = encoding.rendered[token.start : token.end]
    spoken = piece.replace("▁", f"{words('space')} ")
    label = (
        f"{spoken}: {words('id')} {token.id}, {words('token')} {words.integer(index + 1)} "
        f"{words('of')} {words.integer(encoding.count)}, {source}"
    )
    attributes = {
        "class": kind if text else f"{kind} none",
        "tabindex": "0",
        "role": "button",
        "aria-label": label,
        "aria-describedby": "tip",
        "id": f"{prefix}t{index}",
        "data-index": str(index),
        "data-id": str(token.id),
        "data-piece": piece,
        "data-source": source,
    }
    rendered = " ".join(f'{key}="{escape(value)}"' for key, value in attributes.items())
    return f"<span {rendered}>{escape(_surface(text) if text else piece)}</span>"


def _counts(encoding: ChatEncoding, words: PageWords) -> str:
    template = encoding.template_count
    return words(
        "counts",
        tokens=words.integer(encoding.count),
        template=words.integer(template),
        share=words.percent(template, encoding.count),
        messages=words.integer(encoding.count - template),
    )


def _table(caption: str, heads: Sequence[str], rows: Sequence[Sequence[str]], kind: str) -> str:
    head = "".join(f'<th scope="col">{escape(cell)}</th>' for cell in heads)
    body = "".join(
        f'<tr><th scope="row">{escape(row[0])}</th>{"".join(f"<td>{escape(cell)}</td>" for cell in row[1:])}</tr>'
        for row in rows
    )
    return (
        f'<div class="scroll"><table class="{kind}"><caption>{escape(caption)}</caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def _details(shown: ShownConversation, words: PageWords) -> str:
    """Each message's tokens, each template part's, and the warnings."""
    encoding = shown.encoding
    by_message = [0] * len(shown.roles)
    parts: dict[TemplatePart, int] = {}
    for token, part in zip(encoding.tokens, encoding.parts or [None] * len(encoding.tokens), strict=True):
        if token.source is not None:
            by_message[token.source.message] += 1
        elif part is not None:
            parts[part] = parts.get(part, 0) + 1
    messages = [
        (str(number), role, words.integer(count))
        for number, (role, count) in enumerate(zip(shown.roles, by_message, strict=True))
    ]
    found = _table(words("messages"), ("#", words("role"), words("tokens")), messages, "messages")
    if parts:
        rows = [
            (words("inserted") if part.line is None else str(part.line), visible(part.text), words.integer(count))
            for part, count in parts.items()
        ]
        found += _table(words("parts"), (words("line"), words("part"), words("tokens")), rows, "parts")
    if encoding.warnings:
        language: Locale = "pt" if words.language == "pt" else "en"
        items = "".join(f"<li>{escape(warning_text(warning, language))}</li>" for warning in encoding.warnings)
        return found + f'<ul class="warnings" aria-label="{escape(words("warnings"))}">{items}</ul>'
    return found + f'<p class="note">{escape(words("no_warnings"))}</p>'


def _conversation(shown: ShownConversation, prefix: str, words: PageWords) -> str:
    tokens = "".join(_token(shown, index, prefix, words) for index in range(len(shown.encoding.tokens)))
    legend = "".join(
        f'<span class="key m{number % 6}">{escape(words("message", message=number, role=role))}</span>'
        for number, role in enumerate(shown.roles)
    )
    return (
        f'<p class="counts">{escape(_counts(shown.encoding, words))}</p>'
        f'<p class="legend"><span class="key tpl">{escape(words("legend"))}</span>{legend}</p>'
        f'<p class="text">{tokens}</p>{_details(shown, words)}'
    )


def chat_page(shown: ShownConversation, language: str, note: str = "") -> str:
    """The page of one conversation (see the module's docstring); ``note`` (plain text:
    the file and the tokenizer) goes under the title."""
    words = PageWords(_WORDS, language)
    body = (
        f'<section aria-labelledby="prompt"><h2 id="prompt">{escape(words("prompt"))}</h2>'
        f"{_conversation(shown, '', words)}</section>"
    )
    return _page(words, body, note)


def dataset_page(
    summary: Mapping[str, object],
    counts: Sequence[tuple[int, int]],
    shown: Sequence[ShownConversation],
    language: str,
    note: str = "",
) -> str:
    """The page of a dataset: ``summary`` as ``glassllm chat --json`` gives it, each
    ``(line, count)``, and the conversations shown in full (see the module's docstring)."""
    words = PageWords(_WORDS, language)
    examples = int(str(summary["examples"]))
    numbers = {key: words.integer(int(str(summary[key]))) for key in ("examples", "total", "max", "p50", "p95")}
    top = f'<p class="counts">{escape(words("dataset", **numbers))}</p>'
    over = summary.get("over")
    if summary.get("max_tokens") and isinstance(over, list):
        lines = ", ".join(map(str, over)) if over else words("none")
        limit = words.integer(int(str(summary["max_tokens"])))
        top += f'<p class="over">{escape(words("over", count=words.integer(len(over)), limit=limit, lines=lines))}</p>'
    sections = "".join(
        f'<section aria-labelledby="c{number}"><h3 id="c{number}">'
        f"{escape(words('conversation', line=one.line, counts=_counts(one.encoding, words)))}</h3>"
        f"{_conversation(one, f'c{number}', words)}</section>"
        for number, one in enumerate(shown)
    )
    heading = words("shown", shown=words.integer(len(shown)), examples=words.integer(examples))
    rows = [(words("line_head", line=line), words.integer(count)) for line, count in counts[:LINES_SHOWN]]
    listed = words("lines_shown", shown=words.integer(len(rows)), examples=words.integer(examples))
    body = (
        f'<section aria-labelledby="summary"><h2 id="summary" class="sr">{escape(words("summary"))}</h2>{top}</section>'
        f'<section aria-labelledby="shown"><h2 id="shown">{escape(heading)}</h2>{sections}</section>'
        f'<section aria-labelledby="lines"><h2 id="lines">{escape(words("lines"))}</h2>'
        f'<p class="note">{escape(listed)}</p>'
        f"{_table(words('lines'), (words('line'), words('tokens')), rows, 'lines')}</section>"
    )
    return _page(words, body, note)


_CSS = """
:root { color-scheme: light dark; --bg: #fdfdfc; --fg: #1b1b1f; --muted: #5b5b66; --line: #d4d4dc;
  --tip: #ffffff; --focus: #1a56db; --tpl: #6b6b78;
  --c0: #c8e6fa; --c1: #fde2b8; --c2: #d3f0d0; --c3: #f6d0e6; --c4: #e2dbfb; --c5: #fbf3b6; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #17171c; --fg: #ececf1; --muted: #a9a9b8; --line: #3a3a46; --tip: #24242c; --focus: #7eb0ff;
    --tpl: #8d8d9c; --c0: #1f4d6b; --c1: #6b4a1b; --c2: #24552b; --c3: #63294b; --c4: #3f3470; --c5: #5c5418; }
}
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 72rem; padding: 1rem; background: var(--bg); color: var(--fg);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; } h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
h3 { font-size: 1rem; margin: 1.25rem 0 .25rem; }
code, .text { font-family: ui-monospace, "Cascadia Mono", "DejaVu Sans Mono", monospace; }
.help, .note, footer { color: var(--muted); }
/* A file's path (the note) or a warning quoting a piece has no place to break a line. */
.note, .counts, .over, .warnings, footer { overflow-wrap: anywhere; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; font-size: 1.05rem; line-height: 2; margin: .5rem 0; }
.tok { border-radius: .2rem; padding: .15rem 0; box-shadow: inset -1px 0 0 var(--line); cursor: help;
  color: var(--fg); }
.tok:focus { outline: 3px solid var(--focus); outline-offset: 1px; }
.tok:hover, .tok.on { outline: 2px solid var(--focus); }
.tpl { color: var(--fg); background: repeating-linear-gradient(135deg, transparent 0 4px,
  color-mix(in srgb, var(--tpl) 35%, transparent) 4px 6px); box-shadow: inset 0 0 0 1px var(--tpl); }
.tok.none { color: var(--muted); font-size: .8em; }
.m0 { background: var(--c0); } .m1 { background: var(--c1); } .m2 { background: var(--c2); }
.m3 { background: var(--c3); } .m4 { background: var(--c4); } .m5 { background: var(--c5); }
.legend { display: flex; flex-wrap: wrap; gap: .4rem; margin: .25rem 0; }
.key { padding: 0 .4rem; border-radius: .2rem; font-size: .9rem; }
.counts { font-weight: 600; margin: .25rem 0; }
.warnings { color: #b3261e; padding-left: 1.25rem; }
@media (prefers-color-scheme: dark) { .warnings { color: #ffb4ab; } }
#tip { position: absolute; z-index: 10; max-width: min(28rem, calc(100vw - 1rem)); padding: .5rem .75rem;
  background: var(--tip); color: var(--fg); border: 1px solid var(--line); border-radius: .4rem;
  box-shadow: 0 .25rem 1rem rgba(0, 0, 0, .25); font-size: .95rem; overflow-wrap: anywhere; }
#tip[hidden] { display: none; }
#tip .piece { font-family: ui-monospace, monospace; font-weight: 700; font-size: 1.1rem; }
#tip .from { margin: .25rem 0 0; font-family: ui-monospace, monospace; white-space: pre-wrap; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: .75rem 0; }
caption { text-align: left; font-weight: 600; padding: .25rem 0; }
th, td { padding: .25rem .6rem; border-bottom: 1px solid var(--line); text-align: left; }
td:last-child { text-align: right; font-variant-numeric: tabular-nums; }
table.parts td:nth-child(2) { font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
@media (max-width: 40rem) { body { padding: .75rem; } }
"""

# The tooltip of a token: its piece and ID, and where it came from (see token_script).
_SCRIPT = token_script("""  function contents(data) {
    const head = document.createElement('div');
    const piece = document.createElement('span'); piece.className = 'piece'; piece.textContent = data.piece;
    head.append(piece, ' · ' + words.id + ' ' + data.id);
    const from = document.createElement('p'); from.className = 'from'; from.textContent = data.source;
    return [head, from];
  }""")


def _page(words: PageWords, body: str, note: str) -> str:
    return token_page(words, "title", _CSS, body, note, {"id": words("id")}, _SCRIPT)
