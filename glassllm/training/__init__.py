"""Training: where the text comes from, how its chunks are counted, where counts are kept.

    corpus (files, folders, URLs → parts) → chunk_counting (parts → chunk counts, in
    processes or on a Dask cluster) → counts_files (counts kept and summed) → learned
    merges (:meth:`glassllm.Tokenizer.train_from_counts`)

:mod:`~glassllm.training.cluster` counts on Dask; :mod:`~glassllm.training.optional`
imports what only some corpora need (Dask, Parquet, Zstandard, URLs).
"""
