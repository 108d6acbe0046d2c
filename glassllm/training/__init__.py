"""Training: where the text comes from, how its chunks are counted, where counts are kept.

    corpus (files, folders, URLs → parts) → chunk_counting (parts → chunk counts, in
    processes or on a Dask cluster) → counts_files (counts kept and summed) → learned
    merges (:meth:`glassllm.Tokenizer.train_from_counts`)

:mod:`~glassllm.training.cluster` counts on Dask; :mod:`~glassllm.training.optional`
imports what only some corpora need (Dask, Parquet, Zstandard, URLs).
"""

from glassllm.training.chunk_counting import count_chunks, count_files
from glassllm.training.cluster import dask_client
from glassllm.training.counts_files import counts_stamp, read_counts, sum_counts, write_counts

# What the docs show people calling (docs/training.md, docs/cluster.md).
__all__ = ["count_chunks", "count_files", "counts_stamp", "dask_client", "read_counts", "sum_counts", "write_counts"]
