"""The public surface other packages call: names, errors, backend selection, key cache."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import threading
from typing import Any

import pytest

import crypto_backend
from crypto_backend import selection
from crypto_backend.backend import Backend
from crypto_backend.blst_backend import BlstBackend
from tests.support.official_vectors import REPO_ROOT

DESIGN_FUNCTIONS = {
    "sk_to_pk": ["sk"],
    "sign": ["sk", "message"],
    "verify": ["pubkey", "message", "signature"],
    "aggregate": ["signatures"],
    "fast_aggregate_verify": ["pubkeys", "message", "signature"],
    "aggregate_verify": ["pubkeys", "messages", "signature"],
    "key_validate": ["pubkey"],
    "eth_aggregate_pubkeys": ["pubkeys"],
    "eth_fast_aggregate_verify": ["pubkeys", "message", "signature"],
    "verify_signature_sets": ["sets"],
    "sign_many": ["sks", "message"],
    "use": ["name"],
    "backend_name": [],
    "key_validate_many": ["pubkeys"],
    "warm_pubkeys": ["pubkeys"],
    "info": [],
}


def test_the_design_api_is_there_with_its_parameter_names() -> None:
    for name, parameters in DESIGN_FUNCTIONS.items():
        function = getattr(crypto_backend, name)
        assert list(inspect.signature(function).parameters) == parameters, name
        assert name in crypto_backend.__all__
    assert issubclass(crypto_backend.BlsError, ValueError)
    assert crypto_backend.SignatureSet._fields == ("pubkeys", "message", "signature")
    assert set(crypto_backend.BACKEND_NAMES) == {"blst", "arkworks"}


@pytest.mark.parametrize("sk", [0, -1, crypto_backend.CURVE_ORDER, crypto_backend.CURVE_ORDER + 5])
def test_secret_keys_outside_the_range_are_bls_errors(backend: Backend[Any, Any], sk: int) -> None:
    with pytest.raises(crypto_backend.BlsError):
        crypto_backend.sk_to_pk(sk)
    with pytest.raises(crypto_backend.BlsError):
        crypto_backend.sign(sk, b"m")
    with pytest.raises(crypto_backend.BlsError):
        crypto_backend.sign_many([1, 2, sk], b"m")


def test_the_edges_of_the_secret_key_range_sign(backend: Backend[Any, Any]) -> None:
    top = crypto_backend.CURVE_ORDER - 1
    assert crypto_backend.verify(crypto_backend.sk_to_pk(top), b"m", crypto_backend.sign(top, b"m"))
    assert crypto_backend.verify(crypto_backend.sk_to_pk(1), b"m", crypto_backend.sign(1, b"m"))


def test_wrong_python_types_are_type_errors() -> None:
    with pytest.raises(TypeError):
        crypto_backend.sign(True, b"m")
    with pytest.raises(TypeError):
        crypto_backend.sk_to_pk(b"\x01" * 32)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        crypto_backend.verify("00" * 48, b"m", b"s" * 96)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        crypto_backend.fast_aggregate_verify(b"k" * 48, b"m", b"s" * 96)
    with pytest.raises(TypeError):
        crypto_backend.sign_many(5, b"m")  # type: ignore[arg-type]


def test_sign_many_checks_every_key_before_signing_any() -> None:
    assert crypto_backend.sign_many([], b"m") == []
    with pytest.raises(crypto_backend.BlsError):
        crypto_backend.sign_many([*range(1, 50), 0], b"m")


def test_functions_returning_bytes_raise_on_malformed_input(backend: Backend[Any, Any]) -> None:
    with pytest.raises(crypto_backend.BlsError):
        crypto_backend.aggregate([])
    with pytest.raises(crypto_backend.BlsError, match="signature 1"):
        crypto_backend.aggregate([crypto_backend.sign(3, b"m"), b"\x00" * 96])
    with pytest.raises(crypto_backend.BlsError):
        crypto_backend.eth_aggregate_pubkeys([])
    with pytest.raises(crypto_backend.BlsError, match="public key 0"):
        crypto_backend.eth_aggregate_pubkeys([b"\x00" * 48])


def test_verdicts_on_malformed_input_are_false_not_errors(backend: Backend[Any, Any]) -> None:
    key, signature = crypto_backend.sk_to_pk(3), crypto_backend.sign(3, b"m")
    assert crypto_backend.verify(key, b"m", signature)
    assert not crypto_backend.verify(key[:-1], b"m", signature)
    assert not crypto_backend.verify(key, b"m", signature + b"\x00")
    assert not crypto_backend.fast_aggregate_verify([key, b""], b"m", signature)
    assert not crypto_backend.aggregate_verify([key], [b"m", b"n"], signature)
    assert not crypto_backend.aggregate_verify([key, key], [b"m"], signature)
    assert not crypto_backend.key_validate(b"")


def test_bytes_like_inputs_are_accepted(backend: Backend[Any, Any]) -> None:
    key, signature = crypto_backend.sk_to_pk(3), crypto_backend.sign(3, b"m")
    assert crypto_backend.verify(bytearray(key), memoryview(b"m"), bytearray(signature))
    assert crypto_backend.key_validate(memoryview(key))


def test_use_selects_and_reports_the_backend() -> None:
    previous = crypto_backend.backend_name()
    try:
        crypto_backend.use("arkworks")
        assert crypto_backend.backend_name() == "arkworks"
        crypto_backend.use("blst")
        assert crypto_backend.backend_name() == "blst"
        with pytest.raises(ValueError, match="unknown BLS backend"):
            crypto_backend.use("blspy")
        assert crypto_backend.backend_name() == "blst"
    finally:
        crypto_backend.use(previous)


def _fresh_interpreter(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != selection.BACKEND_ENV}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=environment, capture_output=True,
        text=True, timeout=60, check=False,
    )


def test_the_environment_variable_selects_the_backend() -> None:
    code = "import crypto_backend; print(crypto_backend.backend_name())"
    assert _fresh_interpreter(code).stdout.strip() == "blst"
    chosen = _fresh_interpreter(code, VALIDATOR_BLS_BACKEND="arkworks")
    assert chosen.stdout.strip() == "arkworks"
    wrong = _fresh_interpreter(code, VALIDATOR_BLS_BACKEND="blts")
    assert wrong.returncode != 0
    assert "VALIDATOR_BLS_BACKEND" in wrong.stderr and "blts" in wrong.stderr


def test_concurrent_use_never_mixes_backends_within_a_call() -> None:
    key, signature = crypto_backend.sk_to_pk(11), crypto_backend.sign(11, b"m")
    previous = crypto_backend.backend_name()
    failures: list[str] = []
    stop = threading.Event()

    def switch() -> None:
        while not stop.is_set():
            for name in selection.BACKEND_NAMES:
                crypto_backend.use(name)

    def check() -> None:
        for _ in range(40):
            if not crypto_backend.verify(key, b"m", signature):
                failures.append("valid signature refused")
            if crypto_backend.verify(key, b"n", signature):
                failures.append("invalid signature accepted")

    switcher = threading.Thread(target=switch)
    checkers = [threading.Thread(target=check) for _ in range(3)]
    switcher.start()
    for thread in checkers:
        thread.start()
    for thread in checkers:
        thread.join(timeout=60)
    stop.set()
    switcher.join(timeout=10)
    crypto_backend.use(previous)
    assert not failures


def test_each_key_is_decoded_once_per_process(backend: Backend[Any, Any]) -> None:
    key = crypto_backend.sk_to_pk(0xABCDEF)
    before = backend.key_cache_stats()
    assert crypto_backend.key_validate(key)
    assert crypto_backend.verify(key, b"m", crypto_backend.sign(0xABCDEF, b"m"))
    assert crypto_backend.fast_aggregate_verify([key, key], b"m", crypto_backend.aggregate(
        [crypto_backend.sign(0xABCDEF, b"m")] * 2))
    after = backend.key_cache_stats()
    assert after.misses - before.misses == 1
    assert after.hits - before.hits == 3


def test_the_key_cache_is_bounded_and_remembers_refusals() -> None:
    small = BlstBackend(key_cache_size=2)
    keys = [small.encode_g1(small.g1_generator_times(sk)) for sk in (1, 2, 3)]
    for key in keys:
        assert small.pubkey(key) is not None
    assert small.key_cache_stats().size == 2
    bad = b"\x00" * 48
    assert small.pubkey(bad) is None
    assert small.pubkey(bad) is None
    assert small.key_cache_stats().hits == 1
    small.clear_key_cache()
    assert small.key_cache_stats().size == 0
    with pytest.raises(ValueError):
        BlstBackend(key_cache_size=0)
