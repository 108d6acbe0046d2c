"""glassllm: a transparent character-level BPE tokenizer.

>>> from glassllm import Tokenizer
>>> tok = Tokenizer.train("banana banana", vocab_size=12)
>>> tok.encode("banana banana")
[11, 7, 11]
"""

# The one place the version is written: the package metadata (hatch), `glassllm --version`,
# the stamp of counts files and the language server's serverInfo all read it.
__version__ = "0.1.0"

from glassllm.chat import (
    ChatEncoding,
    ChatFormat,
    ChatToken,
    Conversation,
    TemplatePart,
    TokenSource,
    conversation_from,
    encode_chat,
    encode_chats,
    load_chat_format,
    read_conversation,
    read_dataset,
)
from glassllm.compare import ComparedChunk, Comparison, TokenizerTotals, by_difference, compare
from glassllm.packaged import PACKAGED, load_own_tokenizer, load_tokenizer, packaged, packaged_path
from glassllm.pipeline.any_tokenizer import AnyTokenizer
from glassllm.pipeline.tokens import ChunkExplanation, MergeStep, Span, TokenSpan
from glassllm.tokenizer import Tokenizer

__all__ = [
    "PACKAGED",
    "AnyTokenizer",
    "ChatEncoding",
    "ChatFormat",
    "ChatToken",
    "ChunkExplanation",
    "ComparedChunk",
    "Comparison",
    "Conversation",
    "MergeStep",
    "Span",
    "TemplatePart",
    "TokenSource",
    "TokenSpan",
    "Tokenizer",
    "TokenizerTotals",
    "__version__",
    "by_difference",
    "compare",
    "conversation_from",
    "encode_chat",
    "encode_chats",
    "load_chat_format",
    "load_own_tokenizer",
    "load_tokenizer",
    "packaged",
    "packaged_path",
    "read_conversation",
    "read_dataset",
]
