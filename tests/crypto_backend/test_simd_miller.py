"""The 8-lane Miller loop (the kernels crate's ``field::fp6x8``, ``field::fp12x8`` and
``miller``).

- 8-lane Fp12 multiplication, squaring and conjugation of the portable layer against
  blst's (blst_fp12_mul, blst_fp12_sqr, blst_fp12_conjugate) on random and edge
  elements;
- final_exp of the Miller product of pairs through the kernel (whole chunks of 8,
  the rest on blst) against final_exp of blst_miller_loop_n on the same pairs: random
  keys and real signatures, the generators, negated points, small and large
  multiples, lists of every length around a chunk;
- the IFMA layer against blst on the portable tests' pairs and Fp12 elements, and
  against the portable layer directly on 2,000 pairs (skipped, with a line saying
  why, on a CPU without AVX-512 IFMA, except under VALIDATOR_BLS_SIMD=require);
- the verify paths that reach the kernel (verify_signature_sets and aggregate_verify
  with many messages) answer as under ``off``, spoiled inputs included;
- ``--soak``: the same differentials on more inputs.

Counts: CI runs 100,000 random pairs (12,500 kernel passes, each against blst, in
PARTS tests that the test workers share) plus the edge cases, and 100,000 Fp12
operations per operation, about 6 minutes of CPU on the portable layer of this
project's 2-core host (a part of the pairs took 68 to 80 s); ``--soak`` runs
1,000,000 pairs and 10,000,000 Fp12 products.
"""

from __future__ import annotations

import random

import pytest
from py_ecc.bls.g2_primitives import G1_to_pubkey, G2_to_signature
from py_ecc.optimized_bls12_381 import G1, G2, multiply, neg

import crypto_backend
from crypto_backend import simd
from crypto_backend._native import testing
from tests.crypto_backend.conftest import ifma_or_skip, simd_mode
from tests.crypto_backend.test_simd import R_ORDER, P

FP12_CASES = 100_000
MILLER_PAIRS = 100_000
#: The MILLER_PAIRS pairs are compared in this many tests, so that two test workers
#: share them.
PARTS = 5
SOAK_FP12_CASES = 10_000_000
SOAK_MILLER_PAIRS = 1_000_000
FP12_EDGES = [0, 1, 2, P - 1, P - 2, (P - 1) // 2, (1 << 380) - 1]


def fp12_elements(count: int, rng: random.Random) -> bytes:
    """`count` elements (a multiple of 8): the zero element, one, elements made of
    edge coordinates, then random ones; 12 big-endian coordinates each."""
    out = bytearray()
    for index in range(count):
        if index == 0:
            coordinates = [0] * 12
        elif index == 1:
            coordinates = [1] + [0] * 11
        elif index < 64:
            coordinates = [rng.choice(FP12_EDGES) for _ in range(12)]
        else:
            coordinates = [rng.randrange(P) for _ in range(12)]
        for value in coordinates:
            out += value.to_bytes(48, "big")
    return bytes(out)


@pytest.mark.parametrize("op", ["mul", "sqr", "conjugate"])
def test_portable_fp12_op_matches_blst(op: str, seed: int) -> None:
    rng = random.Random(seed ^ len(op))
    a, b = fp12_elements(FP12_CASES, rng), fp12_elements(FP12_CASES, rng)
    want = testing.fp12_op(op, "none", a, b)
    assert testing.fp12_op(op, "portable", a, b) == want
    # The comparison can fail: an operation that ignored b or a would not match.
    if op == "mul":
        assert want != testing.fp12_op("sqr", "none", a, b)


@pytest.mark.parametrize("op", ["mul", "sqr", "conjugate"])
def test_ifma_fp12_op_matches_portable(op: str, seed: int) -> None:
    ifma_or_skip()
    rng = random.Random(seed ^ len(op))
    a, b = fp12_elements(FP12_CASES, rng), fp12_elements(FP12_CASES, rng)
    assert testing.fp12_op(op, "avx512ifma", a, b) == testing.fp12_op(op, "portable", a, b)


def _negate_g1(key: bytes) -> bytes:
    return bytes([key[0] ^ 0x20]) + key[1:]


def _negate_g2(point: bytes) -> bytes:
    return bytes([point[0] ^ 0x20]) + point[1:]


def edge_pairs() -> list[tuple[bytes, bytes]]:
    """The generators, their negatives, small and large multiples, real signatures."""
    g1, g2 = G1_to_pubkey(G1), G2_to_signature(G2)
    g1_multiples = [G1_to_pubkey(multiply(G1, k)) for k in (2, 3, R_ORDER - 1, R_ORDER - 2)]
    g2_multiples = [G2_to_signature(multiply(G2, k)) for k in (2, R_ORDER - 1)]
    signature = crypto_backend.sign(7, b"edge")
    g1s = [g1, _negate_g1(g1), *g1_multiples, G1_to_pubkey(neg(G1))]
    g2s = [g2, _negate_g2(g2), *g2_multiples, signature, _negate_g2(signature),
           G2_to_signature(multiply(G2, 3)), crypto_backend.sign(R_ORDER - 1, b"edge")]
    return [(p, q) for p in g1s for q in g2s]


#: Signatures made per random message (one hash to G2, then one multiplication each).
SIGNERS_PER_MESSAGE = 4


def random_pairs(count: int, rng: random.Random) -> list[tuple[bytes, bytes]]:
    """Keys of random secrets with real signatures of random messages (hashed points
    times a random secret): the pairs a verify path pairs."""
    secrets = [rng.randrange(1, R_ORDER) for _ in range(count)]
    keys = [crypto_backend.sk_to_pk(sk) for sk in secrets]
    signatures: list[bytes] = []
    while len(signatures) < count:
        signers = [rng.randrange(1, R_ORDER) for _ in range(SIGNERS_PER_MESSAGE)]
        signatures += crypto_backend.sign_many(signers, rng.randbytes(16))
    return list(zip(keys, signatures[:count], strict=True))


def _final(pairs: list[tuple[bytes, bytes]], path: str) -> bytes:
    return testing.miller_final_on(pairs, path)


def test_edge_pairs_through_the_kernel_match_blst() -> None:
    pairs = edge_pairs()
    assert len(pairs) == 56
    for start in range(0, len(pairs), 8):
        chunk = pairs[start:start + 8]
        assert _final(chunk, "portable") == _final(chunk, "none"), chunk
    # One pair alone (no kernel pass: blst) and each lane on its own position.
    for lane in range(8):
        rotated = pairs[lane:] + pairs[:lane]
        assert _final(rotated[:8], "portable") == _final(rotated[:8], "none")


def test_pairing_relations_hold_through_the_kernel() -> None:
    """e(P, Q) e(-P, Q) = 1 and e(2P, Q) = e(P, 2Q), eight lanes apart: the kernel's
    values are the pairing, not merely blst's numbers."""
    g1, g2 = G1_to_pubkey(G1), G2_to_signature(G2)
    two_g1, two_g2 = G1_to_pubkey(multiply(G1, 2)), G2_to_signature(multiply(G2, 2))
    one = _final([(g1, g2), (_negate_g1(g1), g2)] * 4, "portable")
    assert one == _final([(g1, g2), (_negate_g1(g1), g2)], "none")
    assert _final([(two_g1, g2)] * 8, "portable") == _final([(g1, two_g2)] * 8, "portable")
    assert _final([(g1, g2)] * 8, "portable") != one


# Kernel passes per list length: whole chunks of 8, and a partial chunk (its other
# lanes dead) from 5 pairs alone or from 4 beside whole chunks (pairing.rs); fewer
# pairs than that go to blst.
PASSES_BY_COUNT = {4: 0, 5: 1, 7: 1, 8: 1, 9: 1, 11: 1, 12: 2, 15: 2, 16: 2, 17: 2, 23: 3}


@pytest.mark.parametrize("count", sorted(PASSES_BY_COUNT))
def test_lists_around_a_chunk_match_blst(count: int, seed: int) -> None:
    pairs = random_pairs(count, random.Random(seed + count))
    before = testing.counters()["miller_lane_passes"]
    assert _final(pairs, "portable") == _final(pairs, "none")
    assert testing.counters()["miller_lane_passes"] - before == PASSES_BY_COUNT[count]


def assert_layer_pairs_as(layer: str, reference: str, pairs: list[tuple[bytes, bytes]],
                          seed: int) -> None:
    """One chunk of 8 per comparison, so that a wrong lane shows."""
    for start in range(0, len(pairs) - 7, 8):
        chunk = pairs[start:start + 8]
        assert _final(chunk, layer) == _final(chunk, reference), (layer, seed, start)


def part_pairs(seed: int, part: int) -> list[tuple[bytes, bytes]]:
    return random_pairs(MILLER_PAIRS // PARTS, random.Random(seed + part))


@pytest.mark.parametrize("part", range(PARTS))
def test_random_pairs_through_the_kernel_match_blst(seed: int, part: int) -> None:
    assert_layer_pairs_as("portable", "none", part_pairs(seed, part), seed + part)


@pytest.mark.parametrize("part", range(PARTS))
def test_ifma_miller_matches_blst(seed: int, part: int) -> None:
    """The portable test's pairs (same seed, same part): the layers agree on all."""
    ifma_or_skip()
    assert_layer_pairs_as("avx512ifma", "none", part_pairs(seed, part), seed + part)


def test_ifma_miller_matches_portable(seed: int) -> None:
    ifma_or_skip()
    pairs = edge_pairs() + random_pairs(2_000, random.Random(seed))
    assert_layer_pairs_as("avx512ifma", "portable", pairs, seed)


# -- the verify paths ---------------------------------------------------------------------


def _signed_sets(count: int, rng: random.Random) -> list[crypto_backend.SignatureSet]:
    sets = []
    for index in range(count):
        secrets = [rng.randrange(1, R_ORDER) for _ in range(1 + index % 3)]
        message = rng.randbytes(32) if index % 5 else b"shared message"
        signature = crypto_backend.aggregate([crypto_backend.sign(sk, message) for sk in secrets])
        keys = [crypto_backend.sk_to_pk(sk) for sk in secrets]
        sets.append(crypto_backend.SignatureSet(keys, message, signature))
    return sets


def test_verify_paths_through_the_kernel_answer_as_blst(seed: int) -> None:
    """verify_signature_sets of 40 sets (36 messages: whole chunks and a rest on each
    lane thread) and aggregate_verify of 20 messages, valid and spoiled, under
    portable and off; the identity key is still refused before any pairing."""
    rng = random.Random(seed)
    crypto_backend.use("blst")
    sets = _signed_sets(40, rng)
    secrets = [rng.randrange(1, R_ORDER) for _ in range(20)]
    messages = [rng.randbytes(32) for _ in secrets]
    keys = [crypto_backend.sk_to_pk(sk) for sk in secrets]
    aggregate = crypto_backend.aggregate(
        [crypto_backend.sign(sk, m) for sk, m in zip(secrets, messages, strict=True)])
    other = crypto_backend.sign(secrets[0], b"another message")
    spoiled_sets = [
        sets[:17] + [crypto_backend.SignatureSet(sets[17].pubkeys, b"forged", sets[17].signature)]
        + sets[18:],
        sets[:-1] + [crypto_backend.SignatureSet(sets[-1].pubkeys, sets[-1].message, other)],
        sets[:3] + [crypto_backend.SignatureSet(
            [crypto_backend.G1_POINT_AT_INFINITY], sets[3].message, sets[3].signature)] + sets[4:],
    ]

    def answers() -> list[bool]:
        out = [crypto_backend.verify_signature_sets(sets)]
        out += [crypto_backend.verify_signature_sets(spoiled) for spoiled in spoiled_sets]
        out.append(crypto_backend.aggregate_verify(keys, messages, aggregate))
        out.append(crypto_backend.aggregate_verify(keys, messages[::-1], aggregate))
        out.append(crypto_backend.aggregate_verify(keys[:-1] + keys[:1], messages, aggregate))
        return out

    with simd_mode("off"):
        expected = answers()
    assert expected == [True, False, False, False, True, False, False]
    with simd_mode("portable"):
        before = testing.counters()["miller_lane_passes"]
        assert answers() == expected
        assert testing.counters()["miller_lane_passes"] > before


def test_off_never_runs_the_kernel(seed: int) -> None:
    crypto_backend.use("blst")
    sets = _signed_sets(24, random.Random(seed))
    with simd_mode("off"):
        before = testing.counters()["miller_lane_passes"]
        assert crypto_backend.verify_signature_sets(sets)
        assert testing.counters()["miller_lane_passes"] == before
        assert simd.path() == "none"


# -- soak ---------------------------------------------------------------------------------


def test_soak_miller(seed: int, soak: None) -> None:
    rng = random.Random(seed)
    layers = ["portable"] + (["avx512ifma"] if simd.ifma_available() else [])
    for _ in range(SOAK_MILLER_PAIRS // 800):
        pairs = random_pairs(800, rng)
        for start in range(0, len(pairs), 8):
            chunk = pairs[start:start + 8]
            want = _final(chunk, "none")
            for layer in layers:
                assert _final(chunk, layer) == want, (layer, seed, start)


def test_soak_fp12_mul(seed: int, soak: None) -> None:
    rng = random.Random(seed)
    layers = ["portable"] + (["avx512ifma"] if simd.ifma_available() else [])
    for _ in range(SOAK_FP12_CASES // 20_000):
        a, b = fp12_elements(20_000, rng), fp12_elements(20_000, rng)
        want = testing.fp12_op("mul", "none", a, b)
        for layer in layers:
            assert testing.fp12_op("mul", layer, a, b) == want, (layer, seed)
