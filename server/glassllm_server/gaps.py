"""Where a per-line list still holds None: a line without its tokens, or without a count.

A document's tokens and a compared tokenizer's counts are filled in lazily, line by line,
and a request that needs them all first looks for the lines left without. After an edit
they are the few lines it touched, anywhere in a document of thousands: :class:`Gaps`
keeps their number and, while they are few, the lines themselves, so finding the first
costs those lines, not a search through the list (a step per line, growing with the
document). After a document opens, every line is a gap: then the first is searched
for, from where the last search stopped, as the lines fill in order.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

__all__ = ["Gaps"]

# More gaps than this (a document just opened, a large paste) are searched for instead.
KNOWN_LIMIT = 256


class Gaps:
    """The Nones of one per-line list: how many, and which while they are few.

    The owner of the list says when it fills a gap (:meth:`filled`) or makes one
    (:meth:`emptied`); :meth:`replaced` carries the gaps through an edit.
    """

    __slots__ = ("count", "known", "searched")

    def __init__(self, count: int, known: list[int] | None) -> None:
        self.count = count
        # Every gap's line (some maybe filled since: they are dropped when next read),
        # or None when there are too many to keep: then they are searched for.
        self.known = known
        self.searched = 0  # when searching: no gap before this line

    @classmethod
    def everywhere(cls, line_count: int) -> Gaps:
        """The gaps of a list that is all None."""
        return cls(line_count, [] if line_count == 0 else None)

    def first(self, values: Sequence[object]) -> int:
        """The first gap of ``values`` (the list these gaps describe); its length when none."""
        if not self.count:
            self.known = []
            return len(values)
        known = self.known
        if known is None:
            # list.index runs in C, from where the last search stopped.
            self.searched = values.index(None, self.searched)  # type: ignore[attr-defined]
            return self.searched
        # A line can be in twice: emptied again after it was filled.
        known = self.known = [line for line in dict.fromkeys(known) if values[line] is None]
        assert len(known) == self.count, f"{len(known)} gaps known of {self.count}"
        return min(known)

    def last(self, values: Sequence[object]) -> int:
        """The last gap of ``values`` (the list these gaps describe); -1 when none."""
        if not self.count:
            return -1
        if self.known is None:
            # From the end, in C.
            return len(values) - 1 - operator.indexOf(reversed(values), None)
        self.first(values)  # drops the gaps filled since
        known = self.known
        assert known, "first() keeps the known gaps"
        return max(known)

    def filled(self, gaps: int = 1) -> None:
        """A gap (``gaps`` of them) got its value."""
        self.count -= gaps

    def emptied(self, line: int) -> None:
        """Line ``line`` lost its value."""
        self.count += 1
        self._add(line)

    def replaced(self, gone: int, first: int, stop: int, new_count: int) -> Gaps:
        """The gaps after lines ``first..stop-1``, ``gone`` of them gaps, were replaced by
        ``new_count`` lines without values."""
        count = self.count - gone + new_count
        known = self.known
        if known is None or len(known) + new_count > KNOWN_LIMIT:
            following = Gaps(count, None)
            following.searched = min(self.searched if known is None else 0, first)
            return following
        shift = new_count - (stop - first)
        kept = [line if line < first else line + shift for line in known if not first <= line < stop]
        return Gaps(count, kept + list(range(first, first + new_count)))

    def _add(self, line: int) -> None:
        known = self.known
        if known is None:
            self.searched = min(self.searched, line)
        elif len(known) < KNOWN_LIMIT:
            known.append(line)
        else:
            self.known = None
            self.searched = 0
