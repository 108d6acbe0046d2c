"""Characters shown to a person: the one rule for text that would vanish or blend in.

A piece can hold characters that print as nothing (a zero-width joiner), as a plain
space (a no-break space), that break the line (``\\n``, U+2028), or that draw on the
character before them (a combining accent). Wherever glassllm shows pieces and chunks —
the command line's ``inspect``, ``explain`` and ``compare``, the language server's hover,
its pages and its diagnostics — :func:`visible` writes them so that every code point can
be seen and counted:

- ``\\n``, ``\\r`` and ``\\t`` as those two-character escapes, and so ``\\`` as ``\\\\``
  (otherwise a piece ``\\`` + ``n`` would read as a line break);
- other control, format, separator, private-use and unassigned characters, spaces other
  than the ASCII space, and the invisible marks that only select a variant (variation
  selectors, the combining grapheme joiner) as ``⟨U+XXXX NAME⟩`` (``⟨U+E000⟩`` where
  Unicode gives no name);
- a combining mark with nothing to sit on (at the start, or after a space, ``▁`` or a
  character written out) on a dotted circle, ``◌́``, as type specimens show marks; after
  a letter, digit or symbol it stays, so ``हि`` and ``á`` (NFD) read as they are.

The ASCII space and the marker ``▁`` stay as they are: pieces never hold a space (it
became ``▁``), and the text around pieces needs spaces.
"""

from __future__ import annotations

import unicodedata

__all__ = ["DOTTED_CIRCLE", "visible"]

DOTTED_CIRCLE = "\u25cc"

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}
# Unicode gives controls no name, only aliases; these are the formal aliases of the
# controls a text file is likely to hold.
_CONTROL_NAMES = {
    0x00: "NULL",
    0x0B: "LINE TABULATION",
    0x0C: "FORM FEED",
    0x1B: "ESCAPE",
    0x7F: "DELETE",
    0x85: "NEXT LINE",
}
# Marks that draw nothing: they select a glyph variant or join graphemes.
_INVISIBLE_MARKS = (range(0x034F, 0x0350), range(0x180B, 0x1810), range(0xFE00, 0xFE10), range(0xE0100, 0xE01F0))


def visible(text: str) -> str:
    """``text`` with every character that would vanish or blend in written out (the
    module's docstring has the rule): ``visible("a\\u2028b")`` is
    ``"a⟨U+2028 LINE SEPARATOR⟩b"``, ``visible("\\u0301")`` is ``"◌́"``."""
    out: list[str] = []
    base = False  # whether the last character shown can carry a combining mark
    for character in text:
        if character in _ESCAPES:
            out.append(_ESCAPES[character])
            base = False
        elif _written_out(character):
            out.append(_code_point(character))
            base = False
        elif unicodedata.category(character)[0] == "M":
            out.append(character if base else DOTTED_CIRCLE + character)
            base = True
        else:
            out.append(character)
            base = character not in " \u2581"
    return "".join(out)


def _written_out(character: str) -> bool:
    category = unicodedata.category(character)
    if category[0] in "CZ":
        return character != " "
    return category == "Mn" and any(ord(character) in marks for marks in _INVISIBLE_MARKS)


def _code_point(character: str) -> str:
    code = ord(character)
    name = unicodedata.name(character, "") or _CONTROL_NAMES.get(code, "")
    return f"⟨U+{code:04X} {name}⟩" if name else f"⟨U+{code:04X}⟩"
