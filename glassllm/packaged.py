"""The tokenizers that ship inside the package, trained with ``glassllm train``.

``pt`` learned from Portuguese prose and ``en`` from English prose (see docs/tokenizer.md
for the corpora and the exact commands); 1,024 entries each. Load one with
``glassllm.packaged("pt")``.
"""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

from glassllm.problems import Locale, describe, problem
from glassllm.tokenizer import Tokenizer

__all__ = ["PACKAGED", "load_problem", "load_tokenizer", "packaged", "packaged_path"]

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


def load_tokenizer(spec: str | Path) -> Tokenizer:
    """A packaged tokenizer by name (``"pt"``, ``"en"``) or a tokenizer file by path."""
    return packaged(spec) if isinstance(spec, str) and spec in PACKAGED else Tokenizer.load(spec)


def load_problem(error: Exception, locale: Locale = "en") -> str:
    """What went wrong in :func:`load_tokenizer`, for a person, in ``locale`` ("pt" or
    "en"): see :func:`glassllm.problems.describe`."""
    return describe(error, locale)
