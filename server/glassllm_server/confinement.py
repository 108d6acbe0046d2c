"""Over TCP, the server reads and writes only inside the workspace given when it started.

With stdio the client is the editor that started the server, and a path it passes is the
user's wish. A TCP port is open to every local user, so ``glassllm-lsp --tcp`` needs
``--workspace DIR`` (one or more), fixed for the server's life, whatever folders a client
declares; and it serves one client (see :mod:`glassllm_server.protocol.transport`). There:

- commands (training) read and write only inside those folders, after resolving symbolic
  links and ``..``; training on a folder leaves out the files whose links lead outside;
- the ``glassllm.tokenizer`` and ``compareWith`` settings read only files inside them (or
  the packaged tokenizers), and a path outside gets the same answer whether or not it
  exists;
- no message quotes a file's content: a broken tokenizer file is described by what is
  wrong and where (``merges[3]``), never by the values it holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from glassllm.shown.problems import Problem, describe
from glassllm_server.messages import Locale, Messages
from glassllm_server.protocol.errors import RequestFailed

__all__ = ["OutsideWorkspace", "check_inside", "inside", "quiet_problem"]


def inside(path: Path, folders: Sequence[Path]) -> bool:
    """Whether ``path``, its links and ``..`` resolved, lies in one of ``folders`` (resolved).
    A path that cannot be resolved (a link loop, a NUL byte) is not."""
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError, ValueError):
        return False
    return any(resolved.is_relative_to(folder) for folder in folders)


def check_inside(path: Path, folders: Sequence[Path] | None, messages: Messages) -> None:
    """Raise :class:`RequestFailed` (in ``messages``' language) when the server is
    confined to ``folders`` (over TCP) and ``path``, its links resolved, is outside them."""
    if folders is None or inside(path, folders):
        return
    shown = ", ".join(str(folder) for folder in folders)
    raise RequestFailed(messages("path.outside", path=path, folders=shown))


class OutsideWorkspace(ValueError):
    """A tokenizer file a setting names outside the workspace folders (over TCP)."""

    def __init__(self, path: str, folders: Sequence[Path]) -> None:
        self.path = path
        self.folders = ", ".join(str(folder) for folder in folders)
        super().__init__(self.say("en"))

    def say(self, locale: Locale) -> str:
        return Messages(locale)("tokenizer.outside", folders=self.folders)


# The library's problems whose message holds nothing of the file but its name, sizes,
# counts, kinds and the JSON reader's own words.
_CONTENT_FREE = frozenset(
    {
        "file.unreadable",
        "file.not_utf8",
        "file.not_json",
        "file.not_regular",
        "file.empty_pipe",
        "file.silent_pipe",
        "file.too_large",
        "file.entries",
        "file.nested",
        "file.long_number",
        "file.not_object",
        "file.missing_key",
        "file.not_list",
        "file.counts",
        "load.own_only",
        "model.unknown_file",
    }
)
# Where the other problems are, without what is there.
_PLACES: dict[str, Callable[[Problem], str]] = {
    "file.version": lambda found: "version",
    "file.symbol": lambda found: f"alphabet[{found.fields['position']}]",
    "file.duplicate": lambda found: f"alphabet[{found.fields['position']}]",
    "file.surrogate": lambda found: f"alphabet[{found.fields['position']}]",
    "file.pair": lambda found: f"merges[{found.fields['rank']}]",
    "file.pair_unknown": lambda found: f"merges[{found.fields['rank']}]",
    "file.count": lambda found: f"merge_counts[{found.fields['rank']}]",
}


def quiet_problem(error: Exception, path: str, locale: Locale) -> str:
    """What went wrong loading the tokenizer file ``path``, in ``locale``, without
    quoting the file's content: the library's own words where they quote nothing, else
    what is wrong and where."""
    if isinstance(error, OutsideWorkspace):
        return error.say(locale)
    found = getattr(error, "problem", None)
    if isinstance(found, Problem) and found.code in _CONTENT_FREE:
        return describe(error, locale)
    messages = Messages(locale)
    if isinstance(found, Problem) and found.code in _PLACES:
        return messages("tokenizer.hidden_at", path=path, place=_PLACES[found.code](found))
    return messages("tokenizer.hidden", path=path)
