#!/usr/bin/env python3
"""Build the four corpus files (pt/ and en/, train and held-out) from public-domain sources.

This is the script that produced corpora/pt/*.txt and corpora/en/*.txt; SOURCES.md next
to it says where each text comes from, how it is cleaned, and the sha256 of each output.
Every source is read straight out of a git snapshot with `git show COMMIT:PATH`, so
nothing needs to be checked out. Standard library only (Python >= 3.9), plus the `git`
binary. From the repository's root:

    python3 corpora/build_corpora.py --mirror-root ROOT --out corpora

ROOT holds one git directory per source repository, at OWNER+NAME/repo or
OWNER+NAME/repo/.git (`git clone --bare` of each into OWNER+NAME/repo will do). The
commits read are pinned in SOURCES below; the script stops if one is missing.

All four files are UTF-8, Unicode NFC, LF line endings, no BOM, one paragraph per line,
and one empty line between works (books, stories or tales).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import unicodedata
import xml.etree.ElementTree as ET
from typing import NamedTuple, TypeVar

# key -> (GitHub repository, pinned commit)
SOURCES = {
    "machado": ("Henric234/MachadoScraper", "446021d695f706d173ca988db0b988fc4ca6e05d"),
    "eltec_por": ("COST-ELTeC/ELTeC-por", "8886868916311001a8a8dd99aa6f18f6a2c68408"),
    "eltec_eng": ("COST-ELTeC/ELTeC-eng", "3db3b6738a836f0e1b276b6c9703e42f4297f978"),
    "lpodol": ("lpodol/books", "8f0711ffa8a74c154fb1515f1b019b47a3897e65"),
    "pace": ("joeynelson42/PaceTexts", "980af5ff6e760983420b35978c29721e329bb333"),
    "eaton": ("MarkEEaton/bot-tutorial-ala", "6268b2ba1d25259d54fdcd5924006eda92a4f290"),
}

# Machado's novels as book editions; the serialized "Quincas Borba (A Estação)" is left
# out because it duplicates Quincas Borba.
MACHADO_NOVELS = [
    "ressurreicao_14",
    "a-mao-e-a-luva_14",
    "helena_23",
    "iaia-garcia_18",
    "memorias-postumas-de-bras-cubas_32",
    "quincas-borba_39",
    "dom-casmurro_34",
    "esau-e-jaco_35",
    "memorial-de-aires_27",
]
# The story collections Machado published as books, spelled as line 2 of each story's
# file names them. "Páginas Recolhidas" (1899) is kept apart for the held-out file.
MACHADO_TRAIN_COLLECTIONS = [
    "Contos Fluminenses",
    "Histórias da Meia Noite",
    "Papéis Avulsos",
    "Histórias Sem Data",
    "Várias Histórias",
    "Relíquias de Casa Velha",
]
MACHADO_HELDOUT_COLLECTIONS = ["Páginas Recolhidas"]
# Stories whose line 3 is a modern editor's explanatory note where a title would be.
MACHADO_EDITORIAL_LINE3 = {
    "a-serenissima-republica_2",
    "o-anel-de-policrates_2",
    "uma-visita-de-alcibiades_2",
}
# A story's first lines that belong to the edition, not to Machado.
MACHADO_EDITION_HEAD = re.compile(r"^(\*?\s*Este conto foi .*publicado|Nota$|\*+$)")
MACHADO_DROP_ANYWHERE = re.compile(r"^(\(Continua\.?\)|\(Continuação\.?\)|\*+|Ver)$")
# ELTeC-por novels in modern spelling whose authors died by 1935.
ELTEC_POR_TRAIN = [
    "POR0008_EcaQue_Ramires",
    "POR0063_RamOrt_Misterio",
    "POR0051_RauBra_Humus",
    "POR0038_AleHer_Bobo",
    "POR0060_FiaAlm_Ruiva",
    "POR0019_MarSC_Lucio",
    "POR0021_ConFic_Eleicao",
    "POR0043_LuiMag_Soares",
    "POR0052_RauBra_Farsa",
]
ELTEC_POR_HELDOUT = ["POR0089_AlvCar_Canibais"]

ELTEC_ENG_TRAIN = [
    "ENG18471_Bronte",
    "ENG18540_Dickens",
    "ENG18610_Eliot",
    "ENG18641_Stretton",
    "ENG18740_Ouida",
    "ENG18900_Doyle",
    "ENG18920_Grossmith",
    "ENG18952_Wells",
    "ENG18953_Macdonald",
    "ENG19060_Nesbit",
    "ENG19080_Chesterton",
    "ENG19150_Buchan",
    "ENG19170_Conrad",
]
# Nesbit's novel ends with the printer's colophon.
ELTEC_ENG_DROP_TAIL = (r"^The Gresham Press",)


class GutenbergText(NamedTuple):
    """A hard-wrapped Project Gutenberg text, cut from its first kept line to its first dropped line."""

    key: str
    path: str
    start: str
    end: str | None
    drop_brackets: bool = False  # the transcriber's [glosses]


PG_END = r"^End of (the )?Project Gutenberg"
PG_EN_TRAIN = [
    GutenbergText("lpodol", "andersen.txt", r"^THE EMPEROR'S NEW CLOTHES$", PG_END),
    GutenbergText("lpodol", "aesop.txt", r"^The Wolf And The Lamb$", r"^LIFE OF AESOP$"),
    GutenbergText("lpodol", "jungle.txt", r"^Mowgli's Brothers$", PG_END),
    GutenbergText("lpodol", "peter.txt", r"^Chapter 1 PETER BREAKS THROUGH$", PG_END, drop_brackets=True),
    GutenbergText("lpodol", "aliceInWonderland.txt", r"^CHAPTER I\. Down the Rabbit-Hole$", PG_END),
    GutenbergText("pace", "TheAdventuresOfTomSawyer.txt", r"^PREFACE$", None),
]
# Both are one paragraph per line already.
EATON_LITTLE_WOMEN = "data/little_women.txt"
EATON_GRIMM = "data/grimms_fairy_tales.txt"
HELDOUT_TARGET_BYTES = 200_000

CHAR_MAP = {
    "\u00a0": " ",
    "\u2007": " ",
    "\u2009": " ",
    "\u200a": " ",
    "\u202f": " ",
    "\u2002": " ",
    "\u2003": " ",
    "\t": " ",
    "\u00ad": "",
    "\u200b": "",
    "\u200c": "",
    "\u200d": "",
    "\ufeff": "",
    "\u2060": "",
    "\u2010": "-",
    "\u2011": "-",
    # Some sources write the apostrophe as a grave accent or a spacing acute.
    "`": "'",
    "\u00b4": "'",
}
CHAR_RE = re.compile("[" + "".join(CHAR_MAP) + "]")
TEI = "{http://www.tei-c.org/ns/1.0}"
TEI_LINES = {TEI + "p", TEI + "head", TEI + "l", TEI + "trailer"}

Work = list[str]
T = TypeVar("T")


class Snapshots:
    """The pinned commits of the source repositories, under one mirror root."""

    def __init__(self, root: str):
        self.root = root

    def git_dir(self, key: str) -> str:
        base = os.path.join(self.root, SOURCES[key][0].replace("/", "+"), "repo")
        for candidate in (os.path.join(base, ".git"), base):
            if os.path.isfile(os.path.join(candidate, "HEAD")):
                return candidate
        sys.exit(f"no git dir for {SOURCES[key][0]} under {base}")

    def git(self, key: str, *arguments: str) -> str:
        found = subprocess.run(["git", "--git-dir", self.git_dir(key), *arguments], check=True, capture_output=True)
        return found.stdout.decode("utf-8")

    def check_pinned(self) -> None:
        for key, (repository, commit) in SOURCES.items():
            found = subprocess.run(["git", "--git-dir", self.git_dir(key), "cat-file", "-e", commit + "^{commit}"])
            if found.returncode != 0:
                sys.exit(f"{repository}: pinned commit {commit} is missing")

    def show(self, key: str, path: str) -> str:
        return self.git(key, "show", f"{SOURCES[key][1]}:{path}")

    def ls(self, key: str, prefix: str) -> list[str]:
        return self.git(key, "ls-tree", "-r", "--name-only", SOURCES[key][1], prefix).split("\n")


def norm_line(paragraph: str) -> str:
    paragraph = CHAR_RE.sub(lambda match: CHAR_MAP[match.group(0)], paragraph)
    paragraph = "".join(ch for ch in paragraph if ch == "\n" or unicodedata.category(ch) != "Cc")
    return re.sub(r" {2,}", " ", paragraph).strip()


def norm_text(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    return unicodedata.normalize("NFC", text)


def finish(paragraphs: list[str]) -> Work:
    """The paragraphs normalised, without the ones left empty."""
    normalised = (unicodedata.normalize("NFC", norm_line(paragraph)) for paragraph in paragraphs)
    return [paragraph for paragraph in normalised if paragraph]


def collection_of(line: str) -> str:
    """The collection's name from a story's line 2, without its "(year)"."""
    return re.sub(r"\s*\(.*$", "", line.replace("\t", " ")).strip()


def machado_work(snapshots: Snapshots, name: str) -> Work:
    """A novel or a story from the Casa de Rui Barbosa edition, without the edition's notes."""
    lines = norm_text(snapshots.show("machado", f"txts/html_{name}.html.txt")).split("\n")
    if lines[0].startswith("NOTA DESTA EDIÇÃO ELETRÔNICA"):
        # A novel opens with the edition's note, its credits line and a "Ver" link.
        assert lines[2].strip() == "Ver", name
        body = lines[3:]
    else:
        # A story opens with "Parte de" and its collection's line.
        assert lines[0].strip() == "Parte de", name
        body = lines[2:]
        if name in MACHADO_EDITORIAL_LINE3:
            body = body[1:]
        body = [line for line in body[:4] if not MACHADO_EDITION_HEAD.match(line.strip())] + body[4:]
    kept = []
    for line in body:
        line = line.strip()
        if not line or MACHADO_DROP_ANYWHERE.match(line):
            continue
        # The star of a footnote link after a title.
        kept.append(re.sub(r"(?<![*\s])\*$|\s+\*$", "", line))
    return finish(kept)


def machado_collections(snapshots: Snapshots) -> dict[str, list[str]]:
    """Each collection's story file stems, in the repository's order."""
    collections: dict[str, list[str]] = {}
    for path in snapshots.ls("machado", "txts/"):
        if not path.endswith(".html.txt"):
            continue
        first = snapshots.show("machado", path).split("\n", 2)
        if first[0].strip() != "Parte de":
            continue
        stem = path[len("txts/html_") : -len(".html.txt")]
        collections.setdefault(collection_of(first[1]), []).append(stem)
    return collections


def strip_notes(element: ET.Element) -> None:
    """Remove every <note> under element, keeping the text that follows each."""
    children = list(element)
    for i, child in enumerate(children):
        if child.tag == TEI + "note":
            tail = child.tail or ""
            if i == 0:
                element.text = (element.text or "") + tail
            else:
                children[i - 1].tail = (children[i - 1].tail or "") + tail
            element.remove(child)
        else:
            strip_notes(child)


def tei_lines(element: ET.Element, out: list[str]) -> None:
    """One line for each paragraph, heading, verse line or trailer, whitespace collapsed."""
    if element.tag in TEI_LINES:
        line = re.sub(r"\s+", " ", "".join(element.itertext())).strip()
        if line:
            out.append(line)
        return
    for child in element:
        tei_lines(child, out)


def eltec_work(snapshots: Snapshots, key: str, name: str, drop_tail: tuple[str, ...] = ()) -> Work:
    """A novel's <body>; its <front> (title pages) and <back> are left out."""
    root = ET.fromstring(snapshots.show(key, f"level1/{name}.xml").encode("utf-8"))
    lines: list[str] = []
    for text in root.iter(TEI + "text"):
        for body in text.findall(TEI + "body"):
            strip_notes(body)
            tei_lines(body, lines)
    lines = [norm_text(line) for line in lines]
    while lines and any(re.match(pattern, lines[-1]) for pattern in drop_tail):
        lines.pop()
    return finish(lines)


def pg_unwrap(text: str) -> list[str]:
    """Hard-wrapped blocks joined back into paragraphs; an indented block (verse) keeps its lines."""
    paragraphs = []
    for block in re.split(r"\n\s*\n", text):
        lines = [line for line in block.split("\n") if line.strip()]
        if not lines:
            continue
        if all(re.match(r"^\s{2,}\S", line) for line in lines):
            paragraphs.extend(line.strip() for line in lines)
        else:
            paragraphs.append(" ".join(line.strip() for line in lines))
    return paragraphs


def pg_clean_paragraphs(paragraphs: list[str], drop_brackets: bool = False) -> list[str]:
    """Without footnotes, illustration tags, ruled lines, footnote stars and _italics_ marks."""
    out = []
    for paragraph in paragraphs:
        if re.match(r"^\[(Footnote|Illustration|\*)", paragraph) or re.match(r"^\*\s*\S", paragraph):
            continue
        if re.match(r"^_+$", paragraph.strip()):
            continue
        paragraph = paragraph.replace("[*]", "")
        paragraph = re.sub(r"\s*\[\*[^\]]*\]", "", paragraph)
        paragraph = re.sub(r'(?<=[\w.,;:!?"\'])\*+', "", paragraph)
        paragraph = re.sub(r"\s\*(?=\s|$)", "", paragraph)
        # Italics markers, mid-word ones too.
        paragraph = paragraph.replace("_", "")
        if drop_brackets:
            paragraph = re.sub(r"\s*\[[^\]]*\]", "", paragraph)
            # A gloss whose brackets span paragraphs: drop the paragraph with it.
            if "[" in paragraph or "]" in paragraph:
                continue
        out.append(paragraph)
    return out


def pg_work(snapshots: Snapshots, source: GutenbergText) -> Work:
    lines = norm_text(snapshots.show(source.key, source.path)).split("\n")
    start = next(k for k, line in enumerate(lines) if re.match(source.start, line.strip()))
    end = len(lines)
    if source.end:
        end = next(k for k, line in enumerate(lines) if k > start and re.match(source.end, line.strip()))
    text = "\n".join(lines[start:end])
    if source.drop_brackets:
        # Glosses wrapped over several lines, before unwrapping splits them up.
        text = re.sub(r"\[[^\]]*\]", lambda match: "" if "\n\n" not in match.group(0) else match.group(0), text)
    return finish(pg_clean_paragraphs(pg_unwrap(text), source.drop_brackets))


def eaton_work(snapshots: Snapshots, path: str) -> Work:
    lines = norm_text(snapshots.show("eaton", path)).split("\n")
    # The file ends with "*****", "Source: http://www.gutenberg.org/ebooks/N" and "Reformatted…".
    last = max(i for i, line in enumerate(lines) if re.match(r"^\*{3,}\s*$", line))
    return finish(pg_clean_paragraphs(lines[:last]))


def grimm_tales(snapshots: Snapshots) -> list[Work]:
    """Grimms' Fairy Tales (PG #2591) split into tales at their upper-case titles."""
    paragraphs = eaton_work(snapshots, EATON_GRIMM)
    assert paragraphs[0] == "THE BROTHERS GRIMM FAIRY TALES"
    tales: list[Work] = []
    for paragraph in paragraphs[1:]:
        # Two tales have sections with upper-case headings of their own.
        if re.match(r"^[A-Z][A-Z' ,.-]+$", paragraph) and paragraph not in ("FIRST STORY", "SECOND STORY"):
            tales.append([paragraph])
        else:
            tales[-1].append(paragraph)
    return tales


def interleave(groups: list[list[T]]) -> list[T]:
    """Round-robin over the groups, so that any prefix of the file mixes sources."""
    out: list[T] = []
    taken = [0] * len(groups)
    while any(taken[g] < len(groups[g]) for g in range(len(groups))):
        for g in range(len(groups)):
            if taken[g] < len(groups[g]):
                out.append(groups[g][taken[g]])
                taken[g] += 1
    return out


def write(path: str, works: list[Work]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    text = "\n\n".join("\n".join(work) for work in works if work) + "\n"
    text = unicodedata.normalize("NFC", text)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    print(f"{path}: {len(text.encode('utf-8'))} bytes, {text.count(chr(10))} lines, {len(works)} works")


def build_pt(snapshots: Snapshots, out: str) -> None:
    collections = machado_collections(snapshots)
    novels = [machado_work(snapshots, name) for name in MACHADO_NOVELS]
    stories = [machado_work(snapshots, stem) for c in MACHADO_TRAIN_COLLECTIONS for stem in collections[c]]
    eltec = [eltec_work(snapshots, "eltec_por", name) for name in ELTEC_POR_TRAIN]
    # Stories are short: they take their turn 6 at a time, so that the round-robin stays balanced.
    story_groups = [stories[i : i + 6] for i in range(0, len(stories), 6)]
    units = interleave([[[work] for work in novels], [[work] for work in eltec], story_groups])
    write(os.path.join(out, "pt", "train.txt"), [work for unit in units for work in unit])

    heldout = [machado_work(snapshots, stem) for c in MACHADO_HELDOUT_COLLECTIONS for stem in collections[c]]
    heldout += [eltec_work(snapshots, "eltec_por", name) for name in ELTEC_POR_HELDOUT]
    write(os.path.join(out, "pt", "heldout.txt"), heldout)


def build_en(snapshots: Snapshots, out: str) -> None:
    children = [pg_work(snapshots, source) for source in PG_EN_TRAIN]
    children.append(eaton_work(snapshots, EATON_LITTLE_WOMEN))
    eltec = [eltec_work(snapshots, "eltec_eng", name, ELTEC_ENG_DROP_TAIL) for name in ELTEC_ENG_TRAIN]
    write(os.path.join(out, "en", "train.txt"), interleave([children, eltec]))

    heldout, size = [], 0
    for tale in grimm_tales(snapshots):
        if size >= HELDOUT_TARGET_BYTES:
            break
        heldout.append(tale)
        # The tale's lines and the empty line after it.
        size += len("\n".join(tale).encode("utf-8")) + 2
    write(os.path.join(out, "en", "heldout.txt"), heldout)


def main() -> None:
    parser = argparse.ArgumentParser(description="Build corpora/pt and corpora/en from the pinned sources.")
    parser.add_argument("--mirror-root", required=True, help="the folder of OWNER+NAME/repo git directories")
    parser.add_argument("--out", required=True, help="the folder to write pt/ and en/ in")
    arguments = parser.parse_args()
    snapshots = Snapshots(arguments.mirror_root)
    snapshots.check_pinned()
    build_pt(snapshots, arguments.out)
    build_en(snapshots, arguments.out)


if __name__ == "__main__":
    main()
