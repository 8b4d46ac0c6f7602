"""The 8-lane G1 multiplication (sk_to_pk) and the 8-lane G2 multiplication
(sign_many) of the kernels crate (crypto_backend/native/kernels, ``bls_lanes::mul``)
are constant time: run under valgrind's memcheck with the secret scalars marked
undefined (a client request from the test-only binary tests/ct_check, which depends
on the kernels crate and runs the same code), no
branch and no memory address may depend on them. The binary's ``--leak`` mode
branches on a secret bit on purpose, to show that memcheck does see such a
dependence in this set-up. The keys and signatures it prints are checked against
blst's.

Valgrind is Debian's package (``.ci/run`` installs it when missing); without it the
test skips, except under CI=true, where it fails.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import subprocess
from pathlib import Path

import pytest
from py_ecc.bls.hash_to_curve import hash_to_G2
from py_ecc.optimized_bls12_381 import normalize

import crypto_backend
from crypto_backend._native import testing
from tests.crypto_backend.conftest import ifma_or_skip
from tests.support.official_vectors import REPO_ROOT

CHECK_CRATE = REPO_ROOT / "tests" / "ct_check"
TARGET_DIR = REPO_ROOT / "target" / "ct_check"
UNINITIALISED = ("depends on uninitialised value", "Use of uninitialised value")


@pytest.fixture(scope="module")
def valgrind() -> str:
    found = shutil.which("valgrind")
    if found is None:
        message = "valgrind is not installed (apt-get install valgrind)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.fixture(scope="module")
def ct_binary() -> Path:
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "--manifest-path",
         str(CHECK_CRATE / "Cargo.toml"), "--target-dir", str(TARGET_DIR)],
        check=True, timeout=600,
    )
    return TARGET_DIR / "release" / "ct_check"


def _memcheck(
    valgrind: str, binary: Path, scalars: list[int], *flags: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [valgrind, "--tool=memcheck", "--error-exitcode=99", str(binary), *flags,
         *(f"{scalar:064x}" for scalar in scalars)],
        capture_output=True, text=True, timeout=300,
    )


def _secret_keys() -> list[int]:
    # Edge keys beside random ones: 1, the largest, and digits 0 and 15 in every window.
    order = crypto_backend.CURVE_ORDER
    return [1, order - 1, int("f" * 62, 16), 16**60] + [
        secrets.randbelow(order - 1) + 1 for _ in range(4)
    ]


MESSAGE = b"a message signed by eight keys at once"


def _uncompressed_hash(message: bytes) -> str:
    """H(message) uncompressed (x1, x0, y1, y0), computed by py_ecc, not by blst."""
    x, y = normalize(hash_to_G2(message, crypto_backend.DST, hashlib.sha256))
    return b"".join(
        value.to_bytes(48, "big") for value in (x.coeffs[1], x.coeffs[0], y.coeffs[1], y.coeffs[0])
    ).hex()


#: Per group: the binary's flags and what blst computes for a key.
GROUPS = {
    "g1 sk_to_pk": (lambda: [], crypto_backend.sk_to_pk),
    "g2 sign": (lambda: ["--g2", _uncompressed_hash(MESSAGE)],
                lambda key: crypto_backend.sign(key, MESSAGE)),
}


@pytest.mark.parametrize("group", GROUPS)
def test_no_branch_or_address_depends_on_the_secret_scalars(
    valgrind: str, ct_binary: Path, group: str
) -> None:
    flags, expected = GROUPS[group]
    keys = _secret_keys()
    done = _memcheck(valgrind, ct_binary, keys, *flags())
    for report in UNINITIALISED:
        assert report not in done.stderr, done.stderr[-4000:]
    assert "ERROR SUMMARY: 0 errors" in done.stderr
    assert done.returncode == 0, done.stderr[-4000:]
    printed = [bytes.fromhex(line) for line in done.stdout.split()]
    assert printed == [expected(key) for key in keys]


@pytest.mark.parametrize("group", GROUPS)
def test_memcheck_sees_a_branch_on_the_secret(
    valgrind: str, ct_binary: Path, group: str
) -> None:
    flags, _ = GROUPS[group]
    done = _memcheck(valgrind, ct_binary, _secret_keys(), "--leak", *flags())
    assert "Conditional jump or move depends on uninitialised value(s)" in done.stderr
    assert done.returncode == 99


@pytest.mark.parametrize("count", [1, 8, 13])
def test_lane_public_keys_are_blsts(count: int) -> None:
    keys = _secret_keys()[:count] + [secrets.randbelow(crypto_backend.CURVE_ORDER - 1) + 1
                                     for _ in range(max(0, count - 8))]
    assert testing.sk_to_pk_lanes(keys, "portable") == [crypto_backend.sk_to_pk(k) for k in keys]


def test_ifma_public_keys_match_portable() -> None:
    ifma_or_skip()
    keys = [secrets.randbelow(crypto_backend.CURVE_ORDER - 1) + 1 for _ in range(64)]
    assert testing.sk_to_pk_lanes(keys, "avx512ifma") == testing.sk_to_pk_lanes(keys, "portable")
