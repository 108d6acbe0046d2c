"""The glassllm language server (import package ``glassllm_server``).

Pure modules — :mod:`positions`, :mod:`document`, :mod:`settings`, :mod:`messages` and
the text of each feature — never import pygls; :mod:`server` and ``features/`` are the
thin protocol glue over them.
"""

from glassllm import __version__

__all__ = ["__version__"]
