"""The environment a real-editor test starts its editor in: a home and a cache of its own,
and Portuguese (``LANG=pt_BR.UTF-8``, with no ``LC_ALL``/``LC_MESSAGES`` to override it)."""

from __future__ import annotations

import os
from pathlib import Path


def portuguese_environment(home: Path, **variables: str) -> dict[str, str]:
    """This process's environment with ``home`` as HOME, its ``cache`` folder as
    XDG_CACHE_HOME, Portuguese, and ``variables``."""
    environment = {name: value for name, value in os.environ.items() if name not in ("LC_ALL", "LC_MESSAGES")}
    environment.update(HOME=str(home), XDG_CACHE_HOME=str(home / "cache"), LANG="pt_BR.UTF-8", **variables)
    return environment
