"""Every official BLS case on every backend, and on the blst backend under every
SIMD mode (off, portable, auto: ``backend`` below).

bls12-381-tests v0.1.1 (96 JSON cases) and the consensus-spec-tests ``eth_*``
cases (20 YAML), read in place through ``tests/support/official_vectors.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

import crypto_backend
from crypto_backend import selection
from crypto_backend.backend import Backend
from tests.crypto_backend.conftest import SIMD_MODES, simd_mode, unhex
from tests.support.official_vectors import official_vectors, vectors_root

BLS_TESTS = ("bls", "bls12-381-tests_v0.1.1")
SPEC_TESTS = ("bls", "consensus-spec-tests", "tests", "general", "altair", "bls")
# The RFC 9380 test DST the hash_to_G2 cases were generated with (bls12-381-tests main.py).
HASH_TO_G2_TEST_DST = b"QUUX-V01-CS02-with-BLS12381G2_XMD:SHA-256_SSWU_RO_"
FIELD_MODULUS = int(
    "1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab",
    16,
)
EXPECTED_COUNTS = {
    "aggregate": 6, "aggregate_verify": 5, "batch_verify": 2, "deserialization_G1": 13,
    "deserialization_G2": 15, "fast_aggregate_verify": 12, "hash_to_G2": 4, "sign": 10,
    "verify": 29, "eth_aggregate_pubkeys": 8, "eth_fast_aggregate_verify": 12,
}


@pytest.fixture(
    params=[("blst", mode) for mode in SIMD_MODES] + [("arkworks", None)],
    ids=[f"blst-simd-{mode}" for mode in SIMD_MODES] + ["arkworks"],
)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend[Any, Any]]:
    """Each case once per backend, and once per SIMD mode on blst."""
    name, mode = request.param
    previous = crypto_backend.backend_name()
    crypto_backend.use(name)
    try:
        if mode is None:
            yield selection.current()
        else:
            with simd_mode(mode):
                yield selection.current()
    finally:
        crypto_backend.use(previous)


def _json_cases(handler: str) -> list[Any]:
    folder = vectors_root().joinpath(*BLS_TESTS, handler)
    found = sorted(folder.glob("*.json"))
    # A missing suite becomes one case that skips (or fails under CI=true).
    return [pytest.param(path, id=path.stem) for path in found] or [
        pytest.param(None, id=f"{handler}-missing")
    ]


def _yaml_cases(handler: str) -> list[Any]:
    folder = vectors_root().joinpath(*SPEC_TESTS, handler, "bls")
    found = sorted(folder.glob("*/data.yaml"))
    return [pytest.param(path, id=path.parent.name) for path in found] or [
        pytest.param(None, id=f"{handler}-missing")
    ]


def _load_json(handler: str, path: Path | None) -> dict[str, Any]:
    if path is None:
        official_vectors(*BLS_TESTS, handler)
        pytest.fail(f"no {handler} cases found")
    return json.loads(path.read_text())


def _load_yaml(handler: str, path: Path | None) -> dict[str, Any]:
    if path is None:
        official_vectors(*SPEC_TESTS, handler)
        pytest.fail(f"no {handler} cases found")
    return yaml.safe_load(path.read_text())


def test_every_suite_is_complete() -> None:
    counts = {}
    for handler in EXPECTED_COUNTS:
        if handler.startswith("eth_"):
            folder = official_vectors(*SPEC_TESTS, handler, "bls")
            counts[handler] = len(list(folder.glob("*/data.yaml")))
        else:
            counts[handler] = len(list(official_vectors(*BLS_TESTS, handler).glob("*.json")))
    assert counts == EXPECTED_COUNTS


@pytest.mark.parametrize("path", _json_cases("sign"))
def test_sign(backend: Backend[Any, Any], path: Path | None) -> None:
    case = _load_json("sign", path)
    secret = int.from_bytes(unhex(case["input"]["privkey"]), "big")
    message = unhex(case["input"]["message"])
    if case["output"] is None:
        with pytest.raises(crypto_backend.BlsError):
            crypto_backend.sign(secret, message)
        with pytest.raises(crypto_backend.BlsError):
            crypto_backend.sign_many([secret], message)
    else:
        assert crypto_backend.sign(secret, message) == unhex(case["output"])
        assert crypto_backend.sign_many([secret], message) == [unhex(case["output"])]


@pytest.mark.parametrize("path", _json_cases("verify"))
def test_verify(backend: Backend[Any, Any], path: Path | None) -> None:
    case = _load_json("verify", path)
    given = case["input"]
    verdict = crypto_backend.verify(
        unhex(given["pubkey"]), unhex(given["message"]), unhex(given["signature"])
    )
    assert verdict is case["output"]


@pytest.mark.parametrize("path", _json_cases("aggregate"))
def test_aggregate(backend: Backend[Any, Any], path: Path | None) -> None:
    case = _load_json("aggregate", path)
    signatures = [unhex(item) for item in case["input"]]
    if case["output"] is None:
        with pytest.raises(crypto_backend.BlsError):
            crypto_backend.aggregate(signatures)
    else:
        assert crypto_backend.aggregate(signatures) == unhex(case["output"])


@pytest.mark.parametrize("path", _json_cases("fast_aggregate_verify"))
def test_fast_aggregate_verify(backend: Backend[Any, Any], path: Path | None) -> None:
    case = _load_json("fast_aggregate_verify", path)
    given = case["input"]
    verdict = crypto_backend.fast_aggregate_verify(
        [unhex(key) for key in given["pubkeys"]], unhex(given["message"]),
        unhex(given["signature"]),
    )
    assert verdict is case["output"]


@pytest.mark.parametrize("path", _json_cases("aggregate_verify"))
def test_aggregate_verify(backend: Backend[Any, Any], path: Path | None) -> None:
    case = _load_json("aggregate_verify", path)
    given = case["input"]
    verdict = crypto_backend.aggregate_verify(
        [unhex(key) for key in given["pubkeys"]], [unhex(m) for m in given["messages"]],
        unhex(given["signature"]),
    )
    assert verdict is case["output"]


@pytest.mark.parametrize("path", _json_cases("batch_verify"))
def test_batch_verify(backend: Backend[Any, Any], path: Path | None) -> None:
    case = _load_json("batch_verify", path)
    given = case["input"]
    sets = [
        crypto_backend.SignatureSet([unhex(key)], unhex(message), unhex(signature))
        for key, message, signature in zip(
            given["pubkeys"], given["messages"], given["signatures"], strict=True
        )
    ]
    assert crypto_backend.verify_signature_sets(sets) is case["output"]


@pytest.mark.parametrize("path", _json_cases("deserialization_G1"))
def test_deserialization_g1(backend: Backend[Any, Any], path: Path | None) -> None:
    case = _load_json("deserialization_G1", path)
    encoding = unhex(case["input"]["pubkey"])
    if case["output"]:
        point = backend.decode_g1(encoding)
        assert backend.encode_g1(point) == encoding
    else:
        with pytest.raises(crypto_backend.BlsError):
            backend.decode_g1(encoding)
    # As a public key the identity is refused too.
    expected_key = case["output"] and encoding != crypto_backend.G1_POINT_AT_INFINITY
    assert crypto_backend.key_validate(encoding) is expected_key


@pytest.mark.parametrize("path", _json_cases("deserialization_G2"))
def test_deserialization_g2(backend: Backend[Any, Any], path: Path | None) -> None:
    case = _load_json("deserialization_G2", path)
    encoding = unhex(case["input"]["signature"])
    if case["output"]:
        assert crypto_backend.aggregate([encoding]) == encoding
    else:
        with pytest.raises(crypto_backend.BlsError):
            backend.decode_g2(encoding)
        with pytest.raises(crypto_backend.BlsError):
            crypto_backend.aggregate([encoding])


def _compressed_g2(x: str, y: str) -> bytes:
    """Compressed encoding of the affine G2 point given as "c0,c1" hex coordinates."""
    x_re, x_im = (int(part, 16) for part in x.split(","))
    y_re, y_im = (int(part, 16) for part in y.split(","))
    half = (FIELD_MODULUS - 1) // 2
    y_is_larger = y_im > half if y_im else y_re > half
    raw = bytearray(x_im.to_bytes(48, "big") + x_re.to_bytes(48, "big"))
    raw[0] |= 0x80 | (0x20 if y_is_larger else 0)
    return bytes(raw)


@pytest.mark.parametrize("path", _json_cases("hash_to_G2"))
def test_hash_to_g2(backend: Backend[Any, Any], path: Path | None) -> None:
    case = _load_json("hash_to_G2", path)
    hashed = backend.hash_to_g2(case["input"]["msg"].encode(), HASH_TO_G2_TEST_DST)
    assert backend.encode_g2(hashed) == _compressed_g2(case["output"]["x"], case["output"]["y"])


@pytest.mark.parametrize("path", _yaml_cases("eth_aggregate_pubkeys"))
def test_eth_aggregate_pubkeys(backend: Backend[Any, Any], path: Path | None) -> None:
    case = _load_yaml("eth_aggregate_pubkeys", path)
    pubkeys = [unhex(key) for key in case["input"]]
    if case["output"] is None:
        with pytest.raises(crypto_backend.BlsError):
            crypto_backend.eth_aggregate_pubkeys(pubkeys)
    else:
        assert crypto_backend.eth_aggregate_pubkeys(pubkeys) == unhex(case["output"])


@pytest.mark.parametrize("path", _yaml_cases("eth_fast_aggregate_verify"))
def test_eth_fast_aggregate_verify(backend: Backend[Any, Any], path: Path | None) -> None:
    case = _load_yaml("eth_fast_aggregate_verify", path)
    given = case["input"]
    verdict = crypto_backend.eth_fast_aggregate_verify(
        [unhex(key) for key in given["pubkeys"]], unhex(given["message"]),
        unhex(given["signature"]),
    )
    assert verdict is case["output"]
