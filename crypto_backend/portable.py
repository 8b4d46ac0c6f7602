"""The ciphersuite's operations built from a library's group primitives.

For a backend without a native core (arkworks): every rule of docs/crypto.md
written once, in Python, on the primitive protocol of ``backend.Backend``:
canonical decoding, key validation through the key cache, the identity refused
before any pairing (and an aggregate key that sums to it), one hash per distinct
message, and the random-linear-combination batch check. Runs on the calling
thread.
"""

from __future__ import annotations

import operator
from abc import abstractmethod
from collections.abc import Sequence
from itertools import repeat
from typing import Any, TypeVar

from crypto_backend.backend import Backend, CheckedSet
from crypto_backend.constants import DST, G2_POINT_AT_INFINITY, PUBKEY_LENGTH, SIGNATURE_LENGTH
from crypto_backend.errors import BlsError
from crypto_backend.key_cache import KEY_CACHE_SIZE, CacheStats, KeyCache

G1 = TypeVar("G1")
G2 = TypeVar("G2")


class PortableBackend(Backend[G1, G2]):
    def __init__(self, key_cache_size: int = KEY_CACHE_SIZE) -> None:
        self._keys: KeyCache[G1] = KeyCache(self._validate_pubkey, key_cache_size)
        self._pubkey = self._keys.lookup

    # -- decoding ----------------------------------------------------------------

    def decode_g1(self, data: bytes) -> G1:
        if len(data) != PUBKEY_LENGTH:
            raise BlsError(f"a G1 point is {PUBKEY_LENGTH} bytes, got {len(data)}")
        point = self._decode_g1(data)
        # Libraries differ on which bit patterns they tolerate; one canonical
        # encoding per point is our rule, whatever the library accepts.
        if self.encode_g1(point) != data:
            raise BlsError("non-canonical G1 encoding")
        return point

    def decode_g2(self, data: bytes) -> G2:
        if len(data) != SIGNATURE_LENGTH:
            raise BlsError(f"a G2 point is {SIGNATURE_LENGTH} bytes, got {len(data)}")
        point = self._decode_g2(data)
        if self.encode_g2(point) != data:
            raise BlsError("non-canonical G2 encoding")
        return point

    @abstractmethod
    def _decode_g1(self, data: bytes) -> G1:
        """Checked decode (on curve, in subgroup); raise BlsError on refusal."""

    @abstractmethod
    def _decode_g2(self, data: bytes) -> G2:
        """Checked decode (on curve, in subgroup); raise BlsError on refusal."""

    def _validate_pubkey(self, data: bytes) -> G1 | None:
        """KeyValidate: a decodable G1 point that is not the identity."""
        try:
            point = self.decode_g1(data)
        except BlsError:
            return None
        if self.g1_is_identity(point):
            return None
        return point

    def _signature_point(self, signature: bytes) -> G2 | None:
        try:
            return self.decode_g2(signature)
        except BlsError:
            return None

    # -- the key cache -------------------------------------------------------------

    def pubkey(self, data: bytes) -> G1 | None:
        return self._pubkey(data)

    def key_validate_many(self, pubkeys: Sequence[bytes]) -> list[bool]:
        return [self._pubkey(key) is not None for key in pubkeys]

    def key_cache_stats(self) -> CacheStats:
        return self._keys.stats()

    def clear_key_cache(self) -> None:
        self._keys.clear()

    # -- operations ------------------------------------------------------------------

    def _aggregate_key(self, pubkeys: Sequence[bytes]) -> G1 | None:
        """Sum of validated keys, or None if the list is empty, any key is refused, or
        the sum is the identity."""
        if not pubkeys:
            return None
        points = list(map(self._pubkey, pubkeys))
        if any(map(operator.is_, points, repeat(None))):
            return None
        if len(points) == 1:
            return points[0]
        total = self.g1_sum(points)  # type: ignore[arg-type]
        if self.g1_is_identity(total):
            return None
        return total

    def sk_to_pk(self, sk: int) -> bytes:
        return self.encode_g1(self.g1_generator_times(sk))

    def sign_many(self, sks: Sequence[int], message: bytes) -> list[bytes]:
        hashed = self.hash_to_g2(message, DST)
        encode, times = self.encode_g2, self.g2_times
        return [encode(times(hashed, sk)) for sk in sks]

    def verify(self, pubkey: bytes, message: bytes, signature: bytes) -> bool:
        key = self._pubkey(pubkey)
        if key is None:
            return False
        point = self._signature_point(signature)
        if point is None:
            return False
        return self.pairings_equal_signature([(key, self.hash_to_g2(message, DST))], point)

    def fast_aggregate_verify(
        self, pubkeys: Sequence[bytes], message: bytes, signature: bytes
    ) -> bool:
        key = self._aggregate_key(pubkeys)
        if key is None:
            return False
        point = self._signature_point(signature)
        if point is None:
            return False
        return self.pairings_equal_signature([(key, self.hash_to_g2(message, DST))], point)

    def eth_fast_aggregate_verify(
        self, pubkeys: Sequence[bytes], message: bytes, signature: bytes
    ) -> bool:
        if not pubkeys:
            return signature == G2_POINT_AT_INFINITY
        return self.fast_aggregate_verify(pubkeys, message, signature)

    def aggregate_verify(
        self, pubkeys: Sequence[bytes], messages: Sequence[bytes], signature: bytes
    ) -> bool:
        if not pubkeys or len(pubkeys) != len(messages):
            return False
        points = []
        for pubkey in pubkeys:
            point = self._pubkey(pubkey)
            if point is None:
                return False
            points.append(point)
        signature_point = self._signature_point(signature)
        if signature_point is None:
            return False
        hashes: dict[bytes, Any] = {}
        pairs = []
        for point, text in zip(points, messages, strict=True):
            hashed = hashes.get(text)
            if hashed is None:
                hashed = hashes[text] = self.hash_to_g2(text, DST)
            pairs.append((point, hashed))
        return self.pairings_equal_signature(pairs, signature_point)

    def aggregate(self, signatures: Sequence[bytes]) -> bytes:
        if not signatures:
            raise BlsError("aggregate needs at least one signature")
        points = []
        for index, signature in enumerate(signatures):
            try:
                points.append(self.decode_g2(signature))
            except BlsError as error:
                raise BlsError(f"signature {index}: {error}") from None
        return self.encode_g2(self.g2_sum(points))

    def eth_aggregate_pubkeys(self, pubkeys: Sequence[bytes]) -> bytes:
        if not pubkeys:
            raise BlsError("eth_aggregate_pubkeys needs at least one public key")
        points = []
        for index, pubkey in enumerate(pubkeys):
            point = self._pubkey(pubkey)
            if point is None:
                raise BlsError(f"public key {index} is not a valid key")
            points.append(point)
        return self.encode_g1(self.g1_sum(points))

    def verify_signature_sets(self, sets: Sequence[CheckedSet], weights: Sequence[int]) -> bool:
        if not sets or len(weights) != len(sets):
            return False
        if len(sets) == 1:
            return self.fast_aggregate_verify(*sets[0])
        signatures = []
        # message -> (aggregate keys, their weights)
        by_message: dict[bytes, tuple[list[Any], list[int]]] = {}
        for (pubkeys, message, signature), weight in zip(sets, weights, strict=True):
            # Every key is validated (identity refused), and so is their sum, before
            # anything is hashed or paired.
            key = self._aggregate_key(pubkeys)
            if key is None:
                return False
            signature_point = self._signature_point(signature)
            if signature_point is None:
                return False
            signatures.append(signature_point)
            keys, key_weights = by_message.setdefault(message, ([], []))
            keys.append(key)
            key_weights.append(weight)
        signature_sum = self.g2_weighted_sum(signatures, list(weights))
        if self.g2_is_identity(signature_sum):
            return False
        pairs = []
        for message, (keys, key_weights) in by_message.items():
            key_sum = self.g1_weighted_sum(keys, key_weights)
            if self.g1_is_identity(key_sum):
                return False
            pairs.append((key_sum, self.hash_to_g2(message, DST)))
        return self.pairings_equal_signature(pairs, signature_sum)
