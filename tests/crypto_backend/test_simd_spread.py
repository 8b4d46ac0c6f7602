"""The Miller loop of two to four pairs with one computation's Fp2 products across
the lanes (the kernels crate's ``miller::spread``; pairing.rs's ``SPREAD_PAIRS``).

- final_exp of its Miller product against final_exp of blst_miller_loop_n on the same
  pairs: random keys with real signatures, the edge pairs (generators, negatives,
  small and large multiples), on the portable layer and, where the CPU has it, the
  IFMA layer; one and five pairs take the other routes;
- ``verify`` and ``fast_aggregate_verify`` (two pairs: the route's use) answer as
  under ``off``, valid and spoiled, and the identity key is still refused before any
  pairing.
"""

from __future__ import annotations

import random

import pytest
from py_ecc.bls.point_compression import compress_G2, decompress_G2, modular_squareroot_in_FQ2
from py_ecc.optimized_bls12_381 import (
    FQ2,
    add,
    b2,
    curve_order,
    field_modulus,
    is_inf,
    is_on_curve,
    multiply,
)

import crypto_backend
from crypto_backend import simd
from crypto_backend._native import testing
from tests.crypto_backend.conftest import ifma_or_skip, simd_mode
from tests.crypto_backend.test_simd import R_ORDER
from tests.crypto_backend.test_simd_miller import _final, edge_pairs, random_pairs

SPREAD_COUNTS = (2, 3, 4)
RANDOM_LISTS = 40


def _spread_loops() -> int:
    return int(testing.counters()["spread_miller_loops"])


@pytest.mark.parametrize("count", [1, 2, 3, 4, 5])
def test_lists_of_few_pairs_match_blst_and_take_the_route_they_should(
        count: int, seed: int) -> None:
    rng = random.Random(seed + count)
    for _ in range(4):
        pairs = random_pairs(count, rng)
        before = _spread_loops()
        assert _final(pairs, "portable") == _final(pairs, "none")
        assert _spread_loops() - before == (1 if count in SPREAD_COUNTS else 0)


@pytest.mark.parametrize("layer", ["portable", "avx512ifma"])
def test_random_and_edge_pairs_match_blst(layer: str, seed: int) -> None:
    if layer == "avx512ifma":
        ifma_or_skip()
    rng = random.Random(seed)
    edges = edge_pairs()
    lists = [edges[start:start + count] for count in SPREAD_COUNTS
             for start in range(0, len(edges) - count + 1, count)]
    lists += [random_pairs(rng.choice(SPREAD_COUNTS), rng) for _ in range(RANDOM_LISTS)]
    before = _spread_loops()
    for pairs in lists:
        assert _final(pairs, layer) == _final(pairs, "none"), (layer, seed, pairs)
    assert _spread_loops() - before == len(lists)


@pytest.mark.parametrize("mode", ["portable", "auto"])
def test_verify_and_fast_aggregate_verify_answer_as_off(mode: str, seed: int) -> None:
    rng = random.Random(seed)
    crypto_backend.use("blst")
    secrets = [rng.randrange(1, R_ORDER) for _ in range(6)]
    keys = [crypto_backend.sk_to_pk(sk) for sk in secrets]
    message = rng.randbytes(32)
    signatures = [crypto_backend.sign(sk, message) for sk in secrets]
    aggregate = crypto_backend.aggregate(signatures)
    other = crypto_backend.sign(secrets[0], b"another message")

    def answers() -> list[bool]:
        return [
            crypto_backend.verify(keys[0], message, signatures[0]),
            crypto_backend.verify(keys[0], message, signatures[1]),
            crypto_backend.verify(keys[0], b"another message", signatures[0]),
            crypto_backend.verify(keys[0], b"another message", other),
            crypto_backend.fast_aggregate_verify(keys, message, aggregate),
            crypto_backend.fast_aggregate_verify(keys[:-1], message, aggregate),
            crypto_backend.fast_aggregate_verify(keys, message, other),
        ]

    with simd_mode("off"):
        expected = answers()
    assert expected == [True, False, False, True, True, False, False]
    with simd_mode(mode):
        before = _spread_loops()
        assert answers() == expected
        ran = _spread_loops() - before
        # auto is off on a CPU without IFMA: the route never runs there.
        assert ran == (7 if mode == "portable" or simd.path() != "none" else 0)
        checks = testing.counters()["pairing_checks"]
        assert not crypto_backend.verify(crypto_backend.G1_POINT_AT_INFINITY, message,
                                         crypto_backend.G2_POINT_AT_INFINITY)
        assert testing.counters()["pairing_checks"] == checks


# The cofactor of G2 on the twist: its curve has h2 * r points (checked below on
# every point made from it).
G2_COFACTOR = int(
    "5d543a95414e7f1091d50792876a202cd91de4547085abaa68a205b2e5a7ddfa628f1cb4d9e82ef2153"
    "7e293a6691ae1616ec6e786f0c70cf1c38e31c7238e5", 16)


def _twist_point(rng: random.Random) -> tuple[FQ2, FQ2, FQ2]:
    """A random point of the twist's whole group (almost surely not in G2)."""
    while True:
        x = FQ2([rng.randrange(field_modulus), rng.randrange(field_modulus)])
        y = modular_squareroot_in_FQ2(x ** 3 + b2)
        if y is not None:
            point = (x, y, FQ2.one())
            assert is_inf(multiply(point, G2_COFACTOR * curve_order))
            return point


def _point_of_order(prime: int, rng: random.Random) -> tuple[FQ2, FQ2, FQ2]:
    assert G2_COFACTOR % prime == 0
    rest = G2_COFACTOR * curve_order
    while rest % prime == 0:
        rest //= prime
    while True:
        # A point whose order is a power of the prime; then its last multiple before
        # the identity.
        point = multiply(_twist_point(rng), rest)
        if is_inf(point):
            continue
        while not is_inf(multiply(point, prime)):
            point = multiply(point, prime)
        return point


def _compressed(point: tuple[FQ2, FQ2, FQ2]) -> bytes:
    assert is_on_curve(point, b2) and not is_inf(multiply(point, curve_order))
    z1, z2 = compress_G2(point)
    return z1.to_bytes(48, "big") + z2.to_bytes(48, "big")


@pytest.mark.parametrize("mode", ["portable", "auto", "off"])
def test_signatures_outside_g2_are_refused_where_the_loop_checks_them(
        mode: str, seed: int) -> None:
    """The route decodes the signature without its subgroup check and reads the check
    off the Miller loop (T ends as [|z|]Q): a point of the twist outside G2, one of
    small order (whose multiples can hit T = +-Q, the formulas' exceptional case), and
    a valid signature plus a point of order 13 or 23 are all refused, as under off,
    while the valid signature passes; on portable and IFMA the route ran each time."""
    rng = random.Random(seed)
    crypto_backend.use("blst")
    secret = rng.randrange(1, R_ORDER)
    keys = [crypto_backend.sk_to_pk(secret), crypto_backend.sk_to_pk(secret + 1)]
    message = rng.randbytes(32)
    signature = crypto_backend.sign(secret, message)
    aggregate = crypto_backend.aggregate([signature, crypto_backend.sign(secret + 1, message)])
    valid = decompress_G2((int.from_bytes(signature[:48], "big"),
                           int.from_bytes(signature[48:], "big")))
    outside = [_compressed(_twist_point(rng))]
    for order in (13, 23):
        torsion = _point_of_order(order, rng)
        outside += [_compressed(torsion), _compressed(add(valid, torsion))]
    with simd_mode(mode):
        before = _spread_loops()
        assert crypto_backend.verify(keys[0], message, signature)
        assert crypto_backend.fast_aggregate_verify(keys, message, aggregate)
        for point in outside:
            assert not crypto_backend.verify(keys[0], message, point)
            assert not crypto_backend.fast_aggregate_verify(keys, message, point)
        ran = _spread_loops() - before
    lanes = mode == "portable" or (mode == "auto" and simd.path() != "none")
    assert ran == ((2 + 2 * len(outside)) if lanes else 0)
