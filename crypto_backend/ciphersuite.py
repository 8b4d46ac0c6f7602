"""The functions of the consensus BLS ciphersuite, one call at a time.

Each public function reads the selected backend once and runs the ``*_with``
form, which takes the backend explicitly (the lanes and the batch use those).
Rules kept here, whatever the library does:

- a public key is valid only if its encoding is canonical, the point is in G1
  and it is not the identity (KeyValidate); every verify path checks every key
  this way before any pairing, and refuses an aggregate key that sums to the
  identity (keys P and -P);
- a signature is valid only if its encoding is canonical and the point is in G2;
- malformed input to a function that returns bytes raises ``BlsError``; a
  function that returns a verdict answers False instead.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from itertools import repeat
from typing import Any

from crypto_backend.backend import Backend
from crypto_backend.constants import DST, G2_POINT_AT_INFINITY
from crypto_backend.errors import BlsError
from crypto_backend.inputs import as_bytes, as_bytes_list, as_secret_key
from crypto_backend.selection import current

AnyBackend = Backend[Any, Any]


# -- internals on an explicit backend --


def aggregate_key_with(backend: AnyBackend, pubkeys: Sequence[bytes]) -> Any | None:
    """Sum of validated keys, or None if the list is empty, any key is refused, or
    the sum is the identity."""
    if not pubkeys:
        return None
    # Both passes run in C: a committee of 512 cached keys costs ~60 µs here.
    points = list(map(backend.pubkey, pubkeys))
    if any(map(operator.is_, points, repeat(None))):
        return None
    if len(points) == 1:
        return points[0]
    total = backend.g1_sum(points)
    if backend.g1_is_identity(total):
        return None
    return total


def signature_point_with(backend: AnyBackend, signature: bytes) -> Any | None:
    try:
        return backend.decode_g2(signature)
    except BlsError:
        return None


def fast_aggregate_verify_with(
    backend: AnyBackend, pubkeys: Sequence[bytes], message: bytes, signature: bytes
) -> bool:
    key = aggregate_key_with(backend, pubkeys)
    if key is None:
        return False
    point = signature_point_with(backend, signature)
    if point is None:
        return False
    return backend.pairings_equal_signature([(key, backend.hash_to_g2(message, DST))], point)


def sign_with(backend: AnyBackend, sks: Sequence[int], message: bytes) -> list[bytes]:
    """Sign one message with each (already range-checked) key, hashing it once."""
    hashed = backend.hash_to_g2(message, DST)
    encode, times = backend.encode_g2, backend.g2_times
    return [encode(times(hashed, sk)) for sk in sks]


# -- the public functions --


def sk_to_pk(sk: int) -> bytes:
    """The compressed public key of a secret key in [1, r - 1]."""
    backend = current()
    return backend.encode_g1(backend.g1_generator_times(as_secret_key(sk)))


def sign(sk: int, message: bytes) -> bytes:
    """The compressed signature of ``message`` under secret key ``sk``."""
    secret = as_secret_key(sk)
    return sign_with(current(), [secret], as_bytes(message, "message"))[0]


def key_validate(pubkey: bytes) -> bool:
    """Canonical encoding, on the curve, in G1, not the identity."""
    return current().pubkey(as_bytes(pubkey, "pubkey")) is not None


def verify(pubkey: bytes, message: bytes, signature: bytes) -> bool:
    backend = current()
    key = backend.pubkey(as_bytes(pubkey, "pubkey"))
    if key is None:
        return False
    point = signature_point_with(backend, as_bytes(signature, "signature"))
    if point is None:
        return False
    hashed = backend.hash_to_g2(as_bytes(message, "message"), DST)
    return backend.pairings_equal_signature([(key, hashed)], point)


def fast_aggregate_verify(pubkeys: Sequence[bytes], message: bytes, signature: bytes) -> bool:
    """One message signed by every key: false for an empty list, a refused key, or
    keys that sum to the identity."""
    return fast_aggregate_verify_with(
        current(),
        as_bytes_list(pubkeys, "pubkeys"),
        as_bytes(message, "message"),
        as_bytes(signature, "signature"),
    )


def eth_fast_aggregate_verify(
    pubkeys: Sequence[bytes], message: bytes, signature: bytes
) -> bool:
    """``fast_aggregate_verify``, except that no keys with the identity signature is
    true (the consensus specification's rule for empty sync aggregates)."""
    keys = as_bytes_list(pubkeys, "pubkeys")
    signature = as_bytes(signature, "signature")
    if not keys and signature == G2_POINT_AT_INFINITY:
        return True
    return fast_aggregate_verify_with(current(), keys, as_bytes(message, "message"), signature)


def aggregate_verify(
    pubkeys: Sequence[bytes], messages: Sequence[bytes], signature: bytes
) -> bool:
    """Key i signed message i, all aggregated into one signature (messages may repeat,
    as in the proof-of-possession scheme)."""
    backend = current()
    keys = as_bytes_list(pubkeys, "pubkeys")
    texts = as_bytes_list(messages, "messages")
    if not keys or len(keys) != len(texts):
        return False
    points = []
    for pubkey in keys:
        point = backend.pubkey(pubkey)
        if point is None:
            return False
        points.append(point)
    signature_point = signature_point_with(backend, as_bytes(signature, "signature"))
    if signature_point is None:
        return False
    hashes: dict[bytes, Any] = {}
    pairs = []
    for point, text in zip(points, texts, strict=True):
        hashed = hashes.get(text)
        if hashed is None:
            hashed = hashes[text] = backend.hash_to_g2(text, DST)
        pairs.append((point, hashed))
    return backend.pairings_equal_signature(pairs, signature_point)


def aggregate(signatures: Sequence[bytes]) -> bytes:
    """Sum of signatures; raises BlsError for an empty list or an invalid signature."""
    backend = current()
    encoded = as_bytes_list(signatures, "signatures")
    if not encoded:
        raise BlsError("aggregate needs at least one signature")
    points = []
    for index, signature in enumerate(encoded):
        try:
            points.append(backend.decode_g2(signature))
        except BlsError as error:
            raise BlsError(f"signature {index}: {error}") from None
    return backend.encode_g2(backend.g2_sum(points))


def eth_aggregate_pubkeys(pubkeys: Sequence[bytes]) -> bytes:
    """Sum of valid keys; raises BlsError for an empty list or a refused key. Keys that
    cancel return the identity's encoding, as the specification says."""
    backend = current()
    keys = as_bytes_list(pubkeys, "pubkeys")
    if not keys:
        raise BlsError("eth_aggregate_pubkeys needs at least one public key")
    points = []
    for index, pubkey in enumerate(keys):
        point = backend.pubkey(pubkey)
        if point is None:
            raise BlsError(f"public key {index} is not a valid key")
        points.append(point)
    return backend.encode_g1(backend.g1_sum(points))
