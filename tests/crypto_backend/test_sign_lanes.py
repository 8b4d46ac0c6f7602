"""sign_many through the constant-time 8-lane G2 kernel (the kernels crate's
``mul::g2``, driven by the suite crate's ``sign``) against blst's signatures.

- the portable layer against blst on edge keys (1, 2, r - 1, r - 2, keys whose
  windows are all 0xf, powers of two, r - 2^k) and random keys, each with random
  messages: 100,000 inputs in PARTS tests that the test workers share (on one lane
  of this project's 2-core host a part took 70 to 84 s, blst's side included:
  about 5 minutes of CPU in all); ``--soak``: 10,000,000;
- the IFMA layer against blst on the same 100,000 inputs, and against the portable
  layer directly on 4,000 (skipped, with a line saying why, on a CPU without
  AVX-512 IFMA, except under VALIDATOR_BLS_SIMD=require);
- the public call: sign_many under VALIDATOR_BLS_SIMD=portable equals sign_many
  under off for 1, 7, 8, 9, 17 and 1,000 keys, through the kernel; refused keys
  stop it before anything is signed.

The constant-time check of the kernel is in test_constant_time.py; the official
sign cases run through sign_many under every SIMD mode in test_official_vectors.py.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

import crypto_backend
from crypto_backend import simd
from crypto_backend._native import testing
from tests.crypto_backend.conftest import ifma_or_skip, simd_mode

R_ORDER = crypto_backend.CURVE_ORDER
CASES = 100_000
#: The CASES inputs are signed in this many tests, so that two test workers share them.
PARTS = 4
SOAK_CASES = 10_000_000
#: Keys signed per message: five kernel passes, the last one short.
KEYS_PER_MESSAGE = 37


def edge_keys() -> list[int]:
    all_f = [int("f" * digits, 16) for digits in (1, 2, 16, 32, 62, 63)]
    return sorted(
        {1, 2, 3, 15, 16, 17, R_ORDER - 1, R_ORDER - 2, R_ORDER - 3, R_ORDER // 2,
         int("6" + "f" * 63, 16), int("0f" * 31, 16), int("f0" * 31, 16)}
        | set(all_f)
        | {1 << k for k in range(255)}
        | {R_ORDER - (1 << k) for k in range(255)}
    )


def random_message(rng: random.Random) -> bytes:
    return rng.randbytes(rng.choice([0, 1, 32, 32, 32, 100]))


def signed_batches(keys: list[int], rng: random.Random) -> Iterator[tuple[list[int], bytes]]:
    for start in range(0, len(keys), KEYS_PER_MESSAGE):
        yield keys[start:start + KEYS_PER_MESSAGE], random_message(rng)


def inputs(count: int, rng: random.Random) -> list[int]:
    """Every edge key first, then random keys up to ``count``, shuffled."""
    keys = edge_keys()
    keys += [rng.randrange(1, R_ORDER) for _ in range(max(0, count - len(keys)))]
    rng.shuffle(keys)
    return keys


def assert_layer_signs_as(layer: str, reference: str, keys: list[int], seed: int) -> None:
    rng = random.Random(seed)
    for batch, message in signed_batches(keys, rng):
        got = testing.sign_many_lanes(batch, message, layer)
        want = testing.sign_many_lanes(batch, message, reference)
        for key, mine, theirs in zip(batch, got, want, strict=True):
            assert mine == theirs, (
                f"{layer} signed key {key:#x} on {message.hex()!r} as {mine.hex()}, "
                f"{reference} as {theirs.hex()} (seed {seed})")


def part_inputs(seed: int, part: int) -> list[int]:
    """The keys of one part: every edge key, then random keys up to CASES / PARTS."""
    return inputs(CASES // PARTS, random.Random(seed + part))


@pytest.mark.parametrize("part", range(PARTS))
def test_portable_kernel_signs_as_blst(seed: int, part: int) -> None:
    passes = testing.counters()["sign_lane_passes"]
    keys = part_inputs(seed, part)
    assert_layer_signs_as("portable", "none", keys, seed + part)
    assert testing.counters()["sign_lane_passes"] - passes >= len(keys) // 8


def test_the_kernel_signatures_are_blsts_own_sign() -> None:
    """The reference of the differential is blst's sign itself, not a copy of it."""
    keys = [1, 2, R_ORDER - 1, 12345]
    message = b"the reference"
    assert testing.sign_many_lanes(keys, message, "portable") == [
        crypto_backend.sign(key, message) for key in keys]


@pytest.mark.parametrize("part", range(PARTS))
def test_ifma_kernel_signs_as_blst(seed: int, part: int) -> None:
    """The portable test's inputs (same seed, same part): the layers agree on all."""
    ifma_or_skip()
    assert_layer_signs_as("avx512ifma", "none", part_inputs(seed, part), seed + part)


def test_ifma_kernel_signs_as_portable(seed: int) -> None:
    ifma_or_skip()
    keys = inputs(4_000, random.Random(seed))
    assert_layer_signs_as("avx512ifma", "portable", keys, seed)


@pytest.mark.parametrize("count", [1, 7, 8, 9, 17, 1000])
def test_sign_many_under_portable_equals_off(count: int) -> None:
    rng = random.Random(count)
    keys = [rng.randrange(1, R_ORDER) for _ in range(count)]
    message = rng.randbytes(32)
    crypto_backend.use("blst")
    with simd_mode("off"):
        passes = testing.counters()["sign_lane_passes"]
        expected = crypto_backend.sign_many(keys, message)
        assert testing.counters()["sign_lane_passes"] == passes
    with simd_mode("portable"):
        assert crypto_backend.sign_many(keys, message) == expected
        assert testing.counters()["sign_lane_passes"] - passes == -(-count // 8)
    assert expected[:9] == [crypto_backend.sign(key, message) for key in keys[:9]]


@pytest.mark.parametrize("count", [1, 7, 8, 9])
def test_fewer_keys_than_a_lane_group_sign_on_blst_under_ifma(count: int) -> None:
    """Under IFMA a batch of fewer than eight keys makes no lane pass (blst signs them
    faster one by one); from eight on the lanes sign, and the signatures are the same."""
    ifma_or_skip()
    rng = random.Random(1000 + count)
    keys = [rng.randrange(1, R_ORDER) for _ in range(count)]
    message = rng.randbytes(32)
    crypto_backend.use("blst")
    with simd_mode("auto"):
        assert simd.path() == "avx512ifma"
        passes = testing.counters()["sign_lane_passes"]
        signatures = crypto_backend.sign_many(keys, message)
        made = testing.counters()["sign_lane_passes"] - passes
    assert made == (0 if count < 8 else -(-count // 8))
    assert signatures == [crypto_backend.sign(key, message) for key in keys]


@pytest.mark.parametrize("bad", [0, R_ORDER, R_ORDER + 1, 1 << 256])
def test_sign_many_under_portable_refuses_a_bad_key_before_signing_any(bad: int) -> None:
    keys = [5, 6, 7, 8, 9, 10, 11, 12, 13, bad]
    crypto_backend.use("blst")
    with simd_mode("portable"):
        passes = testing.counters()["sign_lane_passes"]
        hashes = testing.counters()["hashes_to_g2"]
        with pytest.raises(crypto_backend.BlsError):
            crypto_backend.sign_many(keys, b"never signed")
        assert testing.counters()["sign_lane_passes"] == passes
        assert testing.counters()["hashes_to_g2"] == hashes


def test_soak_sign_lanes(seed: int, soak: None) -> None:
    """10,000,000 keys on the portable layer (and IFMA where present) against blst."""
    rng = random.Random(seed)
    layers = ["portable"] + (["avx512ifma"] if simd.ifma_available() else [])
    done = 0
    while done < SOAK_CASES:
        keys = [rng.randrange(1, R_ORDER) for _ in range(min(20_000, SOAK_CASES - done))]
        for layer in layers:
            assert_layer_signs_as(layer, "none", keys, seed + done)
        done += len(keys)
