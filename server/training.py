"""Training a tokenizer from the editor: gather the text, train, write the file atomically.

The server trains in a process of its own (``python -m glassllm_server.training``, see
:func:`main`), so that training neither holds the server's interpreter lock while the
user types nor keeps its memory afterwards. That process reports its progress as JSON
lines, which the server turns into ``window/workDoneProgress``. Cancellation is
cooperative: SIGTERM sets a flag, the library calls ``progress`` after every merge, and
raising there aborts training. Nothing is written before training has finished and
:meth:`Tokenizer.save` replaces the file in one step, so a cancelled or failed run never
leaves a partial file. No pygls here.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from glassllm import Tokenizer

__all__ = ["TEXT_SUFFIXES", "Percent", "TrainingCancelled", "TrainingSource", "gather_text", "main", "train_tokenizer"]

# In a folder, the files read as text: prose and markup people write, plus files with no
# suffix (README, LICENSE). Anything else (code, data, binaries) is left out.
TEXT_SUFFIXES = frozenset({"", ".txt", ".text", ".md", ".markdown", ".rst", ".adoc", ".org", ".tex"})


class TrainingCancelled(Exception):
    """The user cancelled training."""


@dataclass(frozen=True)
class TrainingSource:
    """The text to train on and where it came from."""

    text: str
    files: list[Path]
    skipped: list[Path]  # files with a text suffix that are not UTF-8 text


def gather_text(path: Path) -> TrainingSource:
    """The text of a file, or of the text files under a folder (hidden ones excluded).

    Files are read in sorted path order, so training is reproducible; each ends with a
    newline so the last chunk of one file never joins the first chunk of the next.
    Raises ``OSError`` when ``path`` is missing or unreadable and ``ValueError`` when a
    single file is not UTF-8 text or a folder holds no text.
    """
    if not path.is_dir():
        try:
            return TrainingSource(_read_text(path), [path], [])
        except UnicodeDecodeError as error:
            raise ValueError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from error
    texts: list[str] = []
    files: list[Path] = []
    skipped: list[Path] = []
    for candidate in sorted(path.rglob("*")):
        relative = candidate.relative_to(path)
        if any(part.startswith(".") for part in relative.parts) or not candidate.is_file():
            continue
        if candidate.suffix.lower() not in TEXT_SUFFIXES:
            continue
        try:
            text = _read_text(candidate)
        except (UnicodeDecodeError, OSError):
            skipped.append(candidate)
            continue
        texts.append(text if text.endswith(("\n", "\r")) else text + "\n")
        files.append(candidate)
    if not files:
        raise ValueError(f"{path}: no text files to train on")
    return TrainingSource("".join(texts), files, skipped)


def _read_text(path: Path) -> str:
    raw = path.read_bytes()
    if b"\0" in raw:
        raise UnicodeDecodeError("utf-8", raw, raw.index(b"\0"), raw.index(b"\0") + 1, "NUL byte in text")
    return raw.decode("utf-8")


def train_tokenizer(
    text: str,
    vocab_size: int,
    output: Path,
    progress: Callable[[int, int], None],
    cancelled: Callable[[], bool],
) -> Tokenizer:
    """Train on ``text`` and save to ``output`` (creating its folder).

    ``progress(done, total)`` follows each merge; when ``cancelled()`` turns true,
    :class:`TrainingCancelled` is raised and ``output`` is left as it was.
    Raises ``ValueError`` when ``vocab_size`` is too small for the text's alphabet.
    """

    def step(done: int, total: int) -> None:
        if cancelled():
            raise TrainingCancelled
        progress(done, total)

    if cancelled():
        raise TrainingCancelled
    tok = Tokenizer.train(text, vocab_size, progress=step)
    if cancelled():
        raise TrainingCancelled
    output.parent.mkdir(parents=True, exist_ok=True)
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
    """``python -m glassllm_server.training VOCAB_SIZE OUTPUT [SOURCE]``: train on the
    file or folder SOURCE, or on standard input (UTF-8) without one.

    Writes one JSON object per line to standard output: ``{"progress": [done, total]}``
    at each new percent, then ``{"done": {...}}``, ``{"cancelled": true}`` or
    ``{"error": "..."}``. SIGTERM cancels at the next merge.
    """
    vocab_size, output, *source = sys.argv[1:] if argv is None else argv
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
            corpus = gather_text(Path(source[0]))
        else:
            corpus = TrainingSource(sys.stdin.buffer.read().decode("utf-8"), [], [])
        tok = train_tokenizer(corpus.text, int(vocab_size), Path(output), progress, lambda: bool(stop))
    except TrainingCancelled:
        emit({"cancelled": True})
        return
    except (OSError, ValueError) as error:
        emit({"error": str(error)})
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


if __name__ == "__main__":
    main()
