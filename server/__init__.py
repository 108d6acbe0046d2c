"""The glassllm language server."""
