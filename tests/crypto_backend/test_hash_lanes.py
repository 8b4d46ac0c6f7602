"""The hash to G2 on the 8-lane kernel (the kernels crate's ``hash``, driven by the
suite crate's ``hash``) against blst_hash_to_g2, point for point.

- each lane layer (portable always; IFMA where the CPU has it) against blst on random
  messages of every length class, in chunks of every fill (a short chunk repeats a
  message in its spare lanes), with the kernel's pass counter moving and no lane
  left to blst; then in bulk: 10,000 messages on the portable layer, 100,000 on the
  IFMA layer (skipped, with a line saying why, on a CPU without it); ``--soak``:
  1,000,000 on each layer this host runs;
- the official hash_to_G2 cases (bls12-381-tests, RFC 9380's test DST) through the
  lanes;
- the public calls that hash many messages (``verify_signature_sets``,
  ``aggregate_verify``) under ``VALIDATOR_BLS_SIMD=portable``: through the kernel,
  with the verdicts of the blst path, a wrong message still refused.

The kernels crate's own test (``cargo test -p bls_lanes --test hash``) adds chosen
field elements (zero, p, values above p) against blst_map_to_g2.
"""

from __future__ import annotations

import random
import zlib

import pytest

import crypto_backend
from crypto_backend import _native
from crypto_backend._native import testing
from tests.crypto_backend.conftest import ifma_or_skip, simd_mode
from tests.crypto_backend.test_official_vectors import (
    BLS_TESTS,
    HASH_TO_G2_TEST_DST,
    _compressed_g2,
    _json_cases,
    _load_json,
)

DST = crypto_backend.DST
#: Chunk fills: whole passes, short ones, and a chunk below the IFMA path's minimum.
COUNTS = [1, 2, 3, 7, 8, 9, 17, 64]


def random_messages(count: int, rng: random.Random) -> list[bytes]:
    return [rng.randbytes(rng.choice([0, 1, 31, 32, 32, 33, 96, 200])) for _ in range(count)]


def check_layer_against_blst(layer: str, seed: int) -> None:
    rng = random.Random(seed ^ zlib.crc32(layer.encode()))
    for count in COUNTS:
        messages = random_messages(count, rng)
        before = testing.counters()
        got = testing.hash_to_g2_on(messages, DST, layer)
        after = testing.counters()
        expected = testing.hash_to_g2_on(messages, DST, "none")
        assert got == expected, f"{layer}, {count} messages (seed {seed})"
        assert expected == [_native.encode_g2(_native.hash_to_g2(m, DST)) for m in messages]
        # Chunks below the path's minimum fill (3 on IFMA, 1 on portable) go to blst.
        minimum = 1 if layer == "portable" else 3
        chunks = [min(8, count - start) for start in range(0, count, 8)]
        passes = sum(1 for fill in chunks if fill >= minimum)
        assert after["hash_lane_passes"] - before["hash_lane_passes"] == passes
        assert after["hash_undecided_lanes"] == before["hash_undecided_lanes"]


def test_portable_hash_matches_blst(seed: int) -> None:
    check_layer_against_blst("portable", seed)


def test_ifma_hash_matches_blst(seed: int) -> None:
    ifma_or_skip()
    check_layer_against_blst("avx512ifma", seed)


#: Messages hashed in bulk on each layer (the portable layer takes about 0.7 ms a
#: message on this project's hosts, the IFMA layer 0.05 ms, blst 0.19 ms).
BULK = {"portable": 10_000, "avx512ifma": 100_000}
SOAK_MESSAGES = 1_000_000


def assert_layer_hashes_as_blst(layer: str, count: int, seed: int) -> None:
    rng = random.Random(seed ^ zlib.crc32(b"bulk " + layer.encode()))
    for start in range(0, count, 5_000):
        messages = random_messages(min(5_000, count - start), rng)
        got = testing.hash_to_g2_on(messages, DST, layer)
        expected = testing.hash_to_g2_on(messages, DST, "none")
        wrong = [i for i, (a, b) in enumerate(zip(got, expected, strict=True)) if a != b]
        assert not wrong, f"{layer}: {len(wrong)} of {len(messages)} differ, first message "\
            f"{messages[wrong[0]].hex()} (seed {seed})"


def test_portable_hash_in_bulk(seed: int) -> None:
    assert_layer_hashes_as_blst("portable", BULK["portable"], seed)


def test_ifma_hash_in_bulk(seed: int) -> None:
    ifma_or_skip()
    assert_layer_hashes_as_blst("avx512ifma", BULK["avx512ifma"], seed)


def test_soak_hash_lanes(seed: int, soak: None) -> None:
    """1,000,000 messages on the portable layer (and IFMA where present) against blst."""
    layers = ["portable"] + (["avx512ifma"] if crypto_backend.simd.ifma_available() else [])
    for layer in layers:
        assert_layer_hashes_as_blst(layer, SOAK_MESSAGES, seed)


def test_official_hash_to_g2_cases_through_the_lanes() -> None:
    paths = [param.values[0] for param in _json_cases("hash_to_G2")]
    cases = [_load_json("hash_to_G2", path) for path in paths]
    messages = [case["input"]["msg"].encode() for case in cases]
    expected = [_compressed_g2(case["output"]["x"], case["output"]["y"]) for case in cases]
    layers = ["portable"] + (["avx512ifma"] if crypto_backend.simd.ifma_available() else [])
    for layer in layers:
        # Repeated to fill a whole pass on every layer.
        assert testing.hash_to_g2_on(messages * 2, HASH_TO_G2_TEST_DST, layer) == expected * 2, (
            f"{layer}: {'/'.join(BLS_TESTS)}/hash_to_G2"
        )


def test_batch_calls_hash_their_messages_on_the_lanes() -> None:
    secret_keys = list(range(101, 121))
    messages = [bytes([index]) * 32 for index in range(len(secret_keys))]
    pubkeys = [crypto_backend.sk_to_pk(sk) for sk in secret_keys]
    signatures = [crypto_backend.sign(sk, m) for sk, m in zip(secret_keys, messages, strict=True)]
    sets = list(zip([[key] for key in pubkeys], messages, signatures, strict=True))
    wrong_message = sets[:5] + [([pubkeys[5]], b"not what was signed", signatures[5])] + sets[6:]
    aggregate = crypto_backend.aggregate(signatures)
    with simd_mode("portable"):
        before = testing.counters()["hash_lane_passes"]
        assert crypto_backend.verify_signature_sets(sets)
        assert not crypto_backend.verify_signature_sets(wrong_message)
        assert crypto_backend.aggregate_verify(pubkeys, messages, aggregate)
        assert not crypto_backend.aggregate_verify(pubkeys, messages[::-1], aggregate)
        assert testing.counters()["hash_lane_passes"] > before
    with simd_mode("off"):
        assert crypto_backend.verify_signature_sets(sets)
        assert not crypto_backend.verify_signature_sets(wrong_message)


@pytest.mark.parametrize("sets_per_message", [1, 5, 40, 260])
def test_batch_weights_keys_on_the_lanes(sets_per_message: int, seed: int) -> None:
    """Messages with few sets weight their keys on the lanes (``mul::weighted``: eight
    keys of any messages a pass below 8 sets, a lane sum of each message's keys from 8
    to 256), those with more on blst's Pippenger: the same verdicts either way, a
    swapped pair of signatures refused (their plain sum is right: only the weights
    catch it)."""
    rng = random.Random(seed ^ sets_per_message)
    count = max(16, 2 * sets_per_message)
    secret_keys = [rng.randrange(1, crypto_backend.CURVE_ORDER) for _ in range(count)]
    messages = [bytes([index // sets_per_message]) * 8 for index in range(count)]
    sets = [
        crypto_backend.SignatureSet([crypto_backend.sk_to_pk(sk)], m, crypto_backend.sign(sk, m))
        for sk, m in zip(secret_keys, messages, strict=True)
    ]
    signature_set = crypto_backend.SignatureSet
    wrong = list(sets)
    if sets_per_message == 1:
        # A set whose message is another set's.
        wrong[0] = signature_set(sets[0].pubkeys, sets[1].message, sets[0].signature)
    else:
        # Two sets of one message with their signatures swapped.
        wrong[0] = signature_set(sets[0].pubkeys, sets[0].message, sets[1].signature)
        wrong[1] = signature_set(sets[1].pubkeys, sets[1].message, sets[0].signature)
    with simd_mode("portable"):
        before = testing.counters()["weighted_lane_passes"]
        assert crypto_backend.verify_signature_sets(sets)
        assert not crypto_backend.verify_signature_sets(wrong)
        moved = testing.counters()["weighted_lane_passes"] - before
    assert (moved > 0) == (sets_per_message <= 256), moved
