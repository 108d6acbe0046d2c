"""The ``>>>`` examples in the library's docstrings run, and pass.

A test here rather than ``--doctest-modules`` in pytest's options: that option applies to
every path collected, so it would also import each module of ``tests/`` (the benchmarks,
the editors' helpers) as a doctest module, and a run of ``pytest tests/library`` would skip
the examples altogether. This module runs wherever ``tests/`` runs, and fails if an
example fails or if one written in the source is never run (an example doctest cannot
find counts as lost).
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
from pathlib import Path
from types import ModuleType

import pytest

import glassllm

PROMPT = re.compile(r"^\s*>>> ", re.M)


def _modules() -> list[str]:
    found = pkgutil.walk_packages(glassllm.__path__, "glassllm.")
    return ["glassllm", *sorted(info.name for info in found)]


def _run(module: ModuleType) -> doctest.TestResults:
    return doctest.testmod(module, report=False, optionflags=doctest.ELLIPSIS)


@pytest.mark.parametrize("name", _modules())
def test_examples_pass(name: str) -> None:
    results = _run(importlib.import_module(name))
    assert results.failed == 0, f"{results.failed} of {results.attempted} examples in {name} failed (printed above)"


def test_every_example_written_runs() -> None:
    written = sum(len(PROMPT.findall(path.read_text("utf-8"))) for path in Path(glassllm.__path__[0]).rglob("*.py"))
    ran = sum(_run(importlib.import_module(name)).attempted for name in _modules())
    assert written > 0, "the library's docstrings have no >>> examples left"
    assert ran == written, f"{written} >>> lines in the source, {ran} examples run"
