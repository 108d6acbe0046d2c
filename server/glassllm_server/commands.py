"""The names of glassllm's own commands and messages, in one place.

The commands are what ``workspace/executeCommand`` runs (the server advertises them,
code lenses and code actions name them, editor integrations bind them: the editors'
manifests spell them the same); the two methods are the custom request and notification
beside LSP's. No pygls here.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["STATS_REQUEST", "TOKENIZERS_CHANGED", "Command"]


class Command(StrEnum):
    """The commands the server runs."""

    SHOW_STATS = "glassllm.showStats"
    EXPLAIN_MERGES = "glassllm.explainMerges"
    COMPARE_TOKENIZERS = "glassllm.compareTokenizers"
    OPEN_IN_BROWSER = "glassllm.openInBrowser"
    TRAIN_TOKENIZER = "glassllm.trainTokenizer"
    TOKEN_MAP = "glassllm.tokenMap"


# The counts of a document or a range, with each compared tokenizer's.
STATS_REQUEST = "glassllm/stats"
# Sent when what glassllm/stats answers changed without an edit (a tokenizer switched or a
# compared one became ready): clients then ask for their counts again.
TOKENIZERS_CHANGED = "glassllm/tokenizersChanged"
