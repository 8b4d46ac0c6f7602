"""The small protocol every curve library sits behind.

A backend offers only group arithmetic on opaque point objects. Every rule of
the ciphersuite (identity refusals, canonical encodings, random weights, what
is true and what is false) lives above it, in ``ciphersuite`` and ``batch``, so
it is written once and holds for every library.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar, Generic, TypeVar

from crypto_backend.constants import PUBKEY_LENGTH, SIGNATURE_LENGTH
from crypto_backend.errors import BlsError
from crypto_backend.key_cache import KEY_CACHE_SIZE, CacheStats, KeyCache

G1 = TypeVar("G1")
G2 = TypeVar("G2")


class Backend(ABC, Generic[G1, G2]):
    """BLS12-381 group operations of one library, plus the per-process key cache."""

    name: ClassVar[str]

    def __init__(self, key_cache_size: int = KEY_CACHE_SIZE) -> None:
        self._keys: KeyCache[G1] = KeyCache(self._validate_pubkey, key_cache_size)
        #: ``pubkey(data)``: the validated key point, or None when the key is refused.
        self.pubkey = self._keys.lookup

    # -- decoding: canonical, on the curve, in the subgroup (identity allowed) --

    def decode_g1(self, data: bytes) -> G1:
        """Decode a compressed G1 point; raise BlsError unless the encoding is canonical
        and the point lies in G1. The identity is a valid point here (not a valid key)."""
        if len(data) != PUBKEY_LENGTH:
            raise BlsError(f"a G1 point is {PUBKEY_LENGTH} bytes, got {len(data)}")
        point = self._decode_g1(data)
        # Libraries differ on which bit patterns they tolerate; one canonical
        # encoding per point is our rule, whatever the library accepts.
        if self.encode_g1(point) != data:
            raise BlsError("non-canonical G1 encoding")
        return point

    def decode_g2(self, data: bytes) -> G2:
        """Decode a compressed G2 point (a signature), same rules as ``decode_g1``."""
        if len(data) != SIGNATURE_LENGTH:
            raise BlsError(f"a G2 point is {SIGNATURE_LENGTH} bytes, got {len(data)}")
        point = self._decode_g2(data)
        if self.encode_g2(point) != data:
            raise BlsError("non-canonical G2 encoding")
        return point

    def _validate_pubkey(self, data: bytes) -> G1 | None:
        """KeyValidate: a decodable G1 point that is not the identity."""
        try:
            point = self.decode_g1(data)
        except BlsError:
            return None
        if self.g1_is_identity(point):
            return None
        return point

    def key_cache_stats(self) -> CacheStats:
        return self._keys.stats()

    def clear_key_cache(self) -> None:
        self._keys.clear()

    # -- library-specific operations --

    @abstractmethod
    def _decode_g1(self, data: bytes) -> G1:
        """Checked decode (on curve, in subgroup); raise BlsError on refusal."""

    @abstractmethod
    def _decode_g2(self, data: bytes) -> G2:
        """Checked decode (on curve, in subgroup); raise BlsError on refusal."""

    @abstractmethod
    def encode_g1(self, point: G1) -> bytes: ...

    @abstractmethod
    def encode_g2(self, point: G2) -> bytes: ...

    @abstractmethod
    def g1_is_identity(self, point: G1) -> bool: ...

    @abstractmethod
    def g2_is_identity(self, point: G2) -> bool: ...

    @abstractmethod
    def g1_generator_times(self, scalar: int) -> G1:
        """scalar * G1 generator, scalar in [1, r - 1] (the library's constant-time path)."""

    @abstractmethod
    def g2_times(self, point: G2, scalar: int) -> G2:
        """scalar * point, scalar in [1, r - 1] (the library's constant-time path)."""

    @abstractmethod
    def hash_to_g2(self, message: bytes, dst: bytes) -> G2:
        """hash_to_curve of RFC 9380 (SSWU, random oracle) onto G2."""

    @abstractmethod
    def g1_sum(self, points: Sequence[G1]) -> G1:
        """Sum of at least one point."""

    @abstractmethod
    def g2_sum(self, points: Sequence[G2]) -> G2:
        """Sum of at least one point."""

    @abstractmethod
    def g1_weighted_sum(self, points: Sequence[G1], weights: Sequence[int]) -> G1:
        """sum(w * P) over at least one point; weights are public, 1 <= w < 2**64."""

    @abstractmethod
    def g2_weighted_sum(self, points: Sequence[G2], weights: Sequence[int]) -> G2:
        """sum(w * Q) over at least one point; weights are public, 1 <= w < 2**64."""

    @abstractmethod
    def pairings_equal_signature(self, pairs: Sequence[tuple[G1, G2]], signature: G2) -> bool:
        """Whether prod e(P_i, Q_i) == e(g1, signature), with one final exponentiation.

        Callers never pass an identity P_i: some libraries silently drop such a pair.
        """
