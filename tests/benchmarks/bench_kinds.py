"""Load and encode speed of one model of each kind against its own library, in one run.

    bash tests/fixtures/fetch_models.sh
    python3 -m pip install -e ".[bench,test]" && python3 tests/benchmarks/bench_kinds.py

The models, all but Llama 3 trained here in a temporary folder on the first 1 MB of each
training corpus (corpora/{pt,en}/train.txt), 8,000 entries:

- BPE: Llama 3's tokenizer.json (tests/fixtures/models);
- WordPiece, WordLevel, Unigram: tokenizer.json files trained by HF's own trainers
  (``BertPreTokenizer``, ``Whitespace``, ``Metaspace``), against HF ``tokenizers``;
- SentencePiece BPE and Unigram ``.model`` files trained by ``sentencepiece``, against it.

Load: best of ``--repeat`` in this process, glassllm's ``load_tokenizer`` against HF's
``Tokenizer.from_file`` or ``SentencePieceProcessor``. Encode: each text's lines, glassllm
line by line (a fresh tokenizer: its first pass, every chunk new; then best of
``--repeat`` warm passes), the peer with ``encode_batch`` (HF, both cores) or a list
(``sentencepiece``); the IDs are checked equal to the peer's. Texts: corpora/pt/heldout.txt
(214 KB) and the last 2 MB of corpora/pt/train.txt (never trained on). Ratio: the peer's
time over glassllm's (above 1.0, glassllm is faster).

``--large`` measures issue 29's largest vocabularies instead: a byte-level BPE
tokenizer.json of 2,000,000 entries and over 128 MB written by HF (see
``tests.library.formats.fixtures.large_bpe_file``), loaded by glassllm and by HF, each in a
fresh process (``--repeat`` times, taking turns), with each process's peak RSS.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

from glassllm import load_tokenizer

ROOT = Path(__file__).resolve().parents[2]

CORPORA = ROOT / "corpora"
LLAMA3 = ROOT / "tests" / "fixtures" / "models" / "llama3" / "tokenizer.json"
TRAINED_ON = 1_000_000  # characters of each training corpus
ENTRIES = 8_000


def timed(run: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = run()
    return time.perf_counter() - started, result


def best(repeat: int, run: Callable[[], object]) -> float:
    return min(timed(run)[0] for _ in range(repeat))


def training_lines() -> list[str]:
    return [
        line
        for language in ("pt", "en")
        for line in (CORPORA / language / "train.txt").read_text(encoding="utf-8")[:TRAINED_ON].splitlines()
    ]


def train_hf(kind: str, folder: Path, lines: list[str]) -> Path:
    """A ``kind`` tokenizer.json trained by HF's own trainer."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    specials = ["[UNK]", "[CLS]", "[SEP]"]
    if kind == "WordPiece":
        tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
        tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        trainer: object = trainers.WordPieceTrainer(vocab_size=ENTRIES, special_tokens=specials)
    elif kind == "WordLevel":
        tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
        tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
        trainer = trainers.WordLevelTrainer(vocab_size=ENTRIES, special_tokens=specials)
    else:
        tokenizer = Tokenizer(models.Unigram())
        tokenizer.normalizer = normalizers.NFKC()
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
        trainer = trainers.UnigramTrainer(vocab_size=ENTRIES, special_tokens=specials, unk_token="[UNK]")
    tokenizer.train_from_iterator(lines, trainer=trainer)  # type: ignore[arg-type]
    path = folder / f"{kind.lower()}.json"
    tokenizer.save(str(path))
    return path


def train_sentencepiece(model_type: str, folder: Path, lines: list[str]) -> Path:
    """A SentencePiece ``.model`` of ``model_type`` trained by ``sentencepiece``."""
    import sentencepiece

    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(lines), encoding="utf-8")
    prefix = folder / f"sentencepiece-{model_type}"
    sentencepiece.SentencePieceTrainer.train(
        input=str(corpus),
        model_prefix=str(prefix),
        model_type=model_type,
        vocab_size=ENTRIES,
        character_coverage=0.9995,
        byte_fallback=True,
        minloglevel=2,
    )
    return prefix.with_suffix(".model")


def peer(path: Path) -> tuple[Callable[[], object], Callable[[object, list[str]], list[list[int]]]]:
    """The file's own library: its loader, and its encoding of lines."""
    if path.suffix == ".json":
        from tokenizers import Tokenizer

        def hf_encode(tok: object, lines: list[str]) -> list[list[int]]:
            return [found.ids for found in tok.encode_batch(lines, add_special_tokens=False)]  # type: ignore[attr-defined]

        return lambda: Tokenizer.from_file(str(path)), hf_encode
    import sentencepiece

    def sp_encode(tok: object, lines: list[str]) -> list[list[int]]:
        return tok.encode(lines)  # type: ignore[attr-defined]

    return lambda: sentencepiece.SentencePieceProcessor(model_file=str(path)), sp_encode


def report(name: str, path: Path, texts: dict[str, list[str]], repeat: int) -> None:
    load_peer, encode_peer = peer(path)
    ours = best(repeat, lambda: load_tokenizer(path))
    theirs = best(repeat, load_peer)
    print(f"{name:22s} load         glassllm {ours:7.3f} s  peer {theirs:7.3f} s  ratio {theirs / ours:5.2f}")
    other = load_peer()
    for label, lines in texts.items():
        tok = load_tokenizer(path)
        cold, ids = cast(
            "tuple[float, list[list[int]]]", timed(lambda tok=tok, lines=lines: list(map(tok.encode, lines)))
        )
        peer_time, expected = cast(
            "tuple[float, list[list[int]]]", timed(lambda lines=lines: encode_peer(other, lines))
        )
        if ids != expected:
            wrong = next(index for index, (got, want) in enumerate(zip(ids, expected, strict=True)) if got != want)
            shown = f"{label}, line {wrong}: {lines[wrong]!r:.80}"
            raise SystemExit(f"{name}: glassllm's IDs differ from the peer's on {shown}")
        warm = best(repeat, lambda tok=tok, lines=lines: list(map(tok.encode, lines)))
        peer_time = min(peer_time, best(repeat, lambda lines=lines: encode_peer(other, lines)))
        print(
            f"{name:22s} {label:12s} first {cold:6.2f} s  warm {warm:6.2f} s  peer {peer_time:6.2f} s"
            f"  ratio first {peer_time / cold:5.2f}  warm {peer_time / warm:5.2f}"
        )


def kinds(repeat: int) -> None:
    if not LLAMA3.is_file():
        raise SystemExit(f"missing {LLAMA3}: run `bash tests/fixtures/fetch_models.sh` first")
    train = (CORPORA / "pt" / "train.txt").read_text(encoding="utf-8")
    texts = {
        "heldout.txt": (CORPORA / "pt" / "heldout.txt").read_text(encoding="utf-8").splitlines(),
        "train 2 MB": train[-2_000_000:].splitlines(),
    }
    print(f"glassllm from {Path(sys.modules['glassllm'].__file__ or '').parent}; best of {repeat}; load {load()}")
    with tempfile.TemporaryDirectory() as folder:
        lines = training_lines()
        models = {"BPE (Llama 3)": LLAMA3}
        for kind in ("WordPiece", "WordLevel", "Unigram"):
            models[f"HF {kind}"] = train_hf(kind, Path(folder), lines)
        for model_type in ("bpe", "unigram"):
            models[f"SentencePiece {model_type}"] = train_sentencepiece(model_type, Path(folder), lines)
        for name, path in models.items():
            report(name, path, texts, repeat)
    print(f"load average at the end: {load()}")


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


# In a fresh process: the seconds a load takes and the process's peak RSS in MB (VmHWM:
# getrusage's ru_maxrss would count the parent's, which exec keeps).
_LOAD = """
import sys, time
started = time.perf_counter()
{statement}
seconds = time.perf_counter() - started
with open("/proc/self/status") as status:
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
print(seconds, peak >> 10)
"""
_BASELINE = _LOAD.format(statement="")
_LOADERS = {
    "glassllm": "from glassllm import load_tokenizer\nload_tokenizer(sys.argv[1])",
    "HF": "from tokenizers import Tokenizer\nTokenizer.from_file(sys.argv[1])",
}


def fresh(code: str, path: Path) -> tuple[float, int]:
    found = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True, cwd=ROOT
    )
    seconds, peak = found.stdout.split()[-2:]
    return float(seconds), int(peak)


def large(repeat: int) -> None:
    sys.path.append(str(ROOT))  # after the glassllm measured: the fixtures' generator only
    from tests.library.formats.fixtures import large_bpe_file

    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        path = large_bpe_file(Path(folder) / "tokenizer.json", 2_000_000, longest=12)
        size = path.stat().st_size
        made = time.perf_counter() - started
        print(f"2,000,000 entries, {size:,} bytes ({size / 2**20:.1f} MiB), made in {made:.0f} s")
        print(f"a bare interpreter's peak RSS: {fresh(_BASELINE, path)[1]} MB; load average {load()}")
        times: dict[str, list[float]] = {name: [] for name in _LOADERS}
        for turn in range(repeat):
            for name, statement in _LOADERS.items():
                seconds, peak = fresh(_LOAD.format(statement=statement), path)
                times[name].append(seconds)
                print(f"turn {turn + 1}: {name:8s} {seconds:6.2f} s  peak RSS {peak:5d} MB")
        ratios = [ours / theirs for ours, theirs in zip(times["glassllm"], times["HF"], strict=True)]
        print(f"glassllm / HF, each turn: {', '.join(f'{ratio:.2f}' for ratio in ratios)} (target ≤ 1.5)")
        print(f"load average at the end: {load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description="glassllm against each kind's own library, load and encode")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--large", action="store_true", help="the 2,000,000-entry, 128 MB tokenizer.json (issue 29)")
    args = parser.parse_args()
    if args.large:
        large(args.repeat)
    else:
        kinds(args.repeat)


if __name__ == "__main__":
    main()
