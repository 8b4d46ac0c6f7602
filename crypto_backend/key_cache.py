"""Bounded per-process cache of validated public keys, keyed by their 48 bytes.

Decoding a key costs a square root and a subgroup check (~70 µs on blst); a
validator client sees the same few thousand keys over and over, so each key is
decoded once per process. Refusals (malformed, off-curve, off-subgroup,
identity) are cached too, as ``None``, so repeated bad input costs one lookup.
The cache is an LRU: a flood of new keys evicts old ones but never grows memory
past ``maxsize`` entries. ``functools.lru_cache`` is thread-safe and does the
lookup in C (~0.1 µs), which matters when a committee of 512 keys is summed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Final, Generic, NamedTuple, TypeVar

#: About 26 MB at most on blst (~400 bytes an entry); far more than one
#: client's validators plus the keys a simulated chain checks.
KEY_CACHE_SIZE: Final = 1 << 16

Point = TypeVar("Point")


class CacheStats(NamedTuple):
    hits: int
    misses: int
    size: int
    maxsize: int


class KeyCache(Generic[Point]):
    """``lookup(pubkey)`` returns the validated point, or ``None`` when the key is refused."""

    def __init__(self, validate: Callable[[bytes], Point | None], maxsize: int = KEY_CACHE_SIZE):
        if maxsize < 1:
            raise ValueError("key cache size must be at least 1")
        self.lookup: Callable[[bytes], Point | None] = functools.lru_cache(maxsize=maxsize)(
            validate
        )

    def clear(self) -> None:
        self.lookup.cache_clear()  # type: ignore[attr-defined]

    def stats(self) -> CacheStats:
        info = self.lookup.cache_info()  # type: ignore[attr-defined]
        return CacheStats(info.hits, info.misses, info.currsize, info.maxsize)
