"""What every curve library offers behind ``crypto_backend``.

Two layers. The *operations* are the ciphersuite's functions on checked input
(bytes, lists of bytes, secret keys already range-checked): the public functions
of ``ciphersuite`` and ``batch`` coerce their input and call these. The
*primitives* are group arithmetic on opaque point objects; ``portable`` builds
the operations from them (arkworks), while the native ``blst`` backend computes
the operations in Rust and offers the primitives for tests and differential
checks. Both follow the rules of docs/crypto.md, and the same tests hold them
to it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar, Generic, TypeVar

from crypto_backend.key_cache import CacheStats

G1 = TypeVar("G1")
G2 = TypeVar("G2")

#: A signature set after input coercion: keys as a tuple, everything as ``bytes``.
CheckedSet = tuple[tuple[bytes, ...], bytes, bytes]


class Backend(ABC, Generic[G1, G2]):
    """BLS12-381 of one library, plus its per-process key cache."""

    name: ClassVar[str]

    # -- operations (input already coerced; secret keys already in [1, r - 1]) --

    @abstractmethod
    def pubkey(self, data: bytes) -> G1 | None:
        """The validated key point (through the key cache), or None when refused."""

    @abstractmethod
    def key_validate_many(self, pubkeys: Sequence[bytes]) -> list[bool]:
        """KeyValidate of each key, decoding the misses of the cache at once."""

    def key_validate(self, pubkey: bytes) -> bool:
        return self.pubkey(pubkey) is not None

    @abstractmethod
    def sk_to_pk(self, sk: int) -> bytes: ...

    def sign(self, sk: int, message: bytes) -> bytes:
        return self.sign_many([sk], message)[0]

    @abstractmethod
    def sign_many(self, sks: Sequence[int], message: bytes) -> list[bytes]:
        """Sign one message with each key, hashing it once."""

    @abstractmethod
    def verify(self, pubkey: bytes, message: bytes, signature: bytes) -> bool: ...

    @abstractmethod
    def fast_aggregate_verify(
        self, pubkeys: Sequence[bytes], message: bytes, signature: bytes
    ) -> bool: ...

    @abstractmethod
    def eth_fast_aggregate_verify(
        self, pubkeys: Sequence[bytes], message: bytes, signature: bytes
    ) -> bool: ...

    @abstractmethod
    def aggregate_verify(
        self, pubkeys: Sequence[bytes], messages: Sequence[bytes], signature: bytes
    ) -> bool: ...

    @abstractmethod
    def aggregate(self, signatures: Sequence[bytes]) -> bytes: ...

    @abstractmethod
    def eth_aggregate_pubkeys(self, pubkeys: Sequence[bytes]) -> bytes: ...

    @abstractmethod
    def verify_signature_sets(self, sets: Sequence[CheckedSet], weights: Sequence[int]) -> bool:
        """The batch check with one random weight per set (1 <= w < 2**64)."""

    @abstractmethod
    def key_cache_stats(self) -> CacheStats: ...

    @abstractmethod
    def clear_key_cache(self) -> None: ...

    # -- primitives: canonical, on the curve, in the subgroup (identity allowed) --

    @abstractmethod
    def decode_g1(self, data: bytes) -> G1:
        """Decode a compressed G1 point; raise BlsError unless the encoding is canonical
        and the point lies in G1. The identity is a valid point here (not a valid key)."""

    @abstractmethod
    def decode_g2(self, data: bytes) -> G2:
        """Decode a compressed G2 point (a signature), same rules as ``decode_g1``."""

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
