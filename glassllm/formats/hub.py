"""``hf:ORG/NAME``: a model's tokenizer from the local Hugging Face cache, never the network.

The cache is where ``huggingface_hub`` keeps what it downloaded: ``$HF_HUB_CACHE``, else
``$HF_HOME/hub``, else ``$XDG_CACHE_HOME/huggingface/hub``, else
``~/.cache/huggingface/hub``. A model ``ORG/NAME`` lives in ``models--ORG--NAME/``; its
``refs/main`` names the commit whose files are in ``snapshots/COMMIT/``. ``hf:ORG/NAME@REV``
picks another ref (a branch or tag under ``refs/``) or a commit. The first of
``tokenizer.json``, ``tekken.json`` and ``tokenizer.model`` found there is the tokenizer.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from glassllm.shown.problems import problem

__all__ = ["PREFIX", "TOKENIZER_FILES", "hub_cache", "resolve"]

PREFIX = "hf:"
TOKENIZER_FILES = ("tokenizer.json", "tekken.json", "tokenizer.model")
_MODEL_ID = re.compile(r"(?:([\w.-]+)/)?([\w.-]+)(?:@([\w./-]+))?")


def hub_cache() -> Path:
    """The Hugging Face hub cache folder, as ``huggingface_hub`` finds it."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    base = os.environ.get("XDG_CACHE_HOME") or "~/.cache"
    return Path(base).expanduser() / "huggingface" / "hub"


def resolve(spec: str) -> Path:
    """The tokenizer file of ``hf:ORG/NAME[@REV]`` in the local cache.

    Raises ``FileNotFoundError`` saying where it looked when the model (or its tokenizer)
    is not there: glassllm never downloads."""
    model_id = spec.removeprefix(PREFIX)
    match = _MODEL_ID.fullmatch(model_id)
    if match is None or ".." in model_id:
        raise ValueError(f"{spec}: expected hf:ORG/NAME or hf:ORG/NAME@REVISION")
    org, name, revision = match.groups()
    cache = hub_cache()
    folder = cache / ("models--" + "--".join(part for part in (org, name) if part))
    repo = f"{org}/{name}" if org else name
    if not folder.is_dir():
        raise problem(FileNotFoundError, "hub.absent", spec=spec, repo=repo, cache=cache)
    revision = revision or "main"
    ref = folder / "refs" / revision
    commit = ref.read_text(encoding="utf-8").strip() if ref.is_file() else revision
    snapshot = folder / "snapshots" / commit
    if not snapshot.is_dir():
        raise problem(FileNotFoundError, "hub.revision", spec=spec, revision=revision, repo=repo, folder=folder)
    for file_name in TOKENIZER_FILES:
        if (snapshot / file_name).is_file():
            return snapshot / file_name
    raise problem(
        FileNotFoundError, "hub.no_file", spec=spec, repo=repo, snapshot=snapshot, files=", ".join(TOKENIZER_FILES)
    )
