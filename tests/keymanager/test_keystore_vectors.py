"""The official EIP-2335 vectors: the ERC's scrypt and pbkdf2 cases, deposit-cli's keystores
and its password-processing cases, read in place from ../shared/vectors/eip2335."""

from __future__ import annotations

import json
from typing import Any

import pytest

import crypto_backend
from keymanager.keystore import (
    ScryptKdf,
    WrongPasswordError,
    decrypt_keystore,
    normalize_password,
    parse_keystore,
)
from tests.support.official_vectors import official_vectors


def _load(*parts: str) -> Any:
    return json.loads(official_vectors("eip2335", *parts).read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "file_name", ["erc2335_pbkdf2_test_vector.json", "erc2335_scrypt_test_vector.json"]
)
def test_erc_vector_decrypts_to_its_secret(file_name: str) -> None:
    vector = _load(file_name)
    assert normalize_password(vector["password"]).hex() == vector["password_utf8_hex"][2:]
    keystore = parse_keystore(json.dumps(vector["keystore"]))
    secret = decrypt_keystore(keystore, vector["password"])
    assert secret.to_bytes(32, "big").hex() == vector["secret"][2:]
    assert crypto_backend.sk_to_pk(secret).hex() == vector["pubkey"]
    assert keystore.path == vector["path"]


def test_erc_scrypt_vector_uses_the_standard_cost() -> None:
    kdf = parse_keystore(
        json.dumps(_load("erc2335_scrypt_test_vector.json")["keystore"])
    ).crypto.kdf
    assert isinstance(kdf, ScryptKdf)
    assert (kdf.params.n, kdf.params.r, kdf.params.p) == (2**18, 8, 1)


def test_erc_pbkdf2_vector_opens_with_any_nfkd_equivalent_password() -> None:
    # The fraktur letters decompose (NFKD) to ASCII, control codes vanish: all the same key.
    vector = _load("erc2335_pbkdf2_test_vector.json")
    keystore = json.dumps(vector["keystore"])
    expected = int(vector["secret"], 16)
    assert decrypt_keystore(keystore, "testpassword\U0001f511") == expected
    assert decrypt_keystore(keystore, "test\x7fpass\x85word\n\U0001f511") == expected
    with pytest.raises(WrongPasswordError):
        decrypt_keystore(keystore, "testpassword \U0001f511")  # space is kept, so it differs


@pytest.mark.parametrize("file_name", ["test0.json", "test1.json"])
def test_deposit_cli_keystore_decrypts(file_name: str) -> None:
    expected = _load("deposit-cli-keystore_test_vectors", "expected.json")
    data = official_vectors("eip2335", "deposit-cli-keystore_test_vectors", file_name).read_bytes()
    secret = decrypt_keystore(data, expected["password"])
    assert secret.to_bytes(32, "big").hex() == expected["secret"][2:]


def test_deposit_cli_password_processing_cases() -> None:
    cases = _load("deposit-cli-keystore_test_vectors", "expected.json")["password_processing_cases"]
    assert len(cases["cases"]) == 6
    for case in cases["cases"]:
        processed = normalize_password(case["password"]).hex()
        assert processed == case["processed_hex"], f"password {case['password']!r}"
