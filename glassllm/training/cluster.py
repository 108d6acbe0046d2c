"""Counting on Dask: the parts of a corpus counted by the workers of a cluster, summed there.

Every worker opens the files itself (so they must be on a filesystem all workers share,
or ``fsspec`` URLs such as ``s3://…``), counts its parts and keeps the counts. Partial
counts are then summed on the workers by a tree reduction: as parts finish, every
``FAN_IN`` of them go to a task that adds them up, whose result joins the next round,
so no process ever holds more than ``FAN_IN`` partial counts, and only the total comes
back to this process, the one that learns the merges. A worker lost in the middle is
survived by Dask itself: the parts it held are counted again elsewhere.

``pip install "glassllm[dask]"`` installs Dask.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from glassllm.training.corpus import Part
from glassllm.training.optional import optional

__all__ = ["FAN_IN", "count_parts_on_dask", "dask_client"]

# How many partial counts one summing task adds up.
FAN_IN = 4


@contextmanager
def dask_client(address: str | None = None, workers: int | None = None) -> Iterator[Any]:
    """A Dask client, closed on leaving: of the scheduler at ``address``, or of a new
    cluster on this machine (``address`` ``None``) of ``workers`` processes (one per
    core by default) with one thread each, since counting holds the interpreter's lock."""
    distributed = optional("distributed", "dask")
    if address is not None:
        with distributed.Client(address) as client:
            yield client
        return
    with (
        distributed.LocalCluster(
            n_workers=workers or os.cpu_count() or 1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def count_parts_on_dask(
    parts: Sequence[Part],
    client: Any,
    count_part: Callable[[Part], Counter[str]],
    progress: Callable[[int], None] | None = None,
) -> Counter[str]:
    """The summed chunk counts of ``parts``, each counted by ``count_part`` on the workers
    of ``client`` (given by :mod:`glassllm.training.chunk_counting`, which imports this module only for
    a Dask run). ``progress(n)`` is told of each part's ``n`` bytes as it finishes."""
    if not parts:
        return Counter()
    distributed = optional("distributed", "dask")
    futures = client.map(count_part, parts, pure=False)
    sizes = {future.key: part.size for future, part in zip(futures, parts, strict=True)}
    finished = distributed.as_completed(futures)
    del futures  # only ``finished`` and the summing tasks keep partial counts alive
    outstanding = len(sizes)
    ready: list[Any] = []
    for future in finished:
        outstanding -= 1
        if future.status == "error":
            future.result()  # raises the worker's exception here
        if progress is not None and future.key in sizes:
            progress(sizes.pop(future.key))
        ready.append(future)
        if len(ready) == FAN_IN or (outstanding == 0 and len(ready) > 1):
            finished.add(client.submit(_add, *ready, pure=False))
            outstanding += 1
            ready = []
    (total,) = ready
    return total.result()


def _add(*counts: Counter[str]) -> Counter[str]:
    # A new Counter: a task rerun after a lost worker may see the same inputs again.
    total: Counter[str] = Counter()
    for more in counts:
        total.update(more)
    return total
