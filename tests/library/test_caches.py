"""LruCache keeps at most its limit and what is in use; the library keeps no cache that
grows without one (issue 21)."""

from __future__ import annotations

import random

import pytest

from glassllm import packaged
from glassllm.caches import LruCache


def sizes(owner: object) -> dict[str, int]:
    """The size of every container ``owner`` holds in an attribute, by name."""
    names = [*vars(owner)] if hasattr(owner, "__dict__") else []
    names += [name for cls in type(owner).__mro__ for name in getattr(cls, "__slots__", ())]
    found = {name: getattr(owner, name, None) for name in names}
    return {name: len(value) for name, value in found.items() if isinstance(value, dict | list | set | LruCache)}


def new_words(count: int, seed: int = 21) -> str:
    chooser = random.Random(seed)
    return " ".join("".join(chooser.choices("abcdefghijklmnopqrstuvwxyzãéç", k=9)) for _ in range(count))


def test_only_bounded_caches_grow_with_new_text():
    tokenizer = packaged("pt")
    tokenizer.encode_spans("warm")
    before = sizes(tokenizer)
    tokenizer.encode(new_words(500))
    tokenizer.encode_spans(new_words(500, seed=22))
    after = sizes(tokenizer)
    grew = {name for name in after if after[name] != before[name]}
    assert grew, "the chunk caches should have grown"
    assert all(isinstance(getattr(tokenizer, name), LruCache) for name in grew), grew


@pytest.mark.parametrize("weigh", [None, len])
def test_the_cache_never_holds_more_than_its_limit(weigh):
    cache: LruCache[str, int] = LruCache(1000, weigh)
    for number in range(20_000):
        cache.put(f"key {number}", number)
        assert cache.weight <= 1000
    assert len(cache) >= (1000 // 2) // (len("key 19999") if weigh else 1)


def test_what_is_in_use_stays_and_the_rest_goes():
    cache: LruCache[int, int] = LruCache(100)
    for number in range(10_000):
        cache.put(number, number)
        assert number < 7 or cache.get(7) == 7
    assert cache.get(7) == 7
    assert cache.get(5) is None and 5 not in cache
    assert len(cache) <= 100


def test_a_key_heavier_than_half_the_limit_is_not_kept():
    cache: LruCache[str, int] = LruCache(10, len)
    cache.put("x" * 6, 1)
    assert cache.get("x" * 6) is None and cache.weight == 0
    with pytest.raises(ValueError, match="at least 2"):
        LruCache(1)


@pytest.mark.parametrize("weigh", [None, len])
@pytest.mark.parametrize("batch", [1, 7, 49, 50, 51, 120])
def test_new_keys_put_at_once_end_as_put_one_by_one(weigh, batch):
    one_by_one: LruCache[str, int] = LruCache(100, weigh)
    at_once: LruCache[str, int] = LruCache(100, weigh)
    keys = [f"k{number}" for number in range(300)]
    for start in range(0, len(keys), batch):
        part = keys[start : start + batch]
        for key in part:
            one_by_one.put(key, len(key))
        at_once.put_new(part, [len(key) for key in part])
        assert (at_once.recent, at_once.older, at_once.weight) == (
            one_by_one.recent,
            one_by_one.older,
            one_by_one.weight,
        )
