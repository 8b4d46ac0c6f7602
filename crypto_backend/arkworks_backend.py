"""The independent second backend: arkworks (Rust) through py-arkworks-bls12381.

Used for differential testing and selectable at run time. It runs the
ciphersuite's rules in Python (``portable``) on the calling thread. Its decoder accepts
non-canonical encodings of the identity (``c0..01``, ``e0..00``), which the
wrapper's re-encoding check refuses; its ``G1Point()`` is the generator, not the
identity; its pairing check drops pairs that hold the identity, which is why
identity keys must never reach it.
"""

from __future__ import annotations

from collections.abc import Sequence

from py_arkworks_bls12381 import GT, G1Point, G2Point, Scalar

from crypto_backend.errors import BlsError
from crypto_backend.key_cache import KEY_CACHE_SIZE
from crypto_backend.portable import PortableBackend


class ArkworksBackend(PortableBackend[G1Point, G2Point]):
    name = "arkworks"

    def __init__(self, key_cache_size: int = KEY_CACHE_SIZE) -> None:
        super().__init__(key_cache_size)
        self._generator = G1Point()
        self._neg_generator = -self._generator
        self._g1_identity = G1Point.identity()
        self._g2_identity = G2Point.identity()

    def _decode_g1(self, data: bytes) -> G1Point:
        try:
            return G1Point.from_compressed_bytes(data)
        except ValueError as error:
            raise BlsError(f"invalid G1 point: {error}") from None

    def _decode_g2(self, data: bytes) -> G2Point:
        try:
            return G2Point.from_compressed_bytes(data)
        except ValueError as error:
            raise BlsError(f"invalid G2 point: {error}") from None

    def encode_g1(self, point: G1Point) -> bytes:
        return point.to_compressed_bytes()

    def encode_g2(self, point: G2Point) -> bytes:
        return point.to_compressed_bytes()

    def g1_is_identity(self, point: G1Point) -> bool:
        return point == self._g1_identity

    def g2_is_identity(self, point: G2Point) -> bool:
        return point == self._g2_identity

    def g1_generator_times(self, scalar: int) -> G1Point:
        return self._generator * Scalar(scalar)

    def g2_times(self, point: G2Point, scalar: int) -> G2Point:
        return point * Scalar(scalar)

    def hash_to_g2(self, message: bytes, dst: bytes) -> G2Point:
        return G2Point.hash_to_curve(message, dst)

    def g1_sum(self, points: Sequence[G1Point]) -> G1Point:
        total = points[0]
        for point in points[1:]:
            total = total + point
        return total

    def g2_sum(self, points: Sequence[G2Point]) -> G2Point:
        total = points[0]
        for point in points[1:]:
            total = total + point
        return total

    def g1_weighted_sum(self, points: Sequence[G1Point], weights: Sequence[int]) -> G1Point:
        # "unchecked" skips a subgroup check; every point here was decoded checked.
        return G1Point.multiexp_unchecked(list(points), [Scalar(w) for w in weights])

    def g2_weighted_sum(self, points: Sequence[G2Point], weights: Sequence[int]) -> G2Point:
        return G2Point.multiexp_unchecked(list(points), [Scalar(w) for w in weights])

    def pairings_equal_signature(
        self, pairs: Sequence[tuple[G1Point, G2Point]], signature: G2Point
    ) -> bool:
        if not pairs:
            raise ValueError("a pairing check needs at least one pair")
        keys = [key for key, _ in pairs]
        hashes = [hashed for _, hashed in pairs]
        # prod e(P_i, Q_i) * e(-g1, signature) == 1
        return GT.pairing_check([*keys, self._neg_generator], [*hashes, signature])
