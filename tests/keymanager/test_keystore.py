"""EIP-2335 encrypt/decrypt with cheap KDFs, and every refusal path of keymanager.keystore."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

import crypto_backend
from keymanager.keystore import (
    DEVNET_INSECURE_KDF,
    MAX_KEYSTORE_BYTES,
    MAX_PBKDF2_ROUNDS,
    STANDARD_SCRYPT,
    InvalidSecretError,
    KeystoreError,
    MalformedKeystoreError,
    Pbkdf2Cost,
    Pbkdf2Kdf,
    PubkeyMismatchError,
    ScryptCost,
    ScryptKdf,
    UnsupportedKeystoreError,
    WrongPasswordError,
    decrypt_keystore,
    encrypt_keystore,
    estimated_cost,
    normalize_password,
    parse_keystore,
)
from tests.support.keystores import CHEAP_KDF, PASSWORD, cheap_keystore_json, craft_keystore, dumps

SECRET = 0x2A6C172B3F1B60A8CE26F19D6689C085AE165831E934FF763AE46A2A6C1
CURVE_ORDER = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001


def _cheap_document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(cheap_keystore_json(SECRET))
    return document


# --- round trips ---------------------------------------------------------------


@pytest.mark.parametrize("cost", [CHEAP_KDF, ScryptCost(n=2**4, r=8, p=1), DEVNET_INSECURE_KDF])
def test_round_trip(cost: Pbkdf2Cost | ScryptCost) -> None:
    keystore = encrypt_keystore(SECRET, PASSWORD, kdf=cost, path="m/12381/3600/7/0/0")
    reparsed = parse_keystore(keystore.to_json())
    assert reparsed == keystore
    assert decrypt_keystore(reparsed, PASSWORD) == SECRET
    assert reparsed.pubkey == crypto_backend.sk_to_pk(SECRET)
    assert reparsed.path == "m/12381/3600/7/0/0"


def test_default_is_standard_scrypt_and_decrypts() -> None:
    keystore = encrypt_keystore(SECRET, PASSWORD)
    kdf = keystore.crypto.kdf
    assert isinstance(kdf, ScryptKdf)
    assert (kdf.params.n, kdf.params.r, kdf.params.p, kdf.params.dklen) == (2**18, 8, 1, 32)
    assert STANDARD_SCRYPT == ScryptCost(n=2**18, r=8, p=1)
    assert decrypt_keystore(keystore.to_json(), PASSWORD) == SECRET


def test_devnet_kdf_is_cheap_pbkdf2() -> None:
    kdf = encrypt_keystore(SECRET, PASSWORD, kdf=DEVNET_INSECURE_KDF).crypto.kdf
    assert isinstance(kdf, Pbkdf2Kdf)
    assert kdf.params.c <= 1024


def test_output_has_the_deposit_cli_layout() -> None:
    document = _cheap_document()
    assert list(document) == ["crypto", "description", "pubkey", "path", "uuid", "version"]
    assert list(document["crypto"]) == ["kdf", "checksum", "cipher"]
    assert document["version"] == 4
    assert document["pubkey"] == crypto_backend.sk_to_pk(SECRET).hex()  # bare hex, as deposit-cli
    assert document["crypto"]["kdf"]["params"]["prf"] == "hmac-sha256"
    assert len(bytes.fromhex(document["crypto"]["kdf"]["params"]["salt"])) == 32


def test_each_encryption_is_fresh() -> None:
    first, second = _cheap_document(), _cheap_document()
    assert first["uuid"] != second["uuid"]
    assert first["crypto"]["kdf"]["params"]["salt"] != second["crypto"]["kdf"]["params"]["salt"]
    assert first["crypto"]["cipher"]["params"]["iv"] != second["crypto"]["cipher"]["params"]["iv"]


def test_matches_an_independent_construction() -> None:
    # A keystore built directly from the ERC's steps (tests/support/keystores.py) decrypts.
    secret_bytes = SECRET.to_bytes(32, "big")
    pubkey = crypto_backend.sk_to_pk(SECRET).hex()
    document = craft_keystore(secret_bytes, normalize_password(PASSWORD), pubkey)
    assert decrypt_keystore(dumps(document), PASSWORD) == SECRET


def test_pubkey_with_0x_prefix_and_extra_top_level_fields_are_accepted() -> None:
    document = _cheap_document()
    document["pubkey"] = "0x" + document["pubkey"].upper()
    document["name"] = "a tool's label"
    assert decrypt_keystore(dumps(document), PASSWORD) == SECRET


def test_keystore_without_pubkey_still_decrypts() -> None:
    document = _cheap_document()
    del document["pubkey"]
    keystore = parse_keystore(dumps(document))
    assert keystore.pubkey is None
    assert decrypt_keystore(keystore, PASSWORD) == SECRET


# --- passwords -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("password", "expected"),
    [
        ("\ufb01", b"fi"),  # compatibility ligature decomposes
        ("\u00e9", "e\u0301".encode()),  # composed e-acute decomposes
        ("a\x00b\x1fc", b"abc"),  # C0
        ("a\x7fb", b"ab"),  # Delete
        ("a\x80b\x9fc", b"abc"),  # C1
        ("a b", b"a b"),  # space stays
        ("\u00a0", b" "),  # no-break space is a compatibility space, not a control code
    ],
)
def test_password_normalisation(password: str, expected: bytes) -> None:
    assert normalize_password(password) == expected


def test_equivalent_passwords_open_the_same_keystore() -> None:
    keystore = encrypt_keystore(SECRET, "\ufb01l\u00e9", kdf=CHEAP_KDF)
    assert decrypt_keystore(keystore, "file\u0301\x7f\n") == SECRET


def test_password_with_lone_surrogate_is_refused() -> None:
    with pytest.raises(KeystoreError, match="surrogate"):
        normalize_password("ab\ud800")


# --- refusals: password, checksum, pubkey, secret --------------------------------


def test_wrong_password_is_its_own_error() -> None:
    with pytest.raises(WrongPasswordError, match="wrong password"):
        decrypt_keystore(cheap_keystore_json(SECRET), PASSWORD + "!")
    assert not issubclass(WrongPasswordError, MalformedKeystoreError)
    assert not issubclass(WrongPasswordError, PubkeyMismatchError)


@pytest.mark.parametrize("section", ["checksum", "cipher"])
def test_tampered_checksum_or_ciphertext_is_refused(section: str) -> None:
    document = _cheap_document()
    message = bytearray.fromhex(document["crypto"][section]["message"])
    message[0] ^= 0x01
    document["crypto"][section]["message"] = message.hex()
    with pytest.raises(WrongPasswordError):
        decrypt_keystore(dumps(document), PASSWORD)


def test_tampered_salt_is_refused() -> None:
    document = _cheap_document()
    document["crypto"]["kdf"]["params"]["salt"] = "00" * 32
    with pytest.raises(WrongPasswordError):
        decrypt_keystore(dumps(document), PASSWORD)


def test_pubkey_that_the_secret_does_not_give_is_refused() -> None:
    document = _cheap_document()
    document["pubkey"] = crypto_backend.sk_to_pk(SECRET + 1).hex()
    with pytest.raises(PubkeyMismatchError, match="secret gives"):
        decrypt_keystore(dumps(document), PASSWORD)


@pytest.mark.parametrize("secret", [0, CURVE_ORDER, 2**256 - 1])
def test_secret_that_is_not_a_bls_key_is_refused(secret: int) -> None:
    document = craft_keystore(secret.to_bytes(32, "big"), PASSWORD.encode(), None)
    with pytest.raises(InvalidSecretError):
        decrypt_keystore(dumps(document), PASSWORD)


def test_encrypting_an_invalid_secret_is_refused() -> None:
    with pytest.raises(InvalidSecretError):
        encrypt_keystore(0, PASSWORD, kdf=CHEAP_KDF)


@pytest.mark.parametrize("cost", [Pbkdf2Cost(c=0), ScryptCost(n=3), ScryptCost(n=2**4, r=0)])
def test_encrypting_with_an_invalid_cost_is_refused(cost: Pbkdf2Cost | ScryptCost) -> None:
    with pytest.raises(KeystoreError, match="invalid KDF cost"):
        encrypt_keystore(SECRET, PASSWORD, kdf=cost)


# --- refusals: malformed and unsupported ---------------------------------------------

Mutation = Callable[[dict[str, Any]], None]


def _set(path: str, value: Any) -> Mutation:
    *parents, last = path.split(".")

    def mutate(document: dict[str, Any]) -> None:
        node = document
        for part in parents:
            node = node[part]
        node[last] = value

    return mutate


def _delete(path: str) -> Mutation:
    *parents, last = path.split(".")

    def mutate(document: dict[str, Any]) -> None:
        node = document
        for part in parents:
            node = node[part]
        del node[last]

    return mutate


MALFORMED: list[tuple[str, Mutation, str]] = [
    ("no crypto", _delete("crypto"), "crypto: Field required"),
    ("no path", _delete("path"), "path: Field required"),
    ("no uuid", _delete("uuid"), "uuid: Field required"),
    ("no version", _delete("version"), "version: Field required"),
    ("bad uuid", _set("uuid", "not-a-uuid"), "uuid"),
    ("version as text", _set("version", "4"), "version"),
    ("path not text", _set("path", 7), "path"),
    ("no checksum", _delete("crypto.checksum"), "crypto.checksum: Field required"),
    ("kdf without function", _delete("crypto.kdf.function"), "crypto.kdf"),
    ("c as text", _set("crypto.kdf.params.c", "2"), "crypto.kdf.pbkdf2.params.c"),
    ("c as bool", _set("crypto.kdf.params.c", True), "crypto.kdf.pbkdf2.params.c"),
    ("c as float", _set("crypto.kdf.params.c", 2.0), "crypto.kdf.pbkdf2.params.c"),
    ("c zero", _set("crypto.kdf.params.c", 0), "pbkdf2 c must be"),
    ("c too costly", _set("crypto.kdf.params.c", MAX_PBKDF2_ROUNDS + 1), "pbkdf2 c must be"),
    ("dklen short", _set("crypto.kdf.params.dklen", 16), "dklen must be"),
    ("salt not hex", _set("crypto.kdf.params.salt", "zz"), "hex digit pairs"),
    ("salt odd length", _set("crypto.kdf.params.salt", "abc"), "hex digit pairs"),
    ("salt empty", _set("crypto.kdf.params.salt", ""), "must be 1 to"),
    ("unknown kdf param", _set("crypto.kdf.params.maxmem", 5), "Extra inputs"),
    ("no prf", _delete("crypto.kdf.params.prf"), "prf: Field required"),
    ("iv short", _set("crypto.cipher.params.iv", "00" * 15), "must be 16 bytes"),
    ("secret short", _set("crypto.cipher.message", "00" * 31), "must be 32 bytes"),
    ("checksum short", _set("crypto.checksum.message", "00" * 31), "must be 32 bytes"),
    ("checksum params", _set("crypto.checksum.params", {"x": 1}), "crypto.checksum.params"),
    ("pubkey short", _set("pubkey", "ab" * 47), "96 hex digits"),
    ("pubkey not text", _set("pubkey", 12), "pubkey"),
    ("crypto not object", _set("crypto", []), "crypto"),
]


@pytest.mark.parametrize(
    ("mutate", "message"), [pytest.param(m, msg, id=name) for name, m, msg in MALFORMED]
)
def test_malformed_keystore_is_refused(mutate: Mutation, message: str) -> None:
    document = _cheap_document()
    mutate(document)
    with pytest.raises(MalformedKeystoreError, match="malformed keystore") as caught:
        decrypt_keystore(dumps(document), PASSWORD)
    assert message in str(caught.value)


SCRYPT_PARAMS: list[tuple[dict[str, int], str]] = [
    ({"n": 3}, "power of two"),
    ({"n": 1}, "power of two"),
    ({"r": 0}, "must be positive"),
    ({"p": 0}, "must be positive"),
    ({"n": 2**21}, "needs more than"),  # 2 GiB at r=8
    ({"n": 2**18, "p": 64}, "exceeds the limit"),
]


@pytest.mark.parametrize(("params", "message"), SCRYPT_PARAMS)
def test_unusable_scrypt_parameters_are_refused(params: dict[str, int], message: str) -> None:
    document = json.loads(encrypt_keystore(SECRET, PASSWORD, kdf=ScryptCost(n=2**4)).to_json())
    document["crypto"]["kdf"]["params"].update(params)
    with pytest.raises(MalformedKeystoreError, match=message):
        parse_keystore(dumps(document))


@pytest.mark.parametrize(
    "text",
    [b"", b"{", b"not json", b"[]", b"null", b"{}", "\u00e9t\u00e9".encode("latin-1")],
)
def test_non_keystore_text_is_refused(text: bytes) -> None:
    with pytest.raises(MalformedKeystoreError, match="malformed keystore"):
        parse_keystore(text)


def test_oversized_keystore_is_refused_before_parsing() -> None:
    with pytest.raises(MalformedKeystoreError, match="limit"):
        parse_keystore(b" " * (MAX_KEYSTORE_BYTES + 1))


def test_non_text_input_is_refused() -> None:
    with pytest.raises(MalformedKeystoreError, match="expected JSON text"):
        parse_keystore({"crypto": {}})  # type: ignore[arg-type]


UNSUPPORTED: list[tuple[str, Mutation, str]] = [
    ("argon2 kdf", _set("crypto.kdf.function", "argon2id"), "unsupported kdf function 'argon2id'"),
    ("sha512 prf", _set("crypto.kdf.params.prf", "hmac-sha512"), "unsupported pbkdf2 prf"),
    ("aes-256", _set("crypto.cipher.function", "aes-256-ctr"), "unsupported cipher function"),
    ("sha512 checksum", _set("crypto.checksum.function", "sha512"), "unsupported checksum"),
    ("version 3", _set("version", 3), "unsupported keystore version 3"),
]


@pytest.mark.parametrize(
    ("mutate", "message"), [pytest.param(m, msg, id=name) for name, m, msg in UNSUPPORTED]
)
def test_unsupported_module_is_refused(mutate: Mutation, message: str) -> None:
    document = _cheap_document()
    mutate(document)
    with pytest.raises(UnsupportedKeystoreError, match=message):
        decrypt_keystore(dumps(document), PASSWORD)


def test_estimated_cost_is_in_standard_scrypt_units() -> None:
    standard = parse_keystore(encrypt_keystore(SECRET, PASSWORD, kdf=ScryptCost(n=2**4)).to_json())
    document = json.loads(standard.to_json())
    document["crypto"]["kdf"]["params"]["n"] = 2**18
    assert estimated_cost(parse_keystore(dumps(document))) == 1.0
    assert estimated_cost(parse_keystore(cheap_keystore_json(SECRET))) < 0.001
