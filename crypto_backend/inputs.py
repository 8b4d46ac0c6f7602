"""Coercion of caller input: bytes-like values, lists of them, secret keys.

A wrong Python type is a programming error and raises ``TypeError``; a value of
the right type but the wrong content (a bad key, an out-of-range secret) is the
ciphersuite's business (``BlsError`` or a false verdict).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from crypto_backend.constants import CURVE_ORDER
from crypto_backend.errors import BlsError

_BYTES_LIKE = (bytes, bytearray, memoryview)


def as_bytes(value: Any, what: str) -> bytes:
    if type(value) is bytes:
        return value
    if isinstance(value, _BYTES_LIKE):
        return bytes(value)
    raise TypeError(f"{what} must be bytes, not {type(value).__name__}")


def as_bytes_list(values: Any, what: str) -> Sequence[bytes]:
    """A sequence of bytes values; a single bytes value is refused, not split into ints.

    A list or tuple that already holds only ``bytes`` is returned as it is (the
    common case, and a committee of 512 keys should not be copied).
    """
    if type(values) in (list, tuple) and all(type(value) is bytes for value in values):
        return values
    if isinstance(values, (*_BYTES_LIKE, str)) or not isinstance(values, Iterable):
        raise TypeError(f"{what} must be a sequence of bytes values, not {type(values).__name__}")
    return [as_bytes(value, f"each of {what}") for value in values]


def as_secret_key(sk: Any) -> int:
    if not isinstance(sk, int) or isinstance(sk, bool):
        raise TypeError(f"a secret key must be an int, not {type(sk).__name__}")
    if not 0 < sk < CURVE_ORDER:
        raise BlsError("a secret key must be in [1, r - 1]")
    return sk
