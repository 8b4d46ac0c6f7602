"""Deterministic "interop" secret keys for devnets and tests.

The derivation every consensus client uses for mock validators (the eth2.0-pm
"mocked start" keygen): the secret key of validator ``i`` is
``int.from_bytes(sha256(i as 32 little-endian bytes), "little") mod r``.
These keys are public knowledge; they must never hold real stake.
"""

from __future__ import annotations

from hashlib import sha256

import crypto_backend

CURVE_ORDER = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001
"""r, the order of the BLS12-381 subgroups."""


def interop_secret_key(index: int) -> int:
    """The interop secret key of validator ``index``."""
    if index < 0:
        raise ValueError(f"validator index must be non-negative, got {index}")
    digest = sha256(index.to_bytes(32, "little")).digest()
    secret = int.from_bytes(digest, "little") % CURVE_ORDER
    if secret == 0:  # probability ~2**-255; refuse rather than hand out a zero key
        raise ValueError(f"interop secret key {index} is zero")
    return secret


def interop_secret_keys(count: int, start: int = 0) -> list[int]:
    """The interop secret keys of validators ``start`` .. ``start + count - 1``."""
    return [interop_secret_key(index) for index in range(start, start + count)]


def interop_keypair(index: int) -> tuple[int, bytes]:
    """(secret key, compressed public key) of validator ``index``."""
    secret = interop_secret_key(index)
    return secret, crypto_backend.sk_to_pk(secret)
