"""The one cache type of the library and the server: bounded, least recently used first.

Every cache of tokens (the library's chunks, the server's chunks and lines, the compared
tokenizers' counts, the semantic tokens' bands) is an :class:`LruCache`, so none grows
without bound over a long session and none empties all at once.

It keeps two generations: ``recent``, a plain dict that reads hit at C speed
(``map(cache.recent.get, keys)``), and ``older``. A read that finds an entry in the older
generation moves it to the recent one. When the recent generation reaches half the limit
it becomes the older one, and the entries left in the older one (read by no one for half
a limit of new entries) are dropped. So what is in use stays, whatever the churn, and the
cache never holds more than its limit.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["LruCache"]

_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")


class LruCache(Generic[_K, _V]):
    """At most ``limit`` entries, or ``limit`` total weight when ``weigh`` gives each
    key's weight (a line's length, say); the least recently used go first.

    >>> cache = LruCache[str, int](4)
    >>> for word in "a b c".split():
    ...     cache.put(word, len(word))
    >>> cache.get("a"), cache.get("z")
    (1, None)
    >>> len(cache)
    3
    """

    __slots__ = ("_older_weight", "_recent_weight", "_weigh", "limit", "older", "recent")

    def __init__(self, limit: int, weigh: Callable[[_K], int] | None = None) -> None:
        if limit < 2:
            raise ValueError(f"an LruCache's limit must be at least 2, not {limit}")
        self.limit = limit
        self._weigh = weigh
        self.recent: dict[_K, _V] = {}
        self.older: dict[_K, _V] = {}
        self._recent_weight = 0
        self._older_weight = 0

    def get(self, key: _K) -> _V | None:
        """The value kept for ``key``, or None; found, it becomes the most recently used."""
        value = self.recent.get(key)
        if value is None:
            value = self.older.pop(key, None)
            if value is not None:
                weight = self._weight(key)
                self._older_weight -= weight
                self._add(key, value, weight)
        return value

    def put(self, key: _K, value: _V) -> None:
        """Keep ``value`` for ``key`` (a key heavier than half the limit is not kept)."""
        if key in self.recent:
            self.recent[key] = value
            return
        weight = self._weight(key)
        if 2 * weight > self.limit:
            return
        if self.older.pop(key, None) is not None:
            self._older_weight -= weight
        self._add(key, value, weight)

    def put_new(self, keys: list[_K], values: list[_V]) -> None:
        """:meth:`put` each of ``values`` for its key in ``keys``: distinct keys that the
        cache does not hold (a first pass's new chunks). In one step where that ends the
        same, as it does while they fit in the recent generation."""
        if self._weigh is None and 2 * (self._recent_weight + len(keys)) <= self.limit:
            self.recent.update(zip(keys, values, strict=True))
            self._recent_weight += len(keys)
            return
        for key, value in zip(keys, values, strict=True):
            self.put(key, value)

    def clear(self) -> None:
        self.recent = {}
        self.older = {}
        self._recent_weight = self._older_weight = 0

    @property
    def weight(self) -> int:
        """The entries' total weight (their number when no ``weigh`` was given)."""
        return self._recent_weight + self._older_weight

    def __len__(self) -> int:
        return len(self.recent) + len(self.older)

    def __contains__(self, key: object) -> bool:
        return key in self.recent or key in self.older

    def __repr__(self) -> str:
        return f"<LruCache: {len(self)} entries, weight {self.weight} of {self.limit}>"

    def _weight(self, key: _K) -> int:
        return 1 if self._weigh is None else self._weigh(key)

    def _add(self, key: _K, value: _V, weight: int) -> None:
        if 2 * (self._recent_weight + weight) > self.limit:
            self.older = self.recent
            self._older_weight = self._recent_weight
            self.recent = {}
            self._recent_weight = 0
        self.recent[key] = value
        self._recent_weight += weight
