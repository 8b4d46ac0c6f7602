"""Fixtures shared by the crypto_backend tests."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import crypto_backend
from crypto_backend import selection, simd, threads
from crypto_backend.backend import Backend

PROJECT_VECTORS = Path(__file__).resolve().parents[2] / "vectors" / "crypto"


def project_vectors(name: str) -> Any:
    return json.loads((PROJECT_VECTORS / name).read_text())


def unhex(text: str) -> bytes:
    return bytes.fromhex(text.removeprefix("0x"))


@pytest.fixture(params=selection.BACKEND_NAMES)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend[Any, Any]]:
    """Each test runs once per backend, selected through the public ``use``."""
    previous = crypto_backend.backend_name()
    crypto_backend.use(request.param)
    try:
        yield selection.current()
    finally:
        crypto_backend.use(previous)


@contextmanager
def simd_mode(mode: str) -> Iterator[None]:
    """Run the native core under a ``VALIDATOR_BLS_SIMD`` mode, the key cache emptied
    before and after so that every key is decoded on that path."""
    previous = simd.mode()
    native = selection.backend_named("blst")
    simd.configure(mode)
    native.clear_key_cache()
    try:
        yield
    finally:
        simd.configure(previous)
        native.clear_key_cache()


def ifma_or_skip() -> None:
    """Skip an IFMA-layer test on a CPU without AVX-512 IFMA, saying so; fail it
    instead under VALIDATOR_BLS_SIMD=require (a host that must exercise it)."""
    if simd.ifma_available():
        return
    message = "this CPU has no AVX-512 IFMA (no avx512ifma in /proc/cpuinfo)"
    if os.environ.get(simd.SIMD_ENV, "").strip().lower() == "require":
        pytest.fail(f"VALIDATOR_BLS_SIMD=require, but {message}")
    pytest.skip(f"IFMA layer not tested: {message}; the portable layer is")


def _fresh_seed() -> int:
    # Under pytest-xdist every worker of one run derives the same seed from the run's
    # id, so that tests on different workers can share inputs (the IFMA tests take
    # the portable tests' inputs).
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run_id is None:
        return secrets.randbits(32)
    return int.from_bytes(hashlib.sha256(run_id.encode()).digest()[:4], "big")


@pytest.fixture(scope="module")
def seed() -> int:
    """A fresh seed per run, printed so that a failure can be replayed."""
    value = int(os.environ.get("SIMD_TEST_SEED", _fresh_seed()))
    print(f"SIMD differential seed: {value} (SIMD_TEST_SEED={value} replays it)")
    return value


@pytest.fixture
def soak(request: pytest.FixtureRequest) -> Iterator[None]:
    if not request.config.getoption("--soak"):
        pytest.skip("soak run only with --soak (millions of inputs: each soak test says how many)")
    yield


#: The SIMD modes every official vector runs under on the blst backend.
SIMD_MODES = ("off", "portable", "auto")


@pytest.fixture(params=[1, 2], ids=["one_lane", "two_lanes"], scope="module")
def lane_setting(request: pytest.FixtureRequest) -> Iterator[int]:
    """Run a module's tests on one lane (the calling thread) and on two lane threads."""
    threads.set_lane_count(request.param)
    try:
        yield request.param
    finally:
        threads.set_lane_count(None)


@pytest.fixture
def one_lane() -> Iterator[None]:
    threads.set_lane_count(1)
    try:
        yield
    finally:
        threads.set_lane_count(None)


class PairingWatch:
    """Proves that no pairing was computed: the Python primitive is replaced by one
    that fails (portable backends), and the native core's pairing counter must not
    move (blst, whose operations never call back into Python)."""

    def __init__(self, backend: Backend[Any, Any], monkeypatch: pytest.MonkeyPatch) -> None:
        def forbidden(*_args: object) -> bool:
            raise AssertionError("a pairing was computed")

        monkeypatch.setattr(backend, "pairings_equal_signature", forbidden)
        self.native = backend.name == "blst"
        self.before = self._native_pairings()

    def _native_pairings(self) -> int:
        if not self.native:
            return 0
        from crypto_backend._native import testing

        return testing.counters()["pairing_checks"]

    def check(self) -> None:
        assert self._native_pairings() == self.before, "the native core computed a pairing"


@pytest.fixture
def no_pairing(backend: Backend[Any, Any], monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    watch = PairingWatch(backend, monkeypatch)
    yield
    watch.check()
