"""Characters per token of the packaged tokenizers on the held-out files of both languages.

    python3 tests/benchmarks/bench_compression.py

Prints the Markdown table docs/benchmarks.md shows. The held-out books are not in either
training file (see corpora/SOURCES.md).
"""

from __future__ import annotations

from pathlib import Path

from glassllm import PACKAGED, packaged

CORPORA = Path(__file__).resolve().parents[2] / "corpora"


def main() -> None:
    texts = {language: (CORPORA / language / "heldout.txt").read_text(encoding="utf-8") for language in PACKAGED}
    print("| tokenizer | " + " | ".join(f"`{language}/heldout.txt`" for language in texts) + " |")
    print("|---|" + "---:|" * len(texts))
    for name, language_name in PACKAGED.items():
        tok = packaged(name)
        cells = []
        for text in texts.values():
            ids = tok.encode(text)
            unknown = ids.count(tok.unk_id)
            cells.append(f"{len(text) / len(ids):.2f} chars/token ({len(ids):,} tokens, {unknown} `<unk>`)")
        print(f"| `{name}` ({language_name}) | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
