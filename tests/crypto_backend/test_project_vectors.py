"""The project's own cases (vectors/crypto, made by vectors/crypto/generate.py with
py_ecc as the oracle) on every backend, batches with and without lanes."""

from __future__ import annotations

from typing import Any

import pytest

import crypto_backend
from crypto_backend.backend import Backend
from tests.crypto_backend.conftest import project_vectors, unhex

DECODING = project_vectors("decoding.json")["cases"]
SIGNING = project_vectors("sign.json")
VERIFYING = project_vectors("verify.json")["cases"]
BATCHES = project_vectors("batches.json")
SIGNER_PUBKEY = unhex(SIGNING["keys"][0]["pubkey"])
MESSAGES = [unhex(message) for message in SIGNING["messages"]]


def _params(cases: list[dict[str, Any]]) -> list[Any]:
    """One param per case, or a single failing one: an empty list would collect no test,
    which pytest reports as a skip, not a failure."""
    return [pytest.param(case, id=case["name"]) for case in cases] or [
        pytest.param(None, id="no-cases")
    ]


def test_the_generated_files_hold_every_section() -> None:
    assert len([c for c in DECODING if c["group"] == "G1"]) >= 35
    assert len([c for c in DECODING if c["group"] == "G2"]) >= 35
    signer_counts = {
        len(case["input"]["pubkeys"])
        for case in VERIFYING
        if case["function"] == "fast_aggregate_verify" and case["name"].endswith("_valid")
    }
    assert signer_counts == set(range(1, 18))
    batch_names = {batch["name"] for batch in BATCHES["batches"]}
    for size in range(2, 18):
        assert {f"{size}_sets_bad_at_{position}" for position in range(size)} <= batch_names


@pytest.mark.parametrize("case", _params(DECODING))
def test_decoding(backend: Backend[Any, Any], case: dict[str, Any]) -> None:
    assert case is not None, "decoding.json holds no case"
    encoding = unhex(case["encoding"])
    if case["group"] == "G1":
        decode, encode = backend.decode_g1, backend.encode_g1
        assert crypto_backend.key_validate(encoding) is case["key"]
    else:
        decode, encode = backend.decode_g2, backend.encode_g2
        if not case["point"]:
            # A signature that does not decode is a false verdict, never an error.
            assert crypto_backend.verify(SIGNER_PUBKEY, b"m", encoding) is False
            with pytest.raises(crypto_backend.BlsError):
                crypto_backend.aggregate([encoding])
    if case["point"]:
        assert encode(decode(encoding)) == encoding
    else:
        with pytest.raises(crypto_backend.BlsError):
            decode(encoding)


def test_sk_to_pk_sign_and_sign_many(backend: Backend[Any, Any]) -> None:
    assert SIGNING["keys"] and MESSAGES, "sign.json holds no key or no message"
    secrets = [int.from_bytes(unhex(key["secret"]), "big") for key in SIGNING["keys"]]
    for key, secret in zip(SIGNING["keys"], secrets, strict=True):
        assert crypto_backend.sk_to_pk(secret) == unhex(key["pubkey"])
        for message, signature in zip(MESSAGES, key["signatures"], strict=True):
            assert crypto_backend.sign(secret, message) == unhex(signature)
    for index, message in enumerate(MESSAGES):
        expected = [unhex(key["signatures"][index]) for key in SIGNING["keys"]]
        assert crypto_backend.sign_many(secrets, message) == expected


def _run_verify_case(case: dict[str, Any]) -> bool:
    given = case["input"]
    function = case["function"]
    if function == "verify":
        return crypto_backend.verify(
            unhex(given["pubkey"]), unhex(given["message"]), unhex(given["signature"])
        )
    pubkeys = [unhex(key) for key in given["pubkeys"]]
    if function == "aggregate_verify":
        return crypto_backend.aggregate_verify(
            pubkeys, [unhex(m) for m in given["messages"]], unhex(given["signature"])
        )
    verify = getattr(crypto_backend, function)
    result: bool = verify(pubkeys, unhex(given["message"]), unhex(given["signature"]))
    return result


@pytest.mark.parametrize("case", _params(VERIFYING))
def test_verify_functions(backend: Backend[Any, Any], case: dict[str, Any]) -> None:
    assert case is not None, "verify.json holds no case"
    assert _run_verify_case(case) is case["expected"]


def _batch_sets(batch: dict[str, Any]) -> list[crypto_backend.SignatureSet]:
    pool = BATCHES["sets"]
    return [
        crypto_backend.SignatureSet(
            [unhex(key) for key in pool[index]["pubkeys"]],
            unhex(pool[index]["message"]),
            unhex(pool[index]["signature"]),
        )
        for index in batch["sets"]
    ]


def test_each_pooled_set_alone_is_what_the_file_says(backend: Backend[Any, Any]) -> None:
    assert BATCHES["sets"], "batches.json holds no set"
    for item in BATCHES["sets"]:
        keys = [unhex(key) for key in item["pubkeys"]]
        message, signature = unhex(item["message"]), unhex(item["signature"])
        assert crypto_backend.fast_aggregate_verify(keys, message, signature) is item["valid"]
        assert crypto_backend.verify_signature_sets([(keys, message, signature)]) is item["valid"]


@pytest.mark.parametrize("batch", _params(BATCHES["batches"]))
def test_verify_signature_sets(
    lane_setting: int, backend: Backend[Any, Any], batch: dict[str, Any]
) -> None:
    assert batch is not None, "batches.json holds no batch"
    sets = _batch_sets(batch)
    assert crypto_backend.verify_signature_sets(sets) is batch["expected"]
    # The verdict is the conjunction of the single checks.
    pool = BATCHES["sets"]
    assert batch["expected"] is (bool(sets) and all(pool[i]["valid"] for i in batch["sets"]))
