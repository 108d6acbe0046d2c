"""Hugging Face ``tokenizer.json`` decoders: what ``decode`` gives for a list of tokens.

HF decodes by ``decode_chain``: each decoder maps the list of token strings to a new list,
a ``Sequence`` passes it through its decoders in turn, and the last list is joined. Every
decoder HF's Rust code implements is read here, with its options:

- ``BPEDecoder`` (``suffix``, ``</w>``): the suffix is a space, in the last token nothing;
- ``ByteLevel``: GPT-2's byte characters back to their bytes (a token holding any other
  character: its own UTF-8), all tokens' bytes read as one UTF-8 text, U+FFFD where invalid;
- ``ByteFallback``: a run of ``<0xXX>`` tokens is its bytes as UTF-8, or, if they are not
  valid UTF-8, one U+FFFD per byte token;
- ``CTC`` (``pad_token``, ``word_delimiter_token``, ``cleanup``): a repeated token once,
  the pad token removed, with ``cleanup`` WordPiece's cleanup and the word delimiter a
  space; tokens left empty dropped;
- ``Fuse``: the tokens joined into one;
- ``Metaspace`` (``replacement``, ``prepend_scheme``): the replacement is a space, but in
  the first token it goes (the prefix), unless the prefix is ``never`` put;
- ``Replace`` (a ``String`` or ``Regex`` pattern, ``content``): in each token, as the
  normalizer replaces (an empty match inserts the content too);
- ``Strip`` (``content``, ``start``, ``stop``): up to ``start`` leading and ``stop``
  trailing ``content`` characters off each token;
- ``WordPiece`` (``prefix``, ``cleanup``): a token that opens with the prefix joins the
  token before without it, any other after a space; ``cleanup`` removes spaces before
  punctuation and in English contractions;
- ``Sequence`` (``decoders``, possibly none).

No decoder: HF joins the tokens with spaces.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from itertools import groupby
from typing import Any

from glassllm.formats.byte_level import BYTE_CHARACTERS, from_symbols
from glassllm.formats.patterns import compile_pattern
from glassllm.pipeline.tokens import as_ids

__all__ = ["Chain", "decode_ids", "decoder_from"]

Chain = Callable[[list[str]], list[str]]
"""One decoder's step: the tokens in, the tokens as that decoder leaves them."""

# HF's WordPiece cleanup (shared by CTC), in its order.
_CLEANUP = (
    (" .", "."),
    (" ?", "?"),
    (" !", "!"),
    (" ,", ","),
    (" ' ", "'"),
    (" n't", "n't"),
    (" 'm", "'m"),
    (" do not", " don't"),
    (" 's", "'s"),
    (" 've", "'ve"),
    (" 're", "'re"),
)

# Rust's ``u8::from_str_radix(_, 16)`` on a byte token's two characters: a ``+`` sign is allowed.
_BYTE_TOKEN = re.compile(r"<0x(\+[0-9A-Fa-f]|[0-9A-Fa-f]{2})>")


def decoder_from(path: str, spec: Any) -> Callable[[list[str]], str]:
    """What ``decode`` gives for a list of tokens under the decoder ``spec`` (a
    ``tokenizer.json``'s ``decoder``, ``None`` for none) of the file at ``path``; a
    ``ValueError`` naming the file and what is wrong for a decoder HF does not read."""
    if spec is None:
        return " ".join
    chain = _chain(path, spec)
    return lambda tokens: "".join(chain(list(tokens)))


def decode_ids(
    decoder: Callable[[list[str]], str], vocab: Sequence[str], specials: Container[int], ids: Iterable[int]
) -> str:
    """HF's ``decode``: the tokens of ``ids``, special ones left out, through ``decoder``."""
    return decoder([vocab[token_id] for token_id in as_ids(ids) if token_id not in specials])


def _chain(path: str, spec: Any) -> Chain:
    if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
        raise ValueError(f"{path}: the decoder {spec!r:.80} is not an object with a type")
    kind = spec["type"]
    read = _READERS.get(kind)
    if read is None:
        raise ValueError(f"{path}: the decoder {kind!r} is not supported: Hugging Face tokenizers has no such decoder")
    return read(path, spec)


def _option(path: str, spec: dict[str, Any], name: str, kind: type, default: Any = None) -> Any:
    """``spec[name]`` if it is a ``kind``, else a ValueError; absent: ``default``, or, where
    HF has none, a ValueError (HF refuses such a file)."""
    if name not in spec and default is None:
        raise ValueError(f"{path}: the {spec['type']} decoder has no {name}")
    value = spec.get(name, default)
    if not isinstance(value, kind) or (kind is int and (isinstance(value, bool) or value < 0)):
        raise ValueError(f"{path}: the {spec['type']} decoder's {name} {value!r:.40} is not a valid {kind.__name__}")
    return value


def _sequence(path: str, spec: dict[str, Any]) -> Chain:
    steps = spec.get("decoders")
    if not isinstance(steps, list):
        raise ValueError(f"{path}: the Sequence decoder has no list of decoders")
    chains = [_chain(path, step) for step in steps]

    def decode(tokens: list[str]) -> list[str]:
        for chain in chains:
            tokens = chain(tokens)
        return tokens

    return decode


def _bpe(path: str, spec: dict[str, Any]) -> Chain:
    suffix = _option(path, spec, "suffix", str)

    def decode(tokens: list[str]) -> list[str]:
        # The last token's suffix ends the text: no space follows it.
        spaced = [token.replace(suffix, " ") for token in tokens[:-1]]
        return spaced + [token.replace(suffix, "") for token in tokens[-1:]]

    return decode


def _byte_level(tokens: list[str]) -> list[str]:
    data = b"".join(from_symbols(token) if set(token) <= BYTE_CHARACTERS else token.encode() for token in tokens)
    return [data.decode("utf-8", "replace")]


def _byte_run(data: bytearray) -> list[str]:
    try:
        return [data.decode("utf-8")]
    except UnicodeDecodeError:
        return ["\ufffd"] * len(data)


def _byte_fallback(tokens: list[str]) -> list[str]:
    decoded: list[str] = []
    run = bytearray()
    for token in tokens:
        if len(token) == 6 and (match := _BYTE_TOKEN.fullmatch(token)):
            run.append(int(match[1], 16))
            continue
        if run:
            decoded += _byte_run(run)
            run.clear()
        decoded.append(token)
    return decoded + _byte_run(run) if run else decoded


def _cleanup(text: str) -> str:
    for dirty, clean in _CLEANUP:
        text = text.replace(dirty, clean)
    return text


def _ctc(path: str, spec: dict[str, Any]) -> Chain:
    pad = _option(path, spec, "pad_token", str)
    delimiter = _option(path, spec, "word_delimiter_token", str)
    cleanup = _option(path, spec, "cleanup", bool)

    def decode(tokens: list[str]) -> list[str]:
        kept = (token.replace(pad, "") for token, _ in groupby(tokens))
        if cleanup:
            kept = (_cleanup(token).replace(delimiter, " ") for token in kept)
        return [token for token in kept if token]

    return decode


def _metaspace(path: str, spec: dict[str, Any]) -> Chain:
    replacement = _option(path, spec, "replacement", str)
    if len(replacement) != 1:
        raise ValueError(f"{path}: the Metaspace decoder's replacement {replacement!r:.40} is not one character")
    scheme = _option(path, spec, "prepend_scheme", str, "always")
    if scheme not in ("always", "first", "never"):
        raise ValueError(f"{path}: the Metaspace decoder's prepend_scheme {scheme!r:.40} is not always, first or never")
    if spec.get("add_prefix_space") is False and scheme != "never":
        # HF reads an old file's add_prefix_space only as a check of prepend_scheme.
        raise ValueError(f"{path}: the Metaspace decoder's add_prefix_space false does not match its prepend_scheme")
    first = "" if scheme != "never" else " "
    return lambda tokens: [token.replace(replacement, " " if index else first) for index, token in enumerate(tokens)]


def _replace(path: str, spec: dict[str, Any]) -> Chain:
    found = spec.get("pattern")
    pattern: dict[str, Any] = found if isinstance(found, dict) else {}
    content = spec.get("content")
    if not isinstance(content, str):
        raise ValueError(f"{path}: the Replace decoder's content {content!r:.40} is not a string")
    if isinstance(pattern.get("String"), str):
        # A string's matches are str.replace's (HF leaves an empty token as it is).
        string = pattern["String"]
        return lambda tokens: [token.replace(string, content) if token else token for token in tokens]
    if not isinstance(pattern.get("Regex"), str):
        raise ValueError(f"{path}: the Replace decoder's pattern {found!r:.80} is not a String or a Regex")
    compiled = compile_pattern(pattern["Regex"])
    return lambda tokens: [_replaced(compiled, content, token) for token in tokens]


def _matches(pattern: re.Pattern[str], text: str) -> Iterator[tuple[int, int]]:
    """The matches HF's Oniguruma iterator finds: leftmost from where the last one ended,
    an empty match right where the last one ended skipped (Python's ``finditer`` keeps it)."""
    at, last = 0, -1
    while at <= len(text) and (match := pattern.search(text, at)):
        start, end = match.span()
        if start == end == last:
            at += 1
            continue
        at = last = end
        yield start, end


def _replaced(pattern: re.Pattern[str], content: str, token: str) -> str:
    if not token:  # HF matches nothing in an empty token
        return token
    parts, at = [], 0
    for start, end in _matches(pattern, token):
        parts += [token[at:start], content]
        at = end
    parts.append(token[at:])
    return "".join(parts)


def _strip(path: str, spec: dict[str, Any]) -> Chain:
    content = _option(path, spec, "content", str)
    if len(content) != 1:
        raise ValueError(f"{path}: the Strip decoder's content {content!r:.40} is not one character")
    start = _option(path, spec, "start", int)
    stop = _option(path, spec, "stop", int)
    return lambda tokens: [_stripped(path, content, start, stop, token) for token in tokens]


def _stripped(path: str, content: str, start: int, stop: int, token: str) -> str:
    """``token`` less up to ``start`` leading and ``stop`` trailing ``content``. Where HF's
    Rust code panics (more to strip than the token has), a ValueError says so."""
    leading = len(token[:start]) - len(token[:start].lstrip(content))
    trailing = len(token) - len(token.rstrip(content))
    if (trailing == len(token) and stop > len(token)) or leading > len(token) - min(trailing, stop):
        raise ValueError(f"{path}: the Strip decoder fails on the token {token!r:.40} (Hugging Face tokenizers panics)")
    return token[leading : len(token) - min(trailing, stop)]


def _wordpiece(path: str, spec: dict[str, Any]) -> Chain:
    prefix = _option(path, spec, "prefix", str)
    cleanup = _option(path, spec, "cleanup", bool)

    def decode(tokens: list[str]) -> list[str]:
        joined = [tokens[0]] if tokens else []
        joined += [token.removeprefix(prefix) if token.startswith(prefix) else " " + token for token in tokens[1:]]
        return [_cleanup(token) for token in joined] if cleanup else joined

    return decode


def _fixed(step: Chain) -> Callable[[str, dict[str, Any]], Chain]:
    return lambda path, spec: step


_READERS: dict[str, Callable[[str, dict[str, Any]], Chain]] = {
    "BPEDecoder": _bpe,
    "ByteFallback": _fixed(_byte_fallback),
    "ByteLevel": _fixed(_byte_level),
    "CTC": _ctc,
    "Fuse": _fixed(lambda tokens: ["".join(tokens)]),
    "Metaspace": _metaspace,
    "Replace": _replace,
    "Sequence": _sequence,
    "Strip": _strip,
    "WordPiece": _wordpiece,
}
