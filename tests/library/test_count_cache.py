"""The cache of files' token counts: keyed by content and tokenizer, bounded, never in the way."""

from __future__ import annotations

from glassllm import packaged
from glassllm.count_cache import CountCache, cache_path, content_digest, tokenizer_digest
from glassllm.file_tokens import LazyTokenizer, count_files


def test_it_lives_in_the_xdg_cache_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_path() == tmp_path / "glassllm" / "token-counts.sqlite3"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_path() == tmp_path / "home" / ".cache" / "glassllm" / "token-counts.sqlite3"


def test_the_cache_is_keyed_by_content_and_tokenizer_and_bounded(tmp_path):
    cache = CountCache(tmp_path / "c.sqlite3", limit=3)
    pt, en = tokenizer_digest("pt", False), tokenizer_digest("en", False)
    assert pt is not None and en is not None and pt != en != tokenizer_digest("pt", True)
    cache.put({content_digest(b"a") + pt: 1, content_digest(b"b") + pt: 2})
    assert cache.get([content_digest(b"b") + pt]) == {content_digest(b"b") + pt: 2}  # now b is the recent one
    cache.put({content_digest(b"a") + en: 3, content_digest(b"c") + pt: 4})
    assert len(cache) == 3  # the least recently used, "a" with pt, was dropped
    assert cache.get([content_digest(b) + pt for b in (b"a", b"b", b"c")]) == {
        content_digest(b"b") + pt: 2,
        content_digest(b"c") + pt: 4,
    }
    assert cache.get([content_digest(b"a") + en]) == {content_digest(b"a") + en: 3}
    assert content_digest(b"a", "jsonl") != content_digest(b"a")
    assert tokenizer_digest(str(tmp_path / "missing.json"), False) is None


def test_a_cache_that_cannot_be_opened_counts_anyway(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder", encoding="utf-8")
    cache = CountCache(blocked / "c.sqlite3")
    path = tmp_path / "a.txt"
    path.write_text("Era uma vez", encoding="utf-8")
    assert count_files([str(path)], [LazyTokenizer("pt")], cache=cache).counts == {
        str(path): [len(packaged("pt").encode("Era uma vez"))]
    }
    assert len(cache) == 0
