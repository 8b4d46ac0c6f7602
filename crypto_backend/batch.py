"""The batch forms: ``verify_signature_sets`` and ``sign_many``.

Batch verification checks, for random 64-bit weights r_i drawn from ``secrets``
(the OS) at call time,

    e(sum r_i S_i, g1) == prod over distinct messages m of e(sum_{i: m_i = m} r_i PK_i, H(m))

where PK_i is the (validated, non-identity) sum of set i's keys. It costs one
hash and one Miller loop per distinct message, two multi-scalar sums and one
final exponentiation, instead of two Miller loops and a final exponentiation per
set. If every set is valid it holds; if any set is invalid it holds with
probability at most 2**-64 over the weights, which the attacker cannot know in
advance. So the verdict equals the conjunction of the single checks, and a
false verdict says only that some set failed: nothing about which, or how many.

On the native backend a large batch is cut into chunks checked in parallel on
the lanes (threads), each chunk its own random linear combination (its own
weights' share, signature sum and final exponentiation); the batch is true only
if every chunk is.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from crypto_backend.backend import CheckedSet
from crypto_backend.constants import BATCH_WEIGHT_BITS
from crypto_backend.inputs import as_bytes, as_bytes_list, as_secret_key
from crypto_backend.selection import current

__all__ = ["CheckedSet", "SignatureSet", "normalize_sets", "random_weight", "sign_many",
           "verify_signature_sets"]


class SignatureSet(NamedTuple):
    """One check of a batch: ``signature`` is the aggregate of every key's signature
    of ``message``. Any 3-item sequence in this order is accepted too."""

    pubkeys: Sequence[bytes]
    message: bytes
    signature: bytes


def normalize_sets(sets: Iterable[Sequence[Any]]) -> list[CheckedSet]:
    if isinstance(sets, (bytes, bytearray, memoryview, str)) or not isinstance(sets, Iterable):
        raise TypeError("sets must be an iterable of (pubkeys, message, signature)")
    checked = []
    for index, item in enumerate(sets):
        try:
            pubkeys, message, signature = item
        except (TypeError, ValueError):
            raise TypeError(
                f"signature set {index} must be a (pubkeys, message, signature) sequence"
            ) from None
        checked.append(
            (
                tuple(as_bytes_list(pubkeys, f"pubkeys of set {index}")),
                as_bytes(message, f"message of set {index}"),
                as_bytes(signature, f"signature of set {index}"),
            )
        )
    return checked


def random_weight() -> int:
    """A fresh weight from the OS: 64 bits, never zero."""
    while True:
        weight = secrets.randbits(BATCH_WEIGHT_BITS)
        if weight:
            return weight


def verify_signature_sets(sets: Iterable[Sequence[Any]]) -> bool:
    """True only if every set verifies (as ``fast_aggregate_verify``); False for an
    empty batch. A false verdict implies nothing about any single set."""
    checked = normalize_sets(sets)
    if not checked:
        return False
    weights = [random_weight() for _ in checked]
    return current().verify_signature_sets(checked, weights)


def sign_many(sks: Iterable[int], message: bytes) -> list[bytes]:
    """``[sign(sk, message) for sk in sks]``, hashing the message once. Every key is
    range-checked before anything is signed."""
    if not isinstance(sks, Iterable):
        raise TypeError("sks must be an iterable of secret keys")
    secret_keys = [as_secret_key(sk) for sk in sks]
    text = as_bytes(message, "message")
    if not secret_keys:
        return []
    return current().sign_many(secret_keys, text)
