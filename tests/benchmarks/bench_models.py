"""glassllm's reading of real model tokenizers against each format's own library, in one run.

    bash tests/fixtures/fetch_models.sh
    python3 -m pip install -e ".[bench]" && python3 tests/benchmarks/bench_models.py

For Llama 3's and GPT-4o's ``tokenizer.json`` (against HF ``tokenizers``), Mistral v7's
SentencePiece model (against ``sentencepiece``) and Tekken (against mistral-common's
Tekkenizer, tiktoken underneath):

- loading: ``glassllm.load_tokenizer`` against the reference's own loader, in a fresh
  process each (glassllm's first load also builds its Unicode classes), and again in this
  process (best of ``--repeat``);
- encoding both held-out books (corpora/{pt,en}/heldout.txt, whole): cold is
  the first pass of a freshly loaded tokenizer (every chunk merged for the first time),
  warm the best of ``--repeat`` later passes (the per-chunk cache full). The peer encodes
  the books' lines with ``encode_batch`` (HF, all cores) or line by line (the others),
  each given the same lines, and its IDs are checked equal to glassllm's.

The ratio printed is the peer's time over glassllm's: above 1.0, glassllm is faster.

``--passes`` measures what issue 32 targets instead, on corpora/pt/train.txt (7.4 MB) and
corpora/pt/heldout.txt, one text at a time, given whole to glassllm: a fresh tokenizer's
first ``encode`` (every distinct chunk merged once; best of ``--repeat`` fresh loads), the
second (best of ``--repeat``),
``encode_spans`` once the chunks are known (best of ``--repeat``), against the format's own
library over the text's lines (HF ``encode_batch`` on all cores, ``sentencepiece`` on a list,
Tekken's tiktoken per line) and tiktoken's ``encode_ordinary`` on the whole text, built offline
from the same vocabulary and split pattern (Tekken's own tiktoken encoding; none for
SentencePiece), whose IDs are checked equal to glassllm's (the peers over lines are checked by
the default run: a chunk can cross a line break). It prints the ratios of the targets: first
pass / peer, second pass / tiktoken, ``encode_spans`` / ``encode``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

from glassllm import TokenSpan, load_tokenizer
from glassllm.formats.byte_level import from_symbols

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT / "corpora"
MODELS = ROOT / "tests" / "fixtures" / "models"


def timed(run: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = run()
    return time.perf_counter() - started, result


def best(repeat: int, run: Callable[[], object]) -> float:
    return min(timed(run)[0] for _ in range(repeat))


def fresh_load(statement: str) -> float:
    """Seconds that ``statement`` (which loads a tokenizer) takes in a new Python process."""
    code = f"import time\nstarted = time.perf_counter()\n{statement}\nprint(time.perf_counter() - started)"
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return float(found.stdout.split()[-1])


PEER_LOADS = {
    "hf": "from tokenizers import Tokenizer\nTokenizer.from_file({path!r})",
    "tekken": "from mistral_common.tokens.tokenizers.tekken import Tekkenizer\nTekkenizer.from_file({path!r})",
    "sentencepiece": "import sentencepiece\nsentencepiece.SentencePieceProcessor(model_file={path!r})",
}


def peers(name: str, path: Path) -> tuple[Callable[[], object], Callable[[object, list[str]], list[list[int]]]]:
    """The reference's loader, and its encoding of lines (the text's own IDs per line)."""
    if path.suffix == ".json" and name != "tekken":
        from tokenizers import Tokenizer

        def hf_encode(tok: object, lines: list[str]) -> list[list[int]]:
            return [e.ids for e in tok.encode_batch(lines, add_special_tokens=False)]  # type: ignore[attr-defined]

        def hf_load() -> object:
            tok = Tokenizer.from_file(str(path))
            tok.encode_special_tokens = True
            return tok

        return hf_load, hf_encode
    if name == "tekken":
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer

        def tekken_encode(tok: object, lines: list[str]) -> list[list[int]]:
            return [tok.encode(line, bos=False, eos=False) for line in lines]  # type: ignore[attr-defined]

        return lambda: Tekkenizer.from_file(path), tekken_encode
    import sentencepiece

    def sp_encode(tok: object, lines: list[str]) -> list[list[int]]:
        return tok.encode(lines)  # type: ignore[attr-defined]

    return lambda: sentencepiece.SentencePieceProcessor(model_file=str(path)), sp_encode


def offline_tiktoken(name: str, path: Path, peer: object) -> Callable[[str], list[int]] | None:
    """tiktoken's ``encode_ordinary`` for the model: built from a ``tokenizer.json``'s
    vocabulary (each piece's bytes ranked by its ID, as tiktoken's files rank them) and
    its split pattern, or Tekken's own encoding; ``None`` for SentencePiece."""
    import tiktoken

    if name == "tekken":
        # Its ranks; a Tekken ID is the rank plus the special tokens' count (checked apart).
        return peer._model.encode_ordinary  # type: ignore[attr-defined]
    if path.suffix != ".json":
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    splits = data["pre_tokenizer"]["pretokenizers"]
    pattern = next(part["pattern"]["Regex"] for part in splits if part["type"] == "Split")
    ranks = {from_symbols(piece): token_id for piece, token_id in data["model"]["vocab"].items()}
    return tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens={}).encode_ordinary


def first_pass(path: Path, text: str, repeat: int) -> tuple[float, list[int]]:
    """The best of ``repeat`` first passes, each by a tokenizer loaded afresh (a single
    pass of the 209 KB text takes a fifth of a second: one run is mostly noise)."""
    times, ids = [], []
    for _ in range(repeat):
        tok = load_tokenizer(path)
        started = time.perf_counter()
        ids = tok.encode(text)
        times.append(time.perf_counter() - started)
    return min(times), ids


def report_passes(name: str, path: Path, corpus: str, repeat: int) -> None:
    """The first and second pass, ``encode_spans``, and the peers, on one corpus text."""
    text = (CORPORA / "pt" / corpus).read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    load_peer, encode_peer = peers(name, path)
    peer = load_peer()
    first, ids = first_pass(path, text, repeat)
    tok = load_tokenizer(path)
    tok.encode(text)
    second = best(repeat, lambda: tok.encode(text))
    spans_time, spans = cast("tuple[float, list[TokenSpan]]", timed(lambda: tok.encode_spans(text)))
    spans_time = min(spans_time, best(repeat - 1, lambda: tok.encode_spans(text)) if repeat > 1 else spans_time)
    if [span.id for span in spans] != ids:
        raise SystemExit(f"{name}: encode_spans' IDs differ from encode's")
    del spans
    peer_time = best(repeat, lambda: encode_peer(peer, lines))
    encode_ordinary = offline_tiktoken(name, path, peer)
    shown = f"{name:11s} {corpus:12s} first {first:6.2f} s  second {second:5.2f} s  spans {spans_time:5.2f} s"
    shown += f"  peer {peer_time:5.2f} s"
    ratios = f"first/peer {peer_time / first:4.2f} (≥ 1.0)  spans/encode {second / spans_time:4.2f} (≥ 0.5)"
    if encode_ordinary is not None:
        fast, found = cast("tuple[float, list[int]]", timed(lambda: encode_ordinary(text)))
        fast = min(fast, best(repeat - 1, lambda: encode_ordinary(text)) if repeat > 1 else fast)
        shift = peer.num_special_tokens if name == "tekken" else 0  # type: ignore[attr-defined]
        if [token + shift for token in found] != ids:
            raise SystemExit(f"{name}: tiktoken's IDs differ from glassllm's")
        shown += f"  tiktoken {fast:5.2f} s"
        ratios += f"  second/tiktoken {fast / second:4.2f} (≥ 0.8)  second/peer {peer_time / second:4.2f}"
    print(shown)
    print(f"{'':24s} {ratios}")


MODEL_FILES = {
    "llama3": MODELS / "llama3" / "tokenizer.json",
    "gpt4o": MODELS / "gpt4o" / "tokenizer.json",
    "mistral-v7": MODELS / "mistral" / "mistral_instruct_tokenizer_241114.model.v7",
    "tekken": MODELS / "mistral" / "tekken_240911.json",
}


def main() -> None:
    parser = argparse.ArgumentParser(description="glassllm against each format's own library on real models")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--passes", action="store_true", help="first and second pass, spans, tiktoken (issue 32)")
    parser.add_argument("--models", nargs="+", choices=sorted(MODEL_FILES), default=sorted(MODEL_FILES))
    args = parser.parse_args()
    models = {name: MODEL_FILES[name] for name in MODEL_FILES if name in args.models}
    missing = [str(path) for path in models.values() if not path.is_file()]
    if missing:
        raise SystemExit(f"missing {', '.join(missing)}: run `bash tests/fixtures/fetch_models.sh` first")
    if args.passes:
        print(f"glassllm from {Path(sys.modules['glassllm'].__file__ or '').parent}; best of {args.repeat}")
        for corpus in ("train.txt", "heldout.txt"):
            for name, path in models.items():
                report_passes(name, path, corpus, args.repeat)
        return
    books = [(CORPORA / language / "heldout.txt").read_text(encoding="utf-8") for language in ("pt", "en")]
    lines = [line for book in books for line in book.splitlines(keepends=True)]
    size = sum(len(book.encode("utf-8")) for book in books)
    print(f"held-out books: {size:,} bytes, {len(lines):,} lines; best of {args.repeat}; ratio = peer / glassllm")
    for name, path in models.items():
        load_peer, encode_peer = peers(name, path)
        peer_kind = "tekken" if name == "tekken" else "sentencepiece" if path.suffix != ".json" else "hf"
        ours = fresh_load(f"from glassllm import load_tokenizer\nload_tokenizer({str(path)!r})")
        theirs = fresh_load(PEER_LOADS[peer_kind].format(path=str(path)))
        print(f"{name:11s} load (new)  glassllm {ours:6.2f} s   peer {theirs:6.2f} s   ratio {theirs / ours:5.2f}")
        ours = best(args.repeat, lambda path=path: load_tokenizer(path))
        theirs = best(args.repeat, load_peer)
        print(f"{name:11s} load again  glassllm {ours:6.2f} s   peer {theirs:6.2f} s   ratio {theirs / ours:5.2f}")
        tok = load_tokenizer(path)
        peer = load_peer()
        cold, ids = timed(lambda tok=tok: [tok.encode(line) for line in lines])
        peer_cold, expected = timed(lambda peer=peer, encode=encode_peer: encode(peer, lines))
        if ids != expected:
            raise SystemExit(f"{name}: glassllm's IDs differ from the peer's")
        warm = best(args.repeat, lambda tok=tok: [tok.encode(line) for line in lines])
        peer_warm = best(args.repeat, lambda peer=peer, encode=encode_peer: encode(peer, lines))
        print(
            f"{name:11s} encode cold glassllm {cold:6.2f} s   peer {peer_cold:6.2f} s   ratio {peer_cold / cold:5.2f}"
        )
        print(
            f"{name:11s} encode warm glassllm {warm:6.2f} s   peer {peer_warm:6.2f} s   ratio {peer_warm / warm:5.2f}"
            f"   ({size / warm / 1e6:.1f} MB/s)"
        )


if __name__ == "__main__":
    main()
