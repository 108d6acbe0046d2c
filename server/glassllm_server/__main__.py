"""``glassllm-lsp`` / ``python -m glassllm_server``: start the language server.

stdio by default (what editors use); ``--tcp --workspace DIR --host --port`` for a socket,
which any local user can reach: it serves one client and reads and writes only inside
the ``--workspace`` folders (see :mod:`glassllm_server.confinement`).
"""

from __future__ import annotations

import argparse
import gc
import logging
import sys
from pathlib import Path

from glassllm_server import __version__

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="glassllm-lsp", description="The glassllm language server.")
    transport = parser.add_mutually_exclusive_group()
    # Generic clients (vscode-languageclient's stdio transport among them) pass --stdio.
    transport.add_argument("--stdio", action="store_true", help="talk over standard input/output (the default)")
    transport.add_argument("--tcp", action="store_true", help="listen on a TCP socket instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="TCP host (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=2087, help="TCP port (default 2087)")
    parser.add_argument(
        "--workspace",
        action="append",
        metavar="DIR",
        help="with --tcp (required there, may repeat): the only folders the server reads and writes in",
    )
    parser.add_argument("--log-file", help="write the log to this file (default: standard error)")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log detail (-v info, -vv debug)")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def _workspace(parser: argparse.ArgumentParser, arguments: argparse.Namespace) -> tuple[Path, ...] | None:
    """The folders a TCP server is confined to, resolved (None over stdio)."""
    if not arguments.tcp:
        if arguments.workspace:
            parser.error(
                "--workspace goes with --tcp (over stdio the editor that starts the server is its only client)"
            )
        return None
    if not arguments.workspace:
        parser.error(
            "--tcp needs --workspace DIR (one or more): any local user can connect to a TCP port, "
            "so the server reads and writes only inside the folders given here"
        )
    folders = tuple(Path(folder).expanduser().resolve() for folder in arguments.workspace)
    for given, folder in zip(arguments.workspace, folders, strict=True):
        if not folder.is_dir():
            parser.error(f"--workspace {given}: not a folder")
    return folders


def main(argv: list[str] | None = None) -> None:
    parser = _parser()
    arguments = parser.parse_args(argv)
    confined_to = _workspace(parser, arguments)
    level = (logging.WARNING, logging.INFO, logging.DEBUG)[min(arguments.verbose, 2)]
    handler: logging.Handler = (
        logging.FileHandler(arguments.log_file, encoding="utf-8")
        if arguments.log_file
        else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])
    # Outgoing messages are logged at INFO by pygls: far too much even with -v.
    logging.getLogger("pygls.protocol.json_rpc").setLevel(logging.DEBUG if arguments.verbose >= 2 else logging.WARNING)

    from glassllm_server.features import create_server

    server = create_server()
    # Modules, classes and pygls' generated converters live as long as the process:
    # keep the garbage collector from walking them again and again; collect less often,
    # since tokenizing a large document allocates millions of objects that all survive.
    # What is garbage by now is young: a young collection frees 31 of the 36 objects a
    # full one would, in 0.7 ms instead of 55 ms of CPU time (a full one walks the
    # packaged tokenizers' vocabularies and merges), and the same memory.
    gc.collect(0)
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)
    if confined_to is not None:
        server.session.confined_to = confined_to
        server.start_tcp(arguments.host, arguments.port)
    else:
        server.start_io()
    sys.exit(server.exit_status)


if __name__ == "__main__":
    main()
