"""blst called directly from the native core, with none of our rules: the benchmark's
baselines (``bench/crypto.py``), public on purpose so that bench/ imports nothing
private. Not for verifying anything in production: these skip the key cache and
the identity and canonical-encoding rules of the real functions.
"""

from __future__ import annotations

from crypto_backend import _native
from crypto_backend._native import G1Point, G2Point, testing
from crypto_backend.constants import DST


def decode_pubkey(pubkey: bytes) -> G1Point:
    """blst's checked decode of a public key (raises BlsError when it refuses)."""
    return testing.baseline_decode_pubkey(pubkey)


def core_verify(pubkey: G1Point, message: bytes, signature: bytes) -> bool:
    """A bare blst core_verify on an already decoded key: blst's signature decode and
    subgroup check, ``blst_core_verify_pk_in_g1`` (hash, two Miller loops, final
    exponentiation)."""
    return testing.baseline_core_verify(pubkey, message, signature)


def hash_to_g2(message: bytes) -> G2Point:
    """blst's hash of a message to G2 with the consensus DST."""
    return _native.hash_to_g2(message, DST)


def sign_hashed(sk: int, hashed: G2Point) -> bytes:
    """A bare multiplication: ``blst_sign_pk_in_g1`` of a hashed message, compressed."""
    return testing.baseline_sign_hashed(sk, hashed)


def blst_fp_mul_seconds(rounds: int) -> float:
    """Seconds for ``rounds`` rounds of eight blst multiplications modulo p
    (``blst_fp_mul``, blst's mul_mont_384), timed inside the native core."""
    return testing.bench_blst_fp_mul(rounds)


def lane_fp_mul_seconds(layer: str, count: int) -> float:
    """Seconds for ``count`` 8-lane multiplications modulo p on a lane layer
    (``"portable"`` or ``"avx512ifma"``), timed inside the native core."""
    return testing.bench_fpx8_mul(layer, count)


def lane_fp_mul_independent_seconds(layer: str, count: int) -> float:
    """Seconds for ``count`` 8-lane multiplications modulo p on a lane layer when
    several independent chains run side by side (their throughput, not their latency)."""
    return testing.bench_fpx8_mul_independent(layer, count)


def miller_final_exp(pairs: list[tuple[bytes, bytes]], path: str) -> bytes:
    """final_exp of the Miller product of (compressed key, compressed G2 point) pairs,
    the Miller loops on ``path``: ``"none"`` is ``blst_miller_loop_n``, a lane layer
    runs whole chunks of 8 on the 8-lane Miller-loop kernel, and the final
    exponentiation's squarings on the cyclotomic kernel."""
    return testing.miller_final_on(pairs, path)


def final_exp(values: bytes, path: str) -> bytes:
    """The final exponentiation of each Fp12 value (12 big-endian 48-byte coordinates
    each) on ``path``: ``"none"`` is ``blst_final_exp``, a lane layer runs the hard
    part's squarings on the cyclotomic kernel (one value spread over the lanes)."""
    return testing.final_exp_on(values, path)


def hash_many_to_g2(messages: list[bytes], path: str) -> list[bytes]:
    """The compressed hashes to G2 (the ciphersuite's DST) of ``messages`` on ``path``:
    ``"none"`` is ``blst_hash_to_g2`` for each, a lane layer hashes eight a pass."""
    return testing.hash_to_g2_on(messages, DST, path)
