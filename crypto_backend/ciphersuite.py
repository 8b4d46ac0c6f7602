"""The functions of the consensus BLS ciphersuite, one call at a time.

Each public function coerces its input (``inputs``), reads the selected backend
once and runs the backend's operation. Rules every backend keeps (docs/crypto.md):

- a public key is valid only if its encoding is canonical, the point is in G1
  and it is not the identity (KeyValidate); every verify path checks every key
  this way before any pairing, and refuses an aggregate key that sums to the
  identity (keys P and -P);
- a signature is valid only if its encoding is canonical and the point is in G2;
- malformed input to a function that returns bytes raises ``BlsError``; a
  function that returns a verdict answers False instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from crypto_backend.inputs import as_bytes, as_bytes_list, as_secret_key
from crypto_backend.selection import current


def sk_to_pk(sk: int) -> bytes:
    """The compressed public key of a secret key in [1, r - 1]."""
    return current().sk_to_pk(as_secret_key(sk))


def sign(sk: int, message: bytes) -> bytes:
    """The compressed signature of ``message`` under secret key ``sk``."""
    secret = as_secret_key(sk)
    return current().sign(secret, as_bytes(message, "message"))


def key_validate(pubkey: bytes) -> bool:
    """Canonical encoding, on the curve, in G1, not the identity."""
    return current().key_validate(as_bytes(pubkey, "pubkey"))


def key_validate_many(pubkeys: Iterable[bytes]) -> list[bool]:
    """``[key_validate(pk) for pk in pubkeys]``, the cache misses decoded in parallel."""
    return current().key_validate_many(as_bytes_list(pubkeys, "pubkeys"))


def warm_pubkeys(pubkeys: Iterable[bytes]) -> None:
    """Validate and cache many keys at once (for loading 10,000+ keys); refused keys
    are remembered as refused. Nothing is raised for a bad key."""
    current().key_validate_many(as_bytes_list(pubkeys, "pubkeys"))


def verify(pubkey: bytes, message: bytes, signature: bytes) -> bool:
    return current().verify(
        as_bytes(pubkey, "pubkey"), as_bytes(message, "message"), as_bytes(signature, "signature")
    )


def fast_aggregate_verify(pubkeys: Sequence[bytes], message: bytes, signature: bytes) -> bool:
    """One message signed by every key: false for an empty list, a refused key, or
    keys that sum to the identity."""
    return current().fast_aggregate_verify(
        as_bytes_list(pubkeys, "pubkeys"),
        as_bytes(message, "message"),
        as_bytes(signature, "signature"),
    )


def eth_fast_aggregate_verify(
    pubkeys: Sequence[bytes], message: bytes, signature: bytes
) -> bool:
    """``fast_aggregate_verify``, except that no keys with the identity signature is
    true (the consensus specification's rule for empty sync aggregates)."""
    return current().eth_fast_aggregate_verify(
        as_bytes_list(pubkeys, "pubkeys"),
        as_bytes(message, "message"),
        as_bytes(signature, "signature"),
    )


def aggregate_verify(
    pubkeys: Sequence[bytes], messages: Sequence[bytes], signature: bytes
) -> bool:
    """Key i signed message i, all aggregated into one signature (messages may repeat,
    as in the proof-of-possession scheme)."""
    return current().aggregate_verify(
        as_bytes_list(pubkeys, "pubkeys"),
        as_bytes_list(messages, "messages"),
        as_bytes(signature, "signature"),
    )


def aggregate(signatures: Sequence[bytes]) -> bytes:
    """Sum of signatures; raises BlsError for an empty list or an invalid signature."""
    return current().aggregate(as_bytes_list(signatures, "signatures"))


def eth_aggregate_pubkeys(pubkeys: Sequence[bytes]) -> bytes:
    """Sum of valid keys; raises BlsError for an empty list or a refused key. Keys that
    cancel return the identity's encoding, as the specification says."""
    return current().eth_aggregate_pubkeys(as_bytes_list(pubkeys, "pubkeys"))
