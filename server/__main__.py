"""Entry point placeholder replaced by the server issue."""


def main() -> None:
    raise SystemExit("glassllm-lsp is not built yet")
