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
