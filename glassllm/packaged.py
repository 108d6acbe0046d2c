"""The tokenizers that ship inside the package, trained with ``glassllm train``.

``pt`` learned from Portuguese prose and ``en`` from English prose (see docs/tokenizer.md
for the corpora and the exact commands); 1,024 entries each. Load one with
``glassllm.packaged("pt")``.
"""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

from glassllm.formats.load import load_model
from glassllm.pipeline.any_tokenizer import AnyTokenizer
from glassllm.shown.problems import Locale, describe, problem
from glassllm.tokenizer import Tokenizer

__all__ = ["PACKAGED", "load_own_tokenizer", "load_problem", "load_tokenizer", "own_only", "packaged", "packaged_path"]

PACKAGED: dict[str, str] = {"pt": "Portuguese", "en": "English"}


def packaged_path(name: str) -> Path:
    """Path of the packaged tokenizer file ``name`` (``"pt"`` or ``"en"``)."""
    if name not in PACKAGED:
        raise problem(ValueError, "packaged.unknown", name=name, names=", ".join(PACKAGED))
    with as_file(files("glassllm") / "data" / f"{name}.json") as path:
        return Path(path)


def packaged(name: str) -> Tokenizer:
    """Load the packaged tokenizer ``name`` (``"pt"`` or ``"en"``)."""
    return Tokenizer.load(packaged_path(name))


def load_tokenizer(spec: str | Path, *, match_specials: bool = False) -> AnyTokenizer:
    """The tokenizer a person names: a packaged one (``"pt"``, ``"en"``), a file — a
    glassllm tokenizer JSON, a Hugging Face ``tokenizer.json``, a Tekken JSON or a
    SentencePiece ``.model``, recognized from its content — or ``"hf:ORG/NAME"`` from the
    local Hugging Face cache (never downloaded).

    ``match_specials`` (real models only): read special-token text in the user's text as
    the special token, as HF's ``encode`` does by default; otherwise it is ordinary text.
    """
    if isinstance(spec, str) and spec in PACKAGED:
        return packaged(spec)
    return load_model(spec, match_specials=match_specials)


def load_own_tokenizer(spec: str | Path) -> Tokenizer:
    """A glassllm tokenizer, named as :func:`load_tokenizer` takes it, for what takes only
    glassllm's own — the HTML pages and the Hugging Face export, the one place that
    decides it: a real model's tokenizer is refused with a ``ValueError`` that says where
    it can be seen."""
    return own_only(load_tokenizer(spec), spec)


def own_only(tokenizer: AnyTokenizer, name: str | Path) -> Tokenizer:
    """``tokenizer`` if it is glassllm's own; a real model's is refused as
    :func:`load_own_tokenizer` refuses it (``name``: how the user named it)."""
    if not isinstance(tokenizer, Tokenizer):
        raise problem(ValueError, "load.own_only", name=str(name), kind=tokenizer.kind)
    return tokenizer


def load_problem(error: Exception, locale: Locale = "en") -> str:
    """What went wrong in :func:`load_tokenizer`, for a person, in ``locale`` ("pt" or
    "en"): see :func:`glassllm.shown.problems.describe`."""
    return describe(error, locale)
