"""The final exponentiation on a SIMD path (``pairing::final_exp_on`` of the native
core): blst's easy part, then the hard part's squarings on the kernels crate's
``cyclotomic`` kernel, one Fp12 value spread over the lanes.

- on the portable layer and, where the CPU has AVX-512 IFMA, on the IFMA layer, the
  final exponentiation of Fp12 values equals blst_final_exp's, bit for bit: zero,
  one, elements of edge coordinates and random ones (not Miller values: the
  exponentiation is defined on every value, and the easy part puts any non-zero one
  in the cyclotomic subgroup the kernel's formula needs);
- real pairings go through it in ``test_simd_miller`` (``miller_final_on``);
- ``verify`` under ``portable`` runs the kernel and answers as under ``off``, and
  ``off`` never runs it.
"""

from __future__ import annotations

import random

import crypto_backend
from crypto_backend._native import testing
from tests.crypto_backend.conftest import ifma_or_skip, simd_mode
from tests.crypto_backend.test_simd_miller import fp12_elements

#: About 2.5 ms each on the portable layer of this project's 2-core host.
PORTABLE_VALUES = 400
IFMA_VALUES = 4_000
#: blst's Montgomery limbs out: 12 coordinates of 6 little-endian words.
FP12_OUT_BYTES = 12 * 48


def test_portable_final_exp_matches_blst(seed: int) -> None:
    values = fp12_elements(PORTABLE_VALUES, random.Random(seed))
    want = testing.final_exp_on(values, "none")
    assert testing.final_exp_on(values, "portable") == want
    # The comparison can fail: distinct inputs give distinct outputs here.
    outputs = {want[i:i + FP12_OUT_BYTES] for i in range(0, len(want), FP12_OUT_BYTES)}
    assert len(outputs) > PORTABLE_VALUES // 2


def test_ifma_final_exp_matches_blst(seed: int) -> None:
    ifma_or_skip()
    values = fp12_elements(IFMA_VALUES, random.Random(seed ^ 1))
    assert testing.final_exp_on(values, "avx512ifma") == testing.final_exp_on(values, "none")


def test_verify_runs_the_kernel_on_a_simd_path_only(seed: int) -> None:
    rng = random.Random(seed)
    crypto_backend.use("blst")
    secret = rng.randrange(1, crypto_backend.CURVE_ORDER)
    key = crypto_backend.sk_to_pk(secret)
    message = rng.randbytes(32)
    signature = crypto_backend.sign(secret, message)
    other = crypto_backend.sign(secret, b"another message")

    def answers() -> list[bool]:
        return [crypto_backend.verify(key, message, signature),
                crypto_backend.verify(key, message, other),
                crypto_backend.verify(key, b"another message", other)]

    with simd_mode("off"):
        before = testing.counters()["cyclotomic_lane_runs"]
        assert answers() == [True, False, True]
        assert testing.counters()["cyclotomic_lane_runs"] == before
    with simd_mode("portable"):
        before = testing.counters()["cyclotomic_lane_runs"]
        assert answers() == [True, False, True]
        # Five exponentiations by x a check, each one kernel entry.
        assert testing.counters()["cyclotomic_lane_runs"] - before >= 3 * 5
