"""Optional dependencies: modules that only some uses need (Dask, Parquet, Zstandard,
URLs), imported when one of those uses comes, with an error that says what installs a
missing one, in English or Portuguese (see :mod:`glassllm.shown.problems`)."""

from __future__ import annotations

import importlib
from typing import Any

from glassllm.shown.problems import problem

__all__ = ["optional"]


def optional(module: str, use: str, **fields: Any) -> Any:
    """The module named ``module`` (``"pyarrow.parquet"``), imported for ``use``: one of
    ``"dask"``, ``"parquet"`` and ``"zstd"`` (the extras that install it) or ``"urls"``.
    When it is missing, a ``ValueError`` with the problem ``optional.<use>`` (``fields``,
    such as the ``path`` that needed it, fill its message)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise problem(ValueError, f"optional.{use}", **fields) from None
