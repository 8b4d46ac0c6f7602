"""Random values of any remerkleable type, for differential tests against another implementation.

Lists get lengths that cross the progressive subtrees' boundaries (1, 4, 16 chunks...),
so a progressive merkleization that is right only for short lists shows.
"""

from __future__ import annotations

import random
from typing import Any

from remerkleable.basic import boolean, uint
from remerkleable.bitfields import Bitlist, Bitvector
from remerkleable.byte_arrays import ByteList, ByteVector
from remerkleable.complex import Container, List, Vector
from remerkleable.progressive import ProgressiveBitlist, ProgressiveList

MAX_ITEMS = 22
"""Composite lists: past 1 + 4 + 16 chunks, so into the fourth progressive subtree."""
MAX_BYTES = 700
MAX_BITS = 1400


def random_value(ssz_type: Any, rng: random.Random, *, depth: int = 0) -> Any:
    """A random value of ``ssz_type`` (lists shorter the deeper they sit, to stay small)."""
    if issubclass(ssz_type, boolean):
        return ssz_type(rng.random() < 0.5)
    if issubclass(ssz_type, uint):
        bits = ssz_type.type_byte_length() * 8
        return ssz_type(rng.choice([0, 1, 2**bits - 1, rng.getrandbits(bits)]))
    if issubclass(ssz_type, ByteVector):
        return ssz_type(rng.randbytes(ssz_type.type_byte_length()))
    if issubclass(ssz_type, ByteList):
        return ssz_type(rng.randbytes(rng.randint(0, min(ssz_type.limit(), MAX_BYTES))))
    if issubclass(ssz_type, Bitvector):
        return ssz_type(*(rng.random() < 0.5 for _ in range(ssz_type.vector_length())))
    if issubclass(ssz_type, Bitlist):
        length = rng.randint(0, min(ssz_type.limit(), MAX_BITS))
        return ssz_type(*(rng.random() < 0.5 for _ in range(length)))
    if issubclass(ssz_type, ProgressiveBitlist):
        return ssz_type(*(rng.random() < 0.5 for _ in range(rng.randint(0, MAX_BITS))))
    if issubclass(ssz_type, ProgressiveList):
        element = ssz_type.element_cls()
        if issubclass(element, uint) and element.type_byte_length() == 1:
            return ssz_type(rng.randbytes(_length(rng, MAX_BYTES, depth)))
        count = _length(rng, MAX_ITEMS, depth)
        return ssz_type(random_value(element, rng, depth=depth + 1) for _ in range(count))
    if issubclass(ssz_type, List):
        count = min(ssz_type.limit(), _length(rng, MAX_ITEMS, depth))
        element = ssz_type.element_cls()
        return ssz_type(random_value(element, rng, depth=depth + 1) for _ in range(count))
    if issubclass(ssz_type, Vector):
        element = ssz_type.element_cls()
        return ssz_type(
            random_value(element, rng, depth=depth + 1) for _ in range(ssz_type.vector_length())
        )
    if issubclass(ssz_type, Container):
        return ssz_type(
            **{
                name: random_value(field, rng, depth=depth + 1)
                for name, field in ssz_type.fields().items()
            }
        )
    raise TypeError(f"no random values for {ssz_type.__name__}")


def _length(rng: random.Random, most: int, depth: int) -> int:
    limit = max(1, most >> max(0, depth - 1))
    return rng.choice([0, 1, rng.randint(0, limit), limit])
