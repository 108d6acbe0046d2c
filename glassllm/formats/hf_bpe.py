"""Hugging Face ``tokenizer.json`` files whose model is BPE: byte-level (GPT-2, Llama 3,
GPT-4o, Qwen and their kin, :class:`HFByteLevelBPE`) and Metaspace ``▁`` with byte
fallback (Llama 2 and Mistral converted from SentencePiece, :class:`HFMetaspaceBPE`).

What is read of a byte-level one, stage by stage:

- ``added_tokens``: the special ones are the model's specials (ordinary text unless
  matched, see :class:`~glassllm.formats.model_tokenizer.ModelTokenizer`); the others are always
  matched, as HF matches them;
- ``normalizer``: none, or ``NFC``;
- ``pre_tokenizer``: ``Split`` with a ``Regex`` (``Isolated``, or ``Removed`` with
  ``invert``: the matches are the chunks), and ``ByteLevel`` (with ``use_regex`` it splits
  with GPT-2's pattern first; with ``add_prefix_space``, first, a space before each segment
  that opens without one, :class:`HFPrefixedByteLevelBPE`), alone or in a ``Sequence``;
- ``model``: ``BPE`` with its ``vocab``, ``merges`` (``"a b"`` strings or ``[a, b]`` pairs)
  and ``ignore_merges`` (a chunk that is a vocabulary entry as a whole is that token,
  without merging);
- ``post_processor``: a ``TemplateProcessing``'s tokens around ``$A`` are what the model
  adds around a text (``around``); ``ByteLevel`` adds nothing;
- ``decoder``: any HF implements (:mod:`~glassllm.formats.hf_decoders`); a ``ByteLevel``
  one is decoded by :class:`~glassllm.formats.byte_level.ByteLevelModel`'s own code.

A Metaspace one is SentencePiece's pipeline (:mod:`~glassllm.formats.metaspace`) with the
file's ``merges`` as ranks; its ``▁`` and dummy prefix come from one of the two layouts
HF writes: the normalizer ``Prepend("▁")`` + ``Replace(" ", "▁")`` with no pre-tokenizer
(transformers' "legacy" conversion: a prefix before every segment between matched
special tokens, even one that opens with a space), or the pre-tokenizer ``Metaspace``
(``prepend_scheme`` ``always``, ``first`` or ``never``: no prefix before a segment that
opens with a space, unless a normalizer doubles a leading ``▁``, as transformers 5 writes
for a SentencePiece model; ``split`` cuts before each ``▁``). ``model.byte_fallback`` turns a
character that is no vocabulary entry into its ``<0xXX>`` bytes, ``fuse_unk`` makes a
run of unknown ones one ``unk_token``. Its ``decoder`` is read as a byte-level one's.

A WordPiece, WordLevel or Unigram model is :mod:`~glassllm.formats.hf_word_models`'s.
Any other layout (another normalizer, say) raises :class:`OtherLayout`: HF's stages one by
one read it (:class:`~glassllm.formats.hf_word_models.HFBPE`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from itertools import repeat
from pathlib import Path
from typing import Any

from glassllm.formats.added_tokens import AddedFlags, added_flags
from glassllm.formats.byte_level import BYTE_CHARACTERS, ByteLevelModel
from glassllm.formats.hf_decoders import decode_ids, decoder_from
from glassllm.formats.metaspace import BYTE_PIECE, SPACE, MetaspaceModel, Prefix
from glassllm.formats.patterns import ASTRAL, compile_pattern, looks_back
from glassllm.pipeline.normalize import normalize_with_offsets
from glassllm.shown.problems import problem

__all__ = [
    "GPT2_PATTERN",
    "HFByteLevelBPE",
    "HFMetaspaceBPE",
    "HFPrefixedByteLevelBPE",
    "OtherLayout",
    "Split",
    "added_tokens",
    "entries",
    "load_hf_bpe",
    "post_processor_around",
    "vocab_ids_valid",
]

# ByteLevel's own pattern, when ``use_regex`` is set.
GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


class Split:
    """One regex split of the pre-tokenizer: the matches are chunks; so are the text
    between them when ``keep_gaps`` (``Isolated``), else that text is dropped."""

    def __init__(self, pattern: re.Pattern[str], keep_gaps: bool, bmp: re.Pattern[str] | None = None) -> None:
        self.pattern, self.keep_gaps = pattern, keep_gaps
        self._bmp = bmp  # the same split for a text with no astral character, faster

    @classmethod
    def of(cls, pattern: str, keep_gaps: bool) -> Split:
        """The split by a model's ``pattern`` (Oniguruma or Rust syntax)."""
        return cls(compile_pattern(pattern), keep_gaps, compile_pattern(pattern, bmp_only=True))

    def _pattern_for(self, text: str, start: int, end: int) -> re.Pattern[str]:
        # isascii reads a flag the string keeps: no search for most lines of code or English.
        if self._bmp is None or (not text.isascii() and ASTRAL.search(text, start, end)):
            return self.pattern
        return self._bmp

    def bounds(self, text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
        at = start
        for match in self._pattern_for(text, start, end).finditer(text, start, end):
            if match.start() == match.end():
                continue
            if self.keep_gaps and match.start() > at:
                yield at, match.start()
            yield match.start(), match.end()
            at = match.end()
        if self.keep_gaps and at < end:
            yield at, end

    def texts(self, text: str) -> list[str]:
        """The chunks of all of ``text``: ``findall`` when the matches leave no gap (the
        patterns of real models match every character), else from :meth:`bounds`."""
        if self.pattern.groups:  # findall would give the groups, not the matches
            return [text[start:end] for start, end in self.bounds(text, 0, len(text))]
        found = self._pattern_for(text, 0, len(text)).findall(text)
        if not self.keep_gaps or sum(map(len, found)) == len(text):
            return [chunk for chunk in found if chunk] if "" in found else found
        return [text[start:end] for start, end in self.bounds(text, 0, len(text))]


class HFByteLevelBPE(ByteLevelModel):
    """A byte-level BPE ``tokenizer.json`` (see the module's docstring)."""

    kind = "Hugging Face BPE (byte-level)"
    file_decoder: Callable[[list[str]], str] | None = None
    """``decode``: the file's decoder, where ByteLevelModel's own would not give HF's."""

    def __init__(
        self,
        source: str,
        vocab: dict[str, int],
        merges: list[str],
        splits: list[Split],
        *,
        nfc: bool,
        ignore_merges: bool,
        specials: dict[str, int],
        always_matched: dict[str, int],
        around: tuple[list[int], list[int]],
        match_specials: bool = False,
        added_flags: dict[int, AddedFlags] | None = None,
    ) -> None:
        super().__init__(
            source,
            entries(vocab, specials, always_matched),
            specials,
            always_matched=always_matched,
            match_specials=match_specials,
            around=around,
            added_flags=added_flags,
        )
        self.ids = dict(vocab)
        self.ranks: dict[str, int] = _ranks(merges)
        self._splits = splits
        self._cuttable = not any(looks_back(split.pattern) for split in splits)
        self._nfc = nfc
        self.ignore_merges = ignore_merges
        self._rank_of = self.ranks.get
        self._merge_table = (self.ranks, " ")

    def _normalize(self, text: str, at_start: bool) -> tuple[str, list[int] | None]:
        return normalize_with_offsets(text) if self._nfc else (text, None)

    def _chunk_bounds(self, normalized: str) -> Iterable[tuple[int, int]]:
        bounds = [(0, len(normalized))]
        for split in self._splits:
            bounds = [found for start, end in bounds for found in split.bounds(normalized, start, end)]
        return bounds

    def _chunk_texts(self, normalized: str) -> list[str]:
        if len(self._splits) == 1:
            return self._splits[0].texts(normalized)
        return super()._chunk_texts(normalized)

    def _rank(self, left: str, right: str) -> float | None:
        return self._rank_of(f"{left} {right}")

    def _whole(self, chunk: str, symbols: list[str]) -> int | None:
        return self.ids.get("".join(symbols)) if self.ignore_merges and len(symbols) > 1 else None

    def decode(self, ids: Iterable[int]) -> str:
        if self.file_decoder is None:
            return super().decode(ids)
        return decode_ids(self.file_decoder, self.vocab, self._special_ids, ids)


class HFPrefixedByteLevelBPE(HFByteLevelBPE):
    """A byte-level BPE whose ``ByteLevel`` pre-tokenizer has ``add_prefix_space``: a space
    before each segment that opens without one, which HF aligns with the segment's first
    character, so a token of that space alone covers the character (see
    :meth:`_origin_span`)."""

    _segments_open = True

    def _normalize(self, text: str, at_start: bool) -> tuple[str, list[int] | None]:
        normalized, origin = super()._normalize(text, at_start)
        prefixed = at_start and normalized and not normalized.startswith(" ")
        if origin is None and not prefixed:
            return normalized, None
        bounds = range(len(normalized) + 1) if origin is None else origin
        # Each character's start and end, one after the other; the space takes the first's.
        spans = [bound for at in range(len(normalized)) for bound in bounds[at : at + 2]]
        return (" " + normalized, [*spans[:2], *spans]) if prefixed else (normalized, spans)

    def _origin_span(self, origin: list[int], start: int, end: int) -> tuple[int, int]:
        if start < end:
            return origin[2 * start], origin[2 * end - 1]
        at = origin[2 * start] if 2 * start < len(origin) else (origin[-1] if origin else 0)
        return at, at


class HFMetaspaceBPE(MetaspaceModel):
    """A Metaspace BPE ``tokenizer.json`` with byte fallback (see the module's docstring).
    ``decode`` is the file's decoder's (``file_decoder``, set by :func:`load_hf_bpe`):
    MetaspaceModel's own reads a run of byte tokens that is not UTF-8 as Python does (one
    U+FFFD per invalid sequence), HF's ``ByteFallback`` gives one U+FFFD per byte token,
    and a file's decoder may be another."""

    file_decoder: Callable[[list[str]], str] | None = None

    def __init__(
        self,
        source: str,
        vocab: dict[str, int],
        merges: list[str],
        layout: tuple[Prefix, bool, bool],
        *,
        byte_fallback: bool,
        fuse_unk: bool,
        unk_id: int | None,
        specials: dict[str, int],
        always_matched: dict[str, int],
        around: tuple[list[int], list[int]],
        match_specials: bool = False,
        added_flags: dict[int, AddedFlags] | None = None,
    ) -> None:
        prefix, prefix_over_space, split = layout
        super().__init__(
            source,
            entries(vocab, specials, always_matched),
            specials,
            pieces=dict(vocab),
            # HF's byte fallback looks each byte up as "<0xXX>" in the vocabulary.
            bytes_={
                int(match[1], 16): token_id
                for piece, token_id in vocab.items()
                if byte_fallback and (match := BYTE_PIECE.fullmatch(piece))
            },
            byte_fallback=byte_fallback,
            unk_id=unk_id,
            prefix=prefix,
            prefix_over_space=prefix_over_space,
            split=split,
            fuse_unk=fuse_unk,
            always_matched=always_matched,
            match_specials=match_specials,
            around=around,
        )
        self._flags = added_flags or {}  # MetaspaceModel's own formats have none
        self.kind = "Hugging Face BPE (Metaspace ▁" + (", byte fallback)" if byte_fallback else ")")
        self.ranks = _ranks(merges)
        self._rank_of = self.ranks.get
        self._merge_table = (self.ranks, " ")

    def _rank(self, left: str, right: str) -> float | None:
        return self._rank_of(f"{left} {right}")

    def decode(self, ids: Iterable[int]) -> str:
        if self.file_decoder is None:
            return super().decode(ids)
        return decode_ids(self.file_decoder, self.vocab, self._special_ids, ids)


def entries(vocab: dict[str, int], specials: dict[str, int], always_matched: dict[str, int]) -> list[str]:
    """Each ID's vocabulary entry (added tokens' text where they have IDs of their own)."""
    size = max([*vocab.values(), *specials.values(), *always_matched.values()], default=-1) + 1
    entries = [""] * size
    for piece, token_id in vocab.items():
        entries[token_id] = piece
    for text, token_id in (*specials.items(), *always_matched.items()):
        entries[token_id] = text
    return entries


def vocab_ids_valid(vocab: dict[Any, Any]) -> bool:
    """Whether ``vocab``'s values are all non-negative integers (checked in C: a large
    vocabulary has millions)."""
    return not vocab or (set(map(type, vocab.values())) == {int} and min(vocab.values()) >= 0)


def _ranks(merges: list[str]) -> dict[str, int]:
    """``"left right"`` → rank; where a pair is listed twice its first rank counts, so
    the dict is built from the end."""
    return dict(zip(reversed(merges), range(len(merges) - 1, -1, -1), strict=True))


class OtherLayout(ValueError):
    """A BPE file in a layout the readers here do not take: HF's stages one by one read it
    (:class:`~glassllm.formats.hf_word_models.HFBPE`, see :func:`glassllm.formats.load.load_model`)."""


def _unsupported(path: str, what: str) -> ValueError:
    return OtherLayout(f"{path}: {what} is not supported")


def _metaspace_layout(path: str, normalizer: Any, pre_tokenizer: Any) -> tuple[Prefix, bool, bool] | None:
    """Where a Metaspace file puts its dummy prefix, whether before a leading space too,
    and whether it cuts before each ``▁`` (see the module's docstring); ``None``: the file
    is not a Metaspace one."""
    if isinstance(pre_tokenizer, dict) and pre_tokenizer.get("type") == "Sequence":
        parts = _pre_tokenizers(pre_tokenizer)
        if any(part.get("type") == "Metaspace" for part in parts):
            if len(parts) > 1:
                raise _unsupported(path, "a Metaspace pre-tokenizer in a Sequence with others")
            pre_tokenizer = parts[0]
    parts = _normalizers(normalizer)
    replace = {"type": "Replace", "pattern": {"String": " "}, "content": SPACE}
    if isinstance(pre_tokenizer, dict) and pre_tokenizer.get("type") == "Metaspace":
        if pre_tokenizer.get("replacement", SPACE) != SPACE:
            raise _unsupported(path, f"a Metaspace replacement {pre_tokenizer.get('replacement')!r} other than '▁'")
        # Files written before prepend_scheme existed say add_prefix_space.
        scheme = pre_tokenizer.get("prepend_scheme") or (
            "always" if pre_tokenizer.get("add_prefix_space", True) else "never"
        )
        prefixes = {"always": Prefix.SEGMENT, "first": Prefix.TEXT, "never": Prefix.NONE}
        if scheme not in prefixes:
            raise _unsupported(path, f"the Metaspace prepend_scheme {scheme!r}")
        # A Replace of spaces changes nothing before Metaspace, which replaces them too;
        # transformers 5 adds one that doubles a leading "▁", so that a text opening with a
        # space gets its prefix as SentencePiece gives it.
        over_space = parts == [replace, _DOUBLE_PREFIX] and scheme == "always"
        if parts not in ([], [replace]) and not over_space:
            raise _unsupported(path, f"the normalizer {normalizer!r:.200} before a Metaspace pre-tokenizer")
        return prefixes[scheme], over_space, bool(pre_tokenizer.get("split", True))
    if replace not in parts:
        return None
    # The layouts below leave no space in the text: a pre-tokenizer that cuts only at
    # spaces does nothing, and is no reason to refuse the file.
    if not all(map(_cuts_nothing_without_spaces, _pre_tokenizers(pre_tokenizer))):
        return None
    if parts == [{"type": "Prepend", "prepend": SPACE}, replace]:
        return Prefix.SEGMENT, True, False
    if parts == [replace]:
        return Prefix.NONE, True, False
    raise _unsupported(path, f"the normalizer {normalizer!r:.200}")


# transformers 5's normalizer for a SentencePiece model's leading space (see above).
_DOUBLE_PREFIX = {"type": "Replace", "pattern": {"Regex": f"\\A{SPACE}"}, "content": SPACE * 2}


def _normalizers(spec: Any) -> list[Any]:
    """The normalizers of ``spec`` in order: a ``Sequence``'s, nested ones flattened (an
    empty one changes nothing), or itself."""
    if not isinstance(spec, dict):
        return [] if spec is None else [spec]
    if spec.get("type") != "Sequence":
        return [spec]
    return [part for inner in spec.get("normalizers") or [] for part in _normalizers(inner)]


def _pre_tokenizers(spec: Any) -> list[Any]:
    """The pre-tokenizers of ``spec`` in order, nested ``Sequence``s flattened."""
    if not isinstance(spec, dict):
        return [] if spec is None else [spec]
    if spec.get("type") != "Sequence":
        return [spec]
    return [part for inner in spec.get("pretokenizers") or [] for part in _pre_tokenizers(inner)]


def _cuts_nothing_without_spaces(spec: Any) -> bool:
    """Whether the pre-tokenizer ``spec`` leaves a text with no space as one chunk: a
    ``Split`` on a string holding a space (Gemma's, after its normalizer has made every
    space ``▁``) finds nothing to cut; inverted and ``Removed``, it would drop the text."""
    if not isinstance(spec, dict) or spec.get("type") != "Split":
        return False
    pattern = spec.get("pattern") or {}
    literal = pattern.get("String")
    if literal is None and isinstance(pattern.get("Regex"), str) and not set(pattern["Regex"]) & set("\\.^$*+?{}[]|()"):
        literal = pattern["Regex"]
    removes_all = bool(spec.get("invert")) and spec.get("behavior") == "Removed"
    return isinstance(literal, str) and " " in literal and not removes_all


def _splits(path: str, spec: Any) -> list[Split]:
    """The regex splits of a ``pre_tokenizer`` (see the module's docstring)."""
    if spec is None:
        raise _unsupported(path, "a BPE model without a ByteLevel pre-tokenizer")
    kind = spec.get("type")
    if kind == "Sequence":
        parts = _pre_tokenizers(spec)
        found = [split for part in parts for split in _splits_of(path, part)]
        if not any(part.get("type") == "ByteLevel" for part in parts):
            raise _unsupported(path, "a pre-tokenizer without ByteLevel")
        return found
    if kind != "ByteLevel":
        raise _unsupported(path, f"the pre-tokenizer {kind!r}")
    return _splits_of(path, spec)


def _prefix_space(path: str, spec: Any) -> bool:
    """Whether a ``ByteLevel`` with ``add_prefix_space`` opens the pre-tokenizer: HF puts
    the space before each piece of the text as that step finds it, so after a step that
    cuts, before every chunk: HF's stages read that file split by split (see
    :mod:`~glassllm.formats.hf_staged`)."""
    parts = _pre_tokenizers(spec)
    prefixed = [
        index for index, part in enumerate(parts) if part.get("type") == "ByteLevel" and part.get("add_prefix_space")
    ]
    if any(prefixed):
        raise _unsupported(path, "ByteLevel with add_prefix_space after another pre-tokenizer")
    return bool(prefixed)


def _splits_of(path: str, spec: dict[str, Any]) -> list[Split]:
    kind = spec.get("type")
    if kind == "ByteLevel":
        return [Split.of(GPT2_PATTERN, True)] if spec.get("use_regex", True) else []
    if kind == "Split":
        pattern = spec.get("pattern") or {}
        if "Regex" in pattern:
            split = partial(Split.of, pattern["Regex"])
        elif "String" in pattern:
            split = partial(Split, re.compile(re.escape(pattern["String"])))
        else:
            raise _unsupported(path, f"the Split pattern {pattern!r}")
        behavior, invert = spec.get("behavior"), bool(spec.get("invert"))
        if behavior == "Isolated" and not invert:
            return [split(True)]
        if behavior == "Removed" and invert:
            return [split(False)]
        raise _unsupported(path, f"a Split with behavior {behavior!r} and invert {invert}")
    raise _unsupported(path, f"the pre-tokenizer {kind!r}")


def _merge_keys(path: str, raw: Any) -> list[str]:
    """The merges as ``"left right"`` strings, in rank order.

    Pieces never hold a space (the space byte is ``Ġ``, a Metaspace space ``▁``), so one
    space always separates the two sides; keeping the file's strings as they are is what makes loading
    Llama 3's 280,147 merges fast (no pair is built until a chunk asks for it)."""
    if not isinstance(raw, list):
        raise ValueError(f"{path}: model.merges must be a list")
    # Each check maps a C function over the list: a Python call per merge would be
    # seconds of a 2,000,000-merge file's load.
    if raw and isinstance(raw[0], list):  # the newer format: [left, right] pairs
        if set(map(type, raw)) != {list} or set(map(len, raw)) != {2}:
            raise ValueError(f"{path}: model.merges must all be [left, right] pairs")
        try:
            raw = list(map(" ".join, raw))
        except TypeError:
            raise ValueError(f"{path}: model.merges must be 'left right' strings or [left, right] pairs") from None
    if not raw:
        return []
    if set(map(type, raw)) != {str}:
        raise ValueError(f"{path}: model.merges must be 'left right' strings or [left, right] pairs")
    if (
        set(map(str.count, raw, repeat(" "))) != {1}
        or any(map(str.startswith, raw, repeat(" ")))
        or any(map(str.endswith, raw, repeat(" ")))
    ):
        # Pieces holding spaces ([left, right] pairs can): HF's stages one by one read them.
        bad = next(merge for merge in raw if merge.count(" ") != 1 or not _both_sides(merge))
        raise OtherLayout(f"{path}: the merge {bad!r:.80} is not two non-empty pieces")
    return raw


def _both_sides(merge: str) -> bool:
    return not merge.startswith(" ") and not merge.endswith(" ")


def post_processor_around(path: str, spec: Any, added: dict[str, int]) -> tuple[list[int], list[int]]:
    """What a post-processor adds around a single text's tokens."""
    if spec is None or spec.get("type") in ("ByteLevel",):
        return [], []
    kind = spec.get("type")
    if kind == "Sequence":
        before: list[int] = []
        after: list[int] = []
        for part in spec.get("processors") or []:
            more_before, more_after = post_processor_around(path, part, added)
            before, after = more_before + before, after + more_after
        return before, after
    if kind == "TemplateProcessing":
        before, after, seen_text = [], [], False
        ids_of = {name: entry.get("ids", []) for name, entry in (spec.get("special_tokens") or {}).items()}
        for item in spec.get("single") or []:
            if "Sequence" in item:
                seen_text = True
            elif "SpecialToken" in item:
                name = item["SpecialToken"]["id"]
                ids = ids_of.get(name) or ([added[name]] if name in added else [])
                (after if seen_text else before).extend(ids)
        return before, after
    if kind in ("BertProcessing", "RobertaProcessing"):
        # A single text is [CLS] text [SEP] (RoBERTa: <s> text </s>); each is [token, ID].
        cls, sep = spec.get("cls"), spec.get("sep")
        if isinstance(cls, list) and isinstance(sep, list) and len(cls) == len(sep) == 2:
            return [int(cls[1])], [int(sep[1])]
    raise _unsupported(path, f"the post-processor {kind!r}")


def added_tokens(path: str, tokens: list[Any]) -> tuple[dict[str, int], dict[str, int]]:
    """The added tokens, content → ID: the special ones (matched only when asked), then the
    others (always matched)."""
    specials: dict[str, int] = {}
    always: dict[str, int] = {}
    for token in tokens:
        content, token_id = token.get("content"), token.get("id")
        if not isinstance(content, str) or not content or not isinstance(token_id, int) or token_id < 0:
            raise ValueError(f"{path}: an added token needs a content and an ID, found {token!r:.80}")
        (specials if token.get("special") else always)[content] = token_id
    return specials, always


def _model_options(source: str, model: dict[str, Any]) -> None:
    """Refuse ``dropout`` (HF skips each merge with that probability: no one encoding to
    show) and send affixes to HF's stages one by one (see OtherLayout)."""
    if model.get("dropout"):
        raise ValueError(f"{source}: model.dropout {model['dropout']!r:.20} makes HF's BPE encoding random: not read")
    for option in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(option):
            raise _unsupported(source, f"model.{option}")


def load_hf_bpe(
    path: str | Path, data: dict[str, Any], *, match_specials: bool = False
) -> HFByteLevelBPE | HFMetaspaceBPE:
    """A BPE tokenizer from the parsed ``tokenizer.json`` ``data`` read from ``path``:
    Metaspace when its normalizer or pre-tokenizer says so, byte-level otherwise; its
    ``decode`` is the file's decoder's."""
    tokenizer = _read_hf_bpe(str(path), data, match_specials)
    decoder = data.get("decoder")
    if not (isinstance(tokenizer, HFByteLevelBPE) and _byte_level_decodes(decoder, data.get("added_tokens") or [])):
        tokenizer.file_decoder = decoder_from(str(path), decoder)
    return tokenizer


def _read_hf_bpe(source: str, data: dict[str, Any], match_specials: bool) -> HFByteLevelBPE | HFMetaspaceBPE:
    model = data.get("model")
    if not isinstance(model, dict):
        raise ValueError(f"{source}: a tokenizer.json needs a 'model' object")
    if model.get("type", "BPE") != "BPE":
        raise problem(ValueError, "model.not_bpe", path=source, found=f"Hugging Face {model.get('type')}")
    _model_options(source, model)
    normalizer = data.get("normalizer")
    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or not vocab_ids_valid(vocab):
        raise ValueError(f"{source}: model.vocab must map pieces to non-negative IDs")
    specials, always = added_tokens(source, data.get("added_tokens") or [])
    merges = _merge_keys(source, model.get("merges", []))
    around = post_processor_around(source, data.get("post_processor"), {**always, **specials})
    layout = _metaspace_layout(source, normalizer, data.get("pre_tokenizer"))
    if layout is not None:
        if model.get("ignore_merges"):
            raise _unsupported(source, "ignore_merges in a Metaspace model")
        unk = model.get("unk_token")
        return HFMetaspaceBPE(
            source,
            vocab,
            merges,
            layout,
            byte_fallback=bool(model.get("byte_fallback")),
            fuse_unk=bool(model.get("fuse_unk")),
            unk_id=vocab.get(unk) if isinstance(unk, str) else None,
            specials=specials,
            always_matched=always,
            around=around,
            match_specials=match_specials,
            added_flags=added_flags(data.get("added_tokens") or []),
        )
    if model.get("byte_fallback"):
        raise _unsupported(source, "byte_fallback without a Metaspace normalizer or pre-tokenizer")
    steps = _normalizers(normalizer)
    if steps not in ([], [{"type": "NFC"}]):
        kinds = [step.get("type") if isinstance(step, dict) else step for step in steps]
        raise _unsupported(source, f"the normalizer {(kinds[0] if len(kinds) == 1 else kinds)!r}")
    prefixed = _prefix_space(source, data.get("pre_tokenizer"))
    return (HFPrefixedByteLevelBPE if prefixed else HFByteLevelBPE)(
        source,
        vocab,
        merges,
        _splits(source, data.get("pre_tokenizer")),
        nfc=bool(steps),
        ignore_merges=bool(model.get("ignore_merges")),
        specials=specials,
        always_matched=always,
        around=around,
        match_specials=match_specials,
        added_flags=added_flags(data.get("added_tokens") or []),
    )


def _byte_level_decodes(decoder: Any, added: list[Any]) -> bool:
    """Whether ByteLevelModel's decode (every character's byte, all tokens joined) is HF's
    for this decoder: a ByteLevel one, and no added token mixing byte characters with
    others (HF's decoder takes such a token's UTF-8 whole)."""
    if not isinstance(decoder, dict) or decoder.get("type") != "ByteLevel":
        return False
    # HF leaves special tokens out of decode; load_hf_bpe checked each content is a string.
    texts = [set(token["content"]) for token in added if not token.get("special")]
    return all(text <= BYTE_CHARACTERS or not text & BYTE_CHARACTERS for text in texts)
