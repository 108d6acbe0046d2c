"""Training a tokenizer from the editor: gather the files, count, train, write atomically.

The server trains in a process of its own (``python -m glassllm_server.training``, see
:func:`main`), so that training neither holds the server's interpreter lock while the
user types nor keeps its memory afterwards. That process reports its progress as JSON
lines, which the server turns into ``window/workDoneProgress``. Cancellation is
cooperative: SIGTERM sets a flag, the library calls ``progress`` after every merge, and
raising there aborts training. Nothing is written before training has finished and
:meth:`Tokenizer.save` replaces the file in one step, so a cancelled or failed run never
leaves a partial file; a file that is not a tokenizer is never replaced unless the user
said yes (``--replace``). Its errors speak the user's language (``--locale``). No pygls here.
"""

from __future__ import annotations

import json
import re
import signal
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from glassllm import Tokenizer
from glassllm.formats.files import may_replace
from glassllm.shown.problems import describe, problem
from glassllm.training.chunk_counting import count_chunks, count_files
from glassllm_server.messages import Locale, Messages

__all__ = [
    "TEXT_SUFFIXES",
    "NotATokenizerFile",
    "Percent",
    "SourceProblem",
    "TrainingCancelled",
    "TrainingSource",
    "check_unicode",
    "gather_files",
    "main",
    "train_tokenizer",
]

# In a folder, the files read as text: prose and markup people write, plus files with no
# suffix (README, LICENSE). Anything else (code, data, binaries) is left out.
TEXT_SUFFIXES = frozenset({"", ".txt", ".text", ".md", ".markdown", ".rst", ".adoc", ".org", ".tex"})


# A lone surrogate: JSON can carry one ("\\ud800"), UTF-8 text cannot.
_SURROGATE = re.compile("[\ud800-\udfff]")


def check_unicode(text: str) -> None:
    """Raise the library's ``train.surrogate`` problem (a ``ValueError``, the words
    ``Tokenizer.train`` gives) when ``text`` holds a lone surrogate: it is not Unicode
    text, and could not reach the training process as UTF-8."""
    found = _SURROGATE.search(text)
    if found is not None:
        raise problem(ValueError, "train.surrogate", code=ord(found.group()), offset=found.start())


class TrainingCancelled(Exception):
    """The user cancelled training."""


class SourceProblem(ValueError):
    """A problem with what to train on or where to write, as a message-catalogue entry:
    ``str()`` is the English text, :meth:`say` the text in the user's language."""

    def __init__(self, key: str, **fields: object) -> None:
        self.key = key
        self.fields = fields
        super().__init__(self.say("en"))

    def say(self, locale: Locale) -> str:
        return Messages(locale)(self.key, **self.fields)


@dataclass(frozen=True)
class TrainingSource:
    """What to train on: text files (each a text of its own), or an open document's text."""

    files: list[Path]
    skipped: list[Path]  # files with a text suffix left out: not UTF-8 text, or (over TCP) leading outside
    text: str | None = None

    def count(self) -> Counter[str]:
        """The chunk counts of the source: the one counting code path of the library,
        the ``glassllm`` command and this server (files in one process per core)."""
        if self.text is not None:
            return count_chunks(self.text)
        return count_files(self.files, jobs=None)


def gather_files(path: Path, inside: Sequence[Path] | None = None) -> TrainingSource:
    """A file, or the text files under a folder (hidden ones excluded), checked to be text.

    Files are taken in sorted path order, so training is reproducible; each is counted
    as a text of its own, so the last chunk of one never joins the first of the next.
    With ``inside`` (over TCP), a file of the folder whose links lead outside those
    folders is left out, as are the files of a linked folder outside them.
    Raises ``OSError`` when ``path`` is missing or unreadable and :class:`SourceProblem`
    (a ``ValueError``) when a single file is not a regular UTF-8 text file or a folder
    holds no text.
    """
    if not path.is_dir():
        if path.exists() and not path.is_file():
            # A FIFO would block the reader, /dev/zero fill its memory.
            raise SourceProblem("train.not_regular", path=path)
        try:
            _check_text(path)
        except UnicodeDecodeError as error:
            raise SourceProblem("train.not_utf8", path=path, reason=error.reason, byte=error.start) from error
        return TrainingSource([path], [])
    files: list[Path] = []
    skipped: list[Path] = []
    folders = None if inside is None else [folder.resolve() for folder in inside]
    for candidate in sorted(path.rglob("*")):
        relative = candidate.relative_to(path)
        if any(part.startswith(".") for part in relative.parts) or not candidate.is_file():
            continue
        if candidate.suffix.lower() not in TEXT_SUFFIXES:
            continue
        if folders is not None and not any(candidate.resolve().is_relative_to(folder) for folder in folders):
            skipped.append(candidate)
            continue
        try:
            _check_text(candidate)
        except (UnicodeDecodeError, OSError):
            skipped.append(candidate)
            continue
        files.append(candidate)
    if not files:
        raise SourceProblem("train.no_text", path=path)
    return TrainingSource(files, skipped)


def _check_text(path: Path) -> None:
    raw = path.read_bytes()
    if b"\0" in raw:
        raise UnicodeDecodeError("utf-8", raw, raw.index(b"\0"), raw.index(b"\0") + 1, "NUL byte in text")
    raw.decode("utf-8")


class NotATokenizerFile(SourceProblem):
    """The output exists and is not a glassllm tokenizer file: replacing it needs a yes."""

    def __init__(self, path: Path) -> None:
        super().__init__("train.not_tokenizer", path=path)


def train_tokenizer(
    counts: Mapping[str, int],
    vocab_size: int,
    output: Path,
    progress: Callable[[int, int], None],
    cancelled: Callable[[], bool],
    *,
    replace: bool = False,
) -> Tokenizer:
    """Train on chunk ``counts`` and save to ``output`` (creating its folder).

    ``progress(done, total)`` follows each merge; when ``cancelled()`` turns true,
    :class:`TrainingCancelled` is raised and ``output`` is left as it was. An ``output``
    that exists and is not a glassllm tokenizer file is only replaced with ``replace``
    (checked before training and again before writing): else :class:`NotATokenizerFile`.
    Raises ``ValueError`` when ``vocab_size`` is too small for the text's alphabet.
    """

    def step(done: int, total: int) -> None:
        if cancelled():
            raise TrainingCancelled
        progress(done, total)

    def check() -> None:
        if not replace and not may_replace(output):
            raise NotATokenizerFile(output)

    check()
    if cancelled():
        raise TrainingCancelled
    tok = Tokenizer.train_from_counts(counts, vocab_size, progress=step)
    if cancelled():
        raise TrainingCancelled
    output.parent.mkdir(parents=True, exist_ok=True)
    check()
    tok.save(output)
    return tok


class Percent:
    """Turns ``(done, total)`` into a whole percent, only when it changes (one report
    per percent keeps the client from drowning in ~1,000 messages)."""

    def __init__(self) -> None:
        self.last = -1

    def __call__(self, done: int, total: int) -> int | None:
        percent = 100 if total <= 0 else min(100, done * 100 // total)
        if percent == self.last:
            return None
        self.last = percent
        return percent


def main(argv: list[str] | None = None) -> None:
    """``python -m glassllm_server.training VOCAB_SIZE OUTPUT [SOURCE] [--replace] [--locale pt]
    [--inside DIR]...``: train on the file or folder SOURCE, or on standard input (UTF-8)
    without one. ``--replace`` replaces OUTPUT even when it is not a tokenizer file (the
    user said yes); ``--locale`` is the language of the errors (English by default);
    ``--inside`` (over TCP) leaves out a folder's files that lead outside those folders.

    Writes one JSON object per line to standard output: ``{"progress": [done, total]}``
    at each new percent, then ``{"done": {...}}``, ``{"cancelled": true}`` or
    ``{"error": "..."}``. SIGTERM cancels at the next merge.
    """
    vocab_size, output, source, replace, locale, inside = _arguments(sys.argv[1:] if argv is None else argv)
    stop: list[bool] = []
    signal.signal(signal.SIGTERM, lambda number, frame: stop.append(True))
    percent = Percent()

    def emit(message: dict[str, object]) -> None:
        sys.stdout.write(json.dumps(message, ensure_ascii=False) + "\n")
        sys.stdout.flush()

    def progress(done: int, total: int) -> None:
        if percent(done, total) is not None:
            emit({"progress": [done, total]})

    try:
        if source:
            corpus = gather_files(Path(source), inside)
        else:
            corpus = TrainingSource([], [], sys.stdin.buffer.read().decode("utf-8"))
        tok = train_tokenizer(
            corpus.count(), int(vocab_size), Path(output), progress, lambda: bool(stop), replace=replace
        )
    except TrainingCancelled:
        emit({"cancelled": True})
        return
    except SourceProblem as error:
        emit({"error": error.say(locale)})
        return
    except (OSError, ValueError) as error:
        emit({"error": describe(error, locale)})
        return
    emit(
        {
            "done": {
                "vocabSize": tok.vocab_size,
                "alphabet": len(tok.alphabet),
                "merges": len(tok.merges),
                "files": [str(path) for path in corpus.files],
                "skipped": [str(path) for path in corpus.skipped],
            }
        }
    )


def _arguments(argv: list[str]) -> tuple[str, str, str | None, bool, Locale, list[Path] | None]:
    """``main``'s arguments: vocabulary size, output, source (None: standard input),
    whether to replace a file that is not a tokenizer, the errors' language, and the
    folders a folder's files must lie in (None: anywhere)."""
    arguments = list(argv)
    replace = "--replace" in arguments
    locale: Locale = "en"
    if "--locale" in arguments:
        at = arguments.index("--locale")
        locale = "pt" if arguments[at + 1] == "pt" else "en"
        del arguments[at : at + 2]
    inside: list[Path] | None = None
    while "--inside" in arguments:
        at = arguments.index("--inside")
        inside = [*(inside or []), Path(arguments[at + 1])]
        del arguments[at : at + 2]
    vocab_size, output, *source = [argument for argument in arguments if argument != "--replace"]
    return vocab_size, output, source[0] if source else None, replace, locale, inside


if __name__ == "__main__":
    main()
