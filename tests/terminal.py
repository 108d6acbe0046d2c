"""A command run with its standard error on a pseudo-terminal, as a person at a terminal
runs it: what the progress bars draw there, and what goes to standard output apart."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import termios
from pathlib import Path
from typing import NamedTuple


class TerminalRun(NamedTuple):
    returncode: int
    stdout: bytes
    screen: str  # what standard error drew on the terminal


def run_on_terminal(command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> TerminalRun:
    """Run ``command`` with standard error on a new 24×100 terminal (a new
    pseudo-terminal has no size, and the bars need one) until it ends."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    try:
        child = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=follower)
        os.close(follower)
        follower = -1
        shown = b""
        while True:
            try:
                data = os.read(leader, 4096)
            except OSError:  # the terminal closed with the child
                break
            if not data:
                break
            shown += data
        returncode = child.wait(timeout=120)
        assert child.stdout is not None
        return TerminalRun(returncode, child.stdout.read(), shown.decode("utf-8", "replace"))
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
