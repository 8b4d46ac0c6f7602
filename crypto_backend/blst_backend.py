"""The default backend: the native core, ``crypto_backend._native`` (Rust, the blst crate).

Every operation is one call into the extension, which releases the GIL for the
whole computation and spreads batches over its lanes (threads). Public keys are
cached there as blst affine points, so a key is decoded once per process and
never crosses back into Python. The primitives (point objects, sums, pairings)
are the same extension's, for the tests and the differential checks.
"""

from __future__ import annotations

from collections.abc import Sequence

from crypto_backend import _native, simd, threads
from crypto_backend._native import G1Point, G2Point
from crypto_backend.backend import Backend, CheckedSet
from crypto_backend.key_cache import KEY_CACHE_SIZE, CacheStats


class BlstBackend(Backend[G1Point, G2Point]):
    name = "blst"

    def __init__(self, key_cache_size: int = KEY_CACHE_SIZE) -> None:
        simd.check()  # VALIDATOR_BLS_SIMD=require without IFMA stops here
        self._cache = _native.KeyCache(key_cache_size)
        _native.set_lanes(threads.lane_count())

    # -- operations --

    def pubkey(self, data: bytes) -> G1Point | None:
        return self._cache.lookup(data)

    def key_validate_many(self, pubkeys: Sequence[bytes]) -> list[bool]:
        return _native.key_validate_many(self._cache, pubkeys)

    def key_validate(self, pubkey: bytes) -> bool:
        return _native.key_validate(self._cache, pubkey)

    def sk_to_pk(self, sk: int) -> bytes:
        return _native.sk_to_pk(sk)

    def sign(self, sk: int, message: bytes) -> bytes:
        return _native.sign(sk, message)

    def sign_many(self, sks: Sequence[int], message: bytes) -> list[bytes]:
        return _native.sign_many(sks, message)

    def verify(self, pubkey: bytes, message: bytes, signature: bytes) -> bool:
        return _native.verify(self._cache, pubkey, message, signature)

    def fast_aggregate_verify(
        self, pubkeys: Sequence[bytes], message: bytes, signature: bytes
    ) -> bool:
        return _native.fast_aggregate_verify(self._cache, pubkeys, message, signature)

    def eth_fast_aggregate_verify(
        self, pubkeys: Sequence[bytes], message: bytes, signature: bytes
    ) -> bool:
        return _native.eth_fast_aggregate_verify(self._cache, pubkeys, message, signature)

    def aggregate_verify(
        self, pubkeys: Sequence[bytes], messages: Sequence[bytes], signature: bytes
    ) -> bool:
        return _native.aggregate_verify(self._cache, pubkeys, messages, signature)

    def aggregate(self, signatures: Sequence[bytes]) -> bytes:
        return _native.aggregate(signatures)

    def eth_aggregate_pubkeys(self, pubkeys: Sequence[bytes]) -> bytes:
        return _native.eth_aggregate_pubkeys(self._cache, pubkeys)

    def verify_signature_sets(self, sets: Sequence[CheckedSet], weights: Sequence[int]) -> bool:
        return _native.verify_signature_sets(self._cache, sets, weights)

    def key_cache_stats(self) -> CacheStats:
        return CacheStats(*self._cache.stats())

    def clear_key_cache(self) -> None:
        self._cache.clear()

    # -- primitives --

    def decode_g1(self, data: bytes) -> G1Point:
        return _native.decode_g1(data)

    def decode_g2(self, data: bytes) -> G2Point:
        return _native.decode_g2(data)

    def encode_g1(self, point: G1Point) -> bytes:
        return _native.encode_g1(point)

    def encode_g2(self, point: G2Point) -> bytes:
        return _native.encode_g2(point)

    def g1_is_identity(self, point: G1Point) -> bool:
        return _native.g1_is_identity(point)

    def g2_is_identity(self, point: G2Point) -> bool:
        return _native.g2_is_identity(point)

    def g1_generator_times(self, scalar: int) -> G1Point:
        return _native.g1_generator_times(scalar)

    def g2_times(self, point: G2Point, scalar: int) -> G2Point:
        return _native.g2_times(point, scalar)

    def hash_to_g2(self, message: bytes, dst: bytes) -> G2Point:
        return _native.hash_to_g2(message, dst)

    def g1_sum(self, points: Sequence[G1Point]) -> G1Point:
        return _native.g1_sum(points)

    def g2_sum(self, points: Sequence[G2Point]) -> G2Point:
        return _native.g2_sum(points)

    def g1_weighted_sum(self, points: Sequence[G1Point], weights: Sequence[int]) -> G1Point:
        return _native.g1_weighted_sum(points, weights)

    def g2_weighted_sum(self, points: Sequence[G2Point], weights: Sequence[int]) -> G2Point:
        return _native.g2_weighted_sum(points, weights)

    def pairings_equal_signature(
        self, pairs: Sequence[tuple[G1Point, G2Point]], signature: G2Point
    ) -> bool:
        return _native.pairings_equal_signature(pairs, signature)
