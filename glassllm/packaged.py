"""The tokenizers that ship inside the package, trained with ``glassllm train``.

``pt`` learned from Portuguese prose and ``en`` from English prose (see docs/tokenizer.md
for the corpora and the exact commands); 1,024 entries each. Load one with
``glassllm.packaged("pt")``.
"""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

from glassllm.tokenizer import Tokenizer

__all__ = ["PACKAGED", "load_problem", "load_tokenizer", "packaged", "packaged_path"]

PACKAGED: dict[str, str] = {"pt": "Portuguese", "en": "English"}


def packaged_path(name: str) -> Path:
    """Path of the packaged tokenizer file ``name`` (``"pt"`` or ``"en"``)."""
    if name not in PACKAGED:
        raise ValueError(f"no packaged tokenizer {name!r}; the packaged ones are {', '.join(PACKAGED)}")
    with as_file(files("glassllm") / "data" / f"{name}.json") as path:
        return Path(path)


def packaged(name: str) -> Tokenizer:
    """Load the packaged tokenizer ``name`` (``"pt"`` or ``"en"``)."""
    return Tokenizer.load(packaged_path(name))


def load_tokenizer(spec: str | Path) -> Tokenizer:
    """A packaged tokenizer by name (``"pt"``, ``"en"``) or a tokenizer file by path."""
    return packaged(spec) if spec in PACKAGED else Tokenizer.load(spec)


def load_problem(error: Exception) -> str:
    """What went wrong in :func:`load_tokenizer`, for a person: the message itself (a
    ``KeyError``'s ``str()`` would wrap it in quotes)."""
    return str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
