"""The ``glassllm`` command line: :mod:`~glassllm.cli.__main__` parses it and runs
``encode``, ``decode``, ``explain``, ``inspect``, ``export`` and ``completion``;
:mod:`~glassllm.cli.compare` is ``glassllm compare`` and :mod:`~glassllm.cli.train`
``glassllm count`` and ``glassllm train``; :mod:`~glassllm.cli.tokens` is ``glassllm
tokens``. ``python -m glassllm.cli`` runs it too.
"""
