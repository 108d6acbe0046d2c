"""One self-contained HTML page for ``glassllm inspect|compare|explain --html``.

The page is a file to hand over (to a class, in a chat): CSS and script are inline, a
Content-Security-Policy forbids every request, and it reads the same offline, on a phone,
in a light or a dark scheme and with a screen reader. The text shows as coloured pieces;
each piece is focusable and carries its ID, chunk and merge chain (``data-*`` and an
``aria-label``), which a tooltip shows on hover, keyboard focus or tap.

Everything shown comes from the library: :meth:`Tokenizer.encode_spans` (pieces, IDs,
chunks), :meth:`Tokenizer.derivation` (the merge chain), :meth:`Tokenizer.explain` (the
steps) and :func:`compare` (the aligned chunks and totals).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from html import escape
from string import Template

from glassllm import __version__
from glassllm.compare import ComparedChunk, Comparison, TokenizerTotals, compare
from glassllm.pipeline.tokens import ChunkExplanation, TokenSpan
from glassllm.shown.visible import visible
from glassllm.tokenizer import UNK_ID, Tokenizer

__all__ = [
    "LANGUAGES",
    "PAGES",
    "TOKEN_PAGE_POLICY",
    "PageWords",
    "compare_page",
    "explain_page",
    "inspect_page",
    "page_head",
    "token_page",
    "token_script",
]

LANGUAGES = ("en", "pt")

_MESSAGES: dict[str, dict[str, str]] = {
    "en": {
        "inspect": "Tokens of a text",
        "compare": "Compare tokenizers",
        "explain": "BPE merges, step by step",
        "help": "Hover, tap or focus a piece (Tab, then the arrow keys) to see its ID, chunk and merges.",
        "tokenizer": "tokenizer",
        "tokens": "tokens",
        "chunks": "chunks",
        "characters": "characters",
        "chars_per_token": "characters/token",
        "unknown": "unknown",
        "totals": "Totals",
        "text": "The text, piece by piece",
        "id": "ID",
        "token": "token",
        "of": "of",
        "chunk": "chunk",
        "merges": "merges",
        "single": "no merge: a single character of the vocabulary",
        "unk": "unknown character (<unk>)",
        "start": "characters",
        "rank": "rank",
        "seen": "seen {count} times in training",
        "pieces": "pieces",
        "ids": "IDs",
        "differing": "Chunks split differently, the largest gap first",
        "same": "Every tokenizer splits every chunk the same way.",
        "more": "and {count} more",
        "empty": "The text is empty: no tokens.",
        "made": "Made by glassllm {version}: text → NFC → chunks → merges → pieces → IDs.",
        "space": "space",
    },
    "pt": {
        "inspect": "Tokens de um texto",
        "compare": "Comparar tokenizadores",
        "explain": "Fusões BPE, passo a passo",
        "help": "Passe o mouse, toque ou foque uma peça (Tab, depois as setas) para ver seu ID, trecho e fusões.",
        "tokenizer": "tokenizador",
        "tokens": "tokens",
        "chunks": "trechos",
        "characters": "caracteres",
        "chars_per_token": "caracteres/token",
        "unknown": "desconhecidos",
        "totals": "Totais",
        "text": "O texto, peça por peça",
        "id": "ID",
        "token": "token",
        "of": "de",
        "chunk": "trecho",
        "merges": "fusões",
        "single": "sem fusão: um único caractere do vocabulário",
        "unk": "caractere desconhecido (<unk>)",
        "start": "caracteres",
        "rank": "posição",
        "seen": "vista {count} vezes no treino",
        "pieces": "peças",
        "ids": "IDs",
        "differing": "Trechos divididos de outro modo, a maior diferença primeiro",
        "same": "Todos os tokenizadores dividem cada trecho do mesmo modo.",
        "more": "e mais {count}",
        "empty": "O texto está vazio: nenhum token.",
        "made": "Feito pelo glassllm {version}: texto → NFC → trechos → fusões → peças → IDs.",
        "space": "espaço",
    },
}

# Chunks listed in the comparison's table of differences; the panels show every token.
_DIFFERING_SHOWN = 50


class PageWords:
    """A page's words and numbers in one language, from ``table`` (each language's texts
    by key)."""

    def __init__(self, table: Mapping[str, Mapping[str, str]], language: str) -> None:
        if language not in table:
            raise ValueError(f"unknown page language {language!r}: use one of {', '.join(table)}")
        self.language = language
        self.messages = table[language]

    def __call__(self, key: str, **values: object) -> str:
        return self.messages[key].format(**values)

    def integer(self, number: int) -> str:
        text = f"{number:,}"
        return text.replace(",", ".") if self.language == "pt" else text

    def decimal(self, number: float) -> str:
        text = f"{number:.2f}"
        return text.replace(".", ",") if self.language == "pt" else text

    def percent(self, part: int, whole: int) -> str:
        text = f"{100 * part / whole:.1f}%" if whole else "0%"
        return text.replace(".", ",") if self.language == "pt" else text


def merge_chain(tokenizer: Tokenizer, piece: str) -> str:
    """``▁vez ← ▁ve + z ← ▁v + e``: the merges that built ``piece``, the last one first;
    empty for a single character."""
    steps = tokenizer.derivation(piece)
    if not steps:
        return ""
    parts = [visible(steps[0][0]), *(f"{visible(left)} + {visible(right)}" for _, left, right in steps)]
    return " ← ".join(parts)


def _surface(text: str) -> str:
    """A token's characters as the text flows: a line break stays a break, after a mark."""
    return "⏎\n".join(map(visible, text.split("\n")))


def _tokens(text: str, spans: list[TokenSpan], tokenizer: Tokenizer, name: str, words: PageWords) -> str:
    """The text as focusable coloured pieces, each with its data and a text alternative."""
    if not spans:
        return f'<p class="note">{escape(words("empty"))}</p>'
    chunk_pieces: dict[int, list[str]] = {}
    chunk_text: dict[int, str] = {}
    for span in spans:
        chunk_pieces.setdefault(span.chunk, []).append(visible(span.piece))
        chunk_text[span.chunk] = chunk_text.get(span.chunk, "") + span.piece
    chains: dict[str, str] = {}
    out = []
    for index, span in enumerate(spans):
        piece = visible(span.piece)
        if span.piece not in chains:
            chains[span.piece] = merge_chain(tokenizer, span.piece) if span.id != UNK_ID else ""
        chain = chains[span.piece]
        spoken = piece.replace("▁", f"{words('space')} ")
        label = (
            f"{spoken}: {words('id')} {span.id}, {words('token')} {words.integer(index + 1)} "
            f"{words('of')} {words.integer(len(spans))}, {words('chunk')} {span.chunk}"
        )
        attributes = {
            "class": f"tok c{index % 6}" + (" unk" if span.id == UNK_ID else ""),
            "tabindex": "0",
            "role": "button",
            "aria-label": label,
            "aria-describedby": "tip",
            "data-index": str(index),
            "data-tokenizer": name,
            "data-id": str(span.id),
            "data-piece": piece,
            "data-chunk": str(span.chunk),
            "data-chunk-text": visible(chunk_text[span.chunk]),
            "data-chunk-pieces": " · ".join(chunk_pieces[span.chunk]),
            "data-chain": chain,
        }
        rendered = " ".join(f'{key}="{escape(value)}"' for key, value in attributes.items())
        out.append(f"<span {rendered}>{escape(_surface(text[span.start : span.end]))}</span>")
    return f'<p class="text" data-tokenizer="{escape(name)}">{"".join(out)}</p>'


def _totals_table(totals: list[TokenizerTotals], words: PageWords) -> str:
    head = "".join(
        f'<th scope="col">{escape(words(key))}</th>'
        for key in ("tokenizer", "tokens", "chunks", "characters", "chars_per_token", "unknown")
    )
    rows = []
    for total in totals:
        cells = (
            words.integer(total.tokens),
            words.integer(total.chunks),
            words.integer(total.characters),
            words.decimal(total.chars_per_token),
            words.integer(total.unknown),
        )
        rows.append(
            f'<tr><th scope="row">{escape(total.name)}</th>{"".join(f"<td>{cell}</td>" for cell in cells)}</tr>'
        )
    return (
        f'<section aria-labelledby="totals"><h2 id="totals">{escape(words("totals"))}</h2>'
        f'<div class="scroll"><table class="totals"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div></section>"
    )


def _totals(name: str, text: str, spans: list[TokenSpan]) -> TokenizerTotals:
    return TokenizerTotals(
        name=name,
        tokens=len(spans),
        chunks=spans[-1].chunk + 1 if spans else 0,
        characters=len(text),
        unknown=sum(span.id == UNK_ID for span in spans),
    )


def _pieces(pieces: list[str] | tuple[str, ...]) -> str:
    """Pieces as small bands, separated for a screen reader by a hidden ``·``."""
    separator = '<span class="sr"> · </span>'
    return separator.join(f'<span class="pc c{i % 6}">{escape(visible(p))}</span>' for i, p in enumerate(pieces))


def _steps(item: ChunkExplanation, words: PageWords) -> str:
    rows = [f'<li><span class="what">{escape(words("start"))}</span> {_pieces(item.characters)}</li>']
    for step in item.steps:
        seen = (
            ""
            if step.count is None
            else f' <span class="seen">({escape(words("seen", count=words.integer(step.count)))})</span>'
        )
        merge = f"{escape(visible(step.pair[0]))} + {escape(visible(step.pair[1]))} → {escape(visible(step.result))}"
        rows.append(
            f'<li><span class="what">{escape(words("rank"))} {words.integer(step.rank)}: '
            f"<code>{merge}</code>{seen}</span> {_pieces(step.pieces)}</li>"
        )
    ids = ", ".join(map(str, item.ids))
    return (
        f'<section class="chunk" aria-label="{escape(words("chunk"))} {item.index}">'
        f"<h3>{escape(words('chunk'))} {item.index}: <code>{escape(visible(item.chunk))}</code></h3>"
        f'<ol class="steps">{"".join(rows)}</ol>'
        f'<p class="result"><span class="what">{escape(words("pieces"))}</span> {_pieces(item.pieces)} '
        f'<span class="what">{escape(words("ids"))}</span> <code>[{ids}]</code></p></section>'
    )


def _differing(comparison: Comparison, words: PageWords) -> str:
    differing = comparison.most_different()
    if not differing:
        return f'<p class="note">{escape(words("same"))}</p>'
    head = f'<th scope="col">{escape(words("chunk"))}</th>' + "".join(
        f'<th scope="col">{escape(name)}</th>' for name in comparison.names
    )
    # A chunk that recurs is split the same way each time: one row, with how often it occurs.
    occurrences = Counter(chunk.chunk for chunk in differing)
    first: dict[str, ComparedChunk] = {}
    for chunk in differing:
        first.setdefault(chunk.chunk, chunk)
    distinct = list(first.values())
    rows = []
    for chunk in distinct[:_DIFFERING_SHOWN]:
        cells = "".join(
            f"<td>{_pieces(pieces)} <span class='count'>{len(pieces)}</span></td>" for pieces in chunk.pieces
        )
        times = occurrences[chunk.chunk]
        often = f" <span class='count'>×{words.integer(times)}</span>" if times > 1 else ""
        rows.append(f"<tr><th scope='row'><code>{escape(visible(chunk.chunk))}</code>{often}</th>{cells}</tr>")
    more = len(distinct) - _DIFFERING_SHOWN
    note = f'<p class="note">{escape(words("more", count=words.integer(more)))}</p>' if more > 0 else ""
    return (
        f'<section aria-labelledby="differing"><h2 id="differing">{escape(words("differing"))}</h2>'
        f'<div class="scroll"><table class="differing"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>{note}</section>"
    )


def inspect_page(text: str, name: str, tokenizer: Tokenizer, language: str, note: str = "") -> str:
    """The text as coloured pieces with their IDs, chunks and merges, and the totals;
    ``note`` (plain text, e.g. where the text comes from) goes under the title."""
    words = PageWords(_MESSAGES, language)
    spans = tokenizer.encode_spans(text)
    body = (
        f'<section aria-labelledby="text"><h2 id="text">{escape(words("text"))} · '
        f"{escape(words('tokenizer'))} {escape(name)}</h2>{_tokens(text, spans, tokenizer, name, words)}</section>"
        + _totals_table([_totals(name, text, spans)], words)
    )
    return _page(words, "inspect", body, note)


def explain_page(text: str, name: str, tokenizer: Tokenizer, language: str, note: str = "") -> str:
    """The pieces, then every chunk's merge steps from its characters to its pieces;
    ``note`` as in :func:`inspect_page`."""
    words = PageWords(_MESSAGES, language)
    spans = tokenizer.encode_spans(text)
    steps = "".join(_steps(item, words) for item in tokenizer.explain(text))
    body = (
        f'<section aria-labelledby="text"><h2 id="text">{escape(words("text"))} · '
        f"{escape(words('tokenizer'))} {escape(name)}</h2>{_tokens(text, spans, tokenizer, name, words)}</section>"
        f'<section aria-labelledby="steps"><h2 id="steps">{escape(words("explain"))}</h2>{steps}</section>'
        + _totals_table([_totals(name, text, spans)], words)
    )
    return _page(words, "explain", body, note)


def compare_page(text: str, tokenizers: Mapping[str, Tokenizer], language: str, note: str = "") -> str:
    """Each tokenizer's pieces side by side, the chunks they split differently, the totals;
    ``note`` as in :func:`inspect_page`."""
    words = PageWords(_MESSAGES, language)
    comparison = compare(text, tokenizers)
    panels = "".join(
        f'<section class="panel" aria-labelledby="panel-{number}">'
        f'<h2 id="panel-{number}">{escape(words("tokenizer"))} {escape(name)}</h2>'
        f"{_tokens(text, tokenizer.encode_spans(text), tokenizer, name, words)}</section>"
        for number, (name, tokenizer) in enumerate(tokenizers.items())
    )
    body = (
        f'<div class="panels" style="--panels: {len(tokenizers)}">{panels}</div>'
        + _differing(comparison, words)
        + _totals_table(comparison.totals, words)
    )
    return _page(words, "compare", body, note)


PAGES: dict[str, Callable[[str, str, Tokenizer, str], str]] = {"inspect": inspect_page, "explain": explain_page}

_CSS = """
:root { color-scheme: light dark; --bg: #fdfdfc; --fg: #1b1b1f; --muted: #5b5b66; --line: #d4d4dc;
  --tip: #ffffff; --focus: #1a56db;
  --c0: #c8e6fa; --c1: #fde2b8; --c2: #d3f0d0; --c3: #f6d0e6; --c4: #e2dbfb; --c5: #fbf3b6; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #17171c; --fg: #ececf1; --muted: #a9a9b8; --line: #3a3a46; --tip: #24242c; --focus: #7eb0ff;
    --c0: #1f4d6b; --c1: #6b4a1b; --c2: #24552b; --c3: #63294b; --c4: #3f3470; --c5: #5c5418; }
}
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 72rem; padding: 1rem; background: var(--bg); color: var(--fg);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; } h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
h3 { font-size: 1rem; margin: 1rem 0 .25rem; }
code, .text, .pc { font-family: ui-monospace, "Cascadia Mono", "DejaVu Sans Mono", monospace; }
.help, .note, footer { color: var(--muted); }
.text { white-space: pre-wrap; overflow-wrap: anywhere; font-size: 1.1rem; line-height: 2; margin: 0; }
.tok { border-radius: .2rem; padding: .15rem 0; box-shadow: inset -1px 0 0 var(--line); cursor: help;
  color: var(--fg); }
.tok:focus { outline: 3px solid var(--focus); outline-offset: 1px; }
.tok:hover, .tok.on { outline: 2px solid var(--focus); }
.tok.unk { text-decoration: underline wavy #d12; }
.c0 { background: var(--c0); } .c1 { background: var(--c1); } .c2 { background: var(--c2); }
.c3 { background: var(--c3); } .c4 { background: var(--c4); } .c5 { background: var(--c5); }
.pc { display: inline-block; padding: 0 .2rem; margin: .1rem .1rem .1rem 0; border-radius: .2rem; white-space: pre; }
#tip { position: absolute; z-index: 10; max-width: min(24rem, calc(100vw - 1rem)); padding: .5rem .75rem;
  background: var(--tip); color: var(--fg); border: 1px solid var(--line); border-radius: .4rem;
  box-shadow: 0 .25rem 1rem rgba(0, 0, 0, .25); font-size: .95rem; overflow-wrap: anywhere; }
#tip[hidden] { display: none; }
#tip .piece { font-family: ui-monospace, monospace; font-weight: 700; font-size: 1.1rem; }
#tip dl { display: grid; grid-template-columns: auto 1fr; gap: .1rem .5rem; margin: .25rem 0 0; }
#tip dt { color: var(--muted); } #tip dd { margin: 0; font-family: ui-monospace, monospace; }
.panels { display: grid; grid-template-columns: repeat(var(--panels), minmax(0, 1fr)); gap: 1rem; }
.panel h2 { margin-top: .5rem; }
@media (max-width: 40rem) { .panels { grid-template-columns: minmax(0, 1fr); } body { padding: .75rem; } }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; }
th, td { padding: .25rem .6rem; border-bottom: 1px solid var(--line); text-align: left; }
.totals td { text-align: right; font-variant-numeric: tabular-nums; }
.count { color: var(--muted); font-size: .85rem; }
.steps { padding-left: 1.25rem; margin: .25rem 0; } .steps li { margin: .2rem 0; }
.what { color: var(--muted); margin-right: .25rem; } .seen { font-size: .85rem; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
"""

# Hover and focus show a token's tooltip, a tap (or Enter) pins it, Escape hides it; the
# arrow keys, Home and End move between the tokens of one text. A page gives only what its
# tooltip holds: a function ``contents(data)`` of a token's dataset returning the
# tooltip's nodes (see token_script).
_TOKEN_SCRIPT = """
(() => {
  const words = JSON.parse(document.getElementById('words').textContent);
  const tip = document.getElementById('tip');
  let pinned = null;
$contents
  function show(token) {
    document.querySelectorAll('.tok.on').forEach((other) => other.classList.remove('on'));
    token.classList.add('on');
    tip.replaceChildren(...contents(token.dataset));
    tip.hidden = false;
    const box = token.getBoundingClientRect();
    const width = tip.offsetWidth;
    const left = Math.max(8, Math.min(box.left, document.documentElement.clientWidth - width - 8));
    tip.style.left = (left + window.scrollX) + 'px';
    tip.style.top = (box.bottom + window.scrollY + 6) + 'px';
  }
  function hide() {
    pinned = null; tip.hidden = true;
    document.querySelectorAll('.tok.on').forEach((token) => token.classList.remove('on'));
  }
  document.addEventListener('mouseover', (event) => {
    const token = event.target.closest('.tok');
    if (token) show(token); else if (!pinned && !tip.contains(event.target)) hide();
  });
  document.addEventListener('focusin', (event) => {
    const token = event.target.closest('.tok');
    if (token) show(token);
  });
  document.addEventListener('click', (event) => {
    const token = event.target.closest('.tok');
    if (token) { pinned = token; show(token); } else if (!tip.contains(event.target)) hide();
  });
  document.addEventListener('keydown', (event) => {
    const token = event.target.closest && event.target.closest('.tok');
    if (event.key === 'Escape') { hide(); return; }
    if (!token) return;
    if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); pinned = token; show(token); return; }
    const all = Array.from(token.parentElement.querySelectorAll('.tok'));
    const at = all.indexOf(token);
    const moves = { ArrowRight: at + 1, ArrowDown: at + 1, ArrowLeft: at - 1, ArrowUp: at - 1 };
    const next = { ...moves, Home: 0, End: all.length - 1 }[event.key];
    if (next !== undefined && all[next]) { event.preventDefault(); all[next].focus(); }
  });
})();
"""


def token_script(contents: str) -> str:
    """The script of a page of tokens whose tooltips ``contents`` fills (see above)."""
    return Template(_TOKEN_SCRIPT).substitute(contents=contents)


# A piece's tooltip: its ID and tokenizer, its chunk and the merges that made it.
_SCRIPT = token_script("""  function row(term, value) {
    const dt = document.createElement('dt'); dt.textContent = term;
    const dd = document.createElement('dd'); dd.textContent = value;
    return [dt, dd];
  }
  function contents(data) {
    const head = document.createElement('div');
    const piece = document.createElement('span'); piece.className = 'piece'; piece.textContent = data.piece;
    head.append(piece, ' · ' + words.id + ' ' + data.id + ' · ' + words.tokenizer + ' ' + data.tokenizer);
    const list = document.createElement('dl');
    list.append(...row(words.chunk + ' ' + data.chunk, data.chunkText + ' → ' + data.chunkPieces));
    list.append(...row(words.merges, data.chain || (data.id === words.unkId ? words.unk : words.single)));
    return [head, list];
  }""")

# Nothing may leave the page: no fetch, image, font or frame; only the inline style and script.
TOKEN_PAGE_POLICY = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"

_HEAD = Template("""<!DOCTYPE html>
<html lang="$lang">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="$policy">
<meta name="generator" content="glassllm $version">
<title>$title · glassllm</title>
<style>$css</style>
</head>
""")


def page_head(language: str, title: str, css: str, policy: str) -> str:
    """The start of every self-contained page glassllm writes, up to ``<body>``: its
    language, its Content-Security-Policy (nothing may leave the page) and its style."""
    return _HEAD.substitute(
        lang="pt-BR" if language == "pt" else "en",
        policy=policy,
        version=escape(__version__),
        title=escape(title),
        css=css,
    )


_PAGE = Template("""$head<body>
<header><h1>$title</h1>$note<p class="help">$help</p></header>
<main>$body</main>
<div id="tip" role="tooltip" hidden></div>
<footer><p>$made</p></footer>
<script type="application/json" id="words">$words</script>
<script>$script</script>
</body>
</html>
""")


def _page(words: PageWords, kind: str, body: str, note: str = "") -> str:
    labels = {key: words(key) for key in ("id", "tokenizer", "chunk", "merges", "single", "unk")}
    labels["unkId"] = str(UNK_ID)
    return token_page(words, kind, _CSS, body, note, labels, _SCRIPT)


def token_page(
    words: PageWords, title: str, css: str, body: str, note: str, labels: dict[str, str], script: str
) -> str:
    """A whole page of tokens: its ``words(title)``, ``body``, the tooltip's ``labels``
    and the ``script`` :func:`token_script` made."""
    # "</" cannot end the script element early: JSON allows "<\\/".
    labels_json = json.dumps(labels, ensure_ascii=False).replace("</", "<\\/")
    return _PAGE.substitute(
        head=page_head(words.language, words(title), css, TOKEN_PAGE_POLICY),
        title=escape(words(title)),
        note=f'<p class="note">{escape(note)}</p>' if note else "",
        help=escape(words("help")),
        body=body,
        made=escape(words("made", version=__version__)),
        words=labels_json,
        script=script,
    )
