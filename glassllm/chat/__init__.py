"""Conversations through a model's chat template: which tokens the template added, and where.

People send a model a conversation, and its chat template wraps it in tokens they never
typed. :func:`encode_chat` renders a conversation as transformers' ``apply_chat_template``
renders it and tokenizes it as it does (the same IDs), and says of every token whether
the template wrote it or which message's content it holds, at which offsets:
``encode_chat(load_chat_format("tokenizer.json"), conversation_from(messages, "here"))``.
"""

from glassllm.chat.conversation import Conversation, conversation_from, read_conversation, read_dataset
from glassllm.chat.encoding import (
    ChatEncoding,
    ChatFormat,
    ChatToken,
    ChatWarning,
    TemplatePart,
    TokenSource,
    encode_chat,
    encode_chats,
    load_chat_format,
)

__all__ = [
    "ChatEncoding",
    "ChatFormat",
    "ChatToken",
    "ChatWarning",
    "Conversation",
    "TemplatePart",
    "TokenSource",
    "conversation_from",
    "encode_chat",
    "encode_chats",
    "load_chat_format",
    "read_conversation",
    "read_dataset",
]
