"""The Keymanager API against the letter of the spec: per-key errors, short tokens,
oversized numbers, and hostile bodies."""

from __future__ import annotations

from pathlib import Path

import pytest

from keymanager.api import TokenFileError, load_or_create_token
from keymanager.store import ValidatorStore
from slashing_protection import RECORD_FILE, SlashingProtection, Watermark
from tests.keymanager.api.support import Api, hex_pubkey, history, import_body, pubkey
from validator.signing.signer import Signer

KEYSTORES = "/eth/v1/keystores"
REMOTE = "/eth/v1/remotekeys"
URL = "https://signer.example:9000"


async def test_a_wrong_password_fails_only_its_key(
    api: Api, record: SlashingProtection, signer: Signer, store: ValidatorStore
) -> None:
    body = import_body([1, 2, 3], history({1: (5, (1, 2)), 2: (7, (2, 3))}))
    body["passwords"][1] = "not the password"
    answer = await api.post(KEYSTORES, body)
    assert answer.status == 200
    assert answer.statuses == ["imported", "error", "imported"]
    message = answer.json["data"][1]["message"]
    assert message.startswith("keystores[1]: ") and "wrong password" in message
    assert store.has_keystore(pubkey(1)) and store.has_keystore(pubkey(3))
    assert not store.has_keystore(pubkey(2)) and not signer.has_key(pubkey(2))
    assert signer.has_key(pubkey(1)) and signer.has_key(pubkey(3))
    # The history was judged and imported first, as a whole.
    assert record.watermark(pubkey(1)) == Watermark(5, 1, 2)


async def test_a_malformed_keystore_fails_only_its_key(api: Api, store: ValidatorStore) -> None:
    body = import_body([1])
    body["keystores"].append("{}")
    body["passwords"].append("x")
    answer = await api.post(KEYSTORES, body)
    assert answer.statuses == ["imported", "error"]
    assert "keystores[1]: malformed keystore" in answer.json["data"][1]["message"]


async def test_an_invalid_bls_pubkey_is_not_imported_as_a_remote_key(
    api: Api, validators_dir: Path
) -> None:
    answer = await api.post(REMOTE, {"remote_keys": [{"pubkey": "0x" + "a" * 96, "url": URL}]})
    assert answer.status == 200
    assert answer.statuses == ["error"]
    assert "not a valid BLS12-381 public key" in answer.json["data"][0]["message"]
    assert ValidatorStore(validators_dir).remote_keys() == []


async def test_remote_key_problems_are_per_key_statuses_inside_200(
    api: Api, store: ValidatorStore
) -> None:
    body = {
        "remote_keys": [
            {"pubkey": "0x12", "url": URL},
            {"pubkey": hex_pubkey(2), "url": "ftp://signer"},
            {"pubkey": hex_pubkey(3), "url": "not a url"},
            {"pubkey": hex_pubkey(4), "url": "http://user:secret@signer.example:9000"},
            {"pubkey": hex_pubkey(5), "url": URL},
        ]
    }
    answer = await api.post(REMOTE, body)
    assert answer.status == 200
    assert answer.statuses == ["error", "error", "error", "error", "imported"]
    assert "credentials" in answer.json["data"][3]["message"]
    assert [key.pubkey for key in store.remote_keys()] == [pubkey(5)]
    listing = await api.get(REMOTE)
    assert b"secret" not in listing.body
    deleted = await api.delete(REMOTE, {"pubkeys": ["0x", hex_pubkey(5), hex_pubkey(6)]})
    assert deleted.status == 200
    assert deleted.statuses == ["error", "deleted", "not_found"]


def test_a_token_shorter_than_256_bits_is_refused_clearly(tmp_path: Path) -> None:
    named = tmp_path / "token"
    named.write_text("0123456789abcdef0123\n")  # 20 characters: 80 bits
    named.chmod(0o600)
    with pytest.raises(TokenFileError, match="at least 256 bits") as refused:
        load_or_create_token(tmp_path, named)
    assert "20 characters" in str(refused.value)
    named.write_text("ab" * 32)
    assert load_or_create_token(tmp_path, named) == "ab" * 32


async def test_a_5kb_number_in_slashing_protection_is_every_keys_error(
    api: Api, validators_dir: Path
) -> None:
    """One authenticated request with this killed the running validator (segfault)."""
    before = (validators_dir / RECORD_FILE).read_bytes()
    bad_history = '{"data":[' + "1" * 5000 + ',"x"], "metadata": {}}'
    answer = await api.post(KEYSTORES, import_body([1, 2], bad_history))
    assert answer.status == 200
    assert answer.statuses == ["error", "error"]
    assert "more than 20 characters" in answer.json["data"][0]["message"]
    assert (validators_dir / RECORD_FILE).read_bytes() == before
    # Still serving.
    assert (await api.post(KEYSTORES, import_body([1]))).statuses == ["imported"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b'{"keystores": [], "passwords": [], "x": ' + b"9" * 5000 + b"}", "number of more"),
        (b'{"keystores": ' + b"[" * 1000 + b"]" * 1000 + b"}", "nested more than"),
        (b'{"pubkeys": [' + b"1" * 4400 + b"]}", "number of more"),
    ],
)
async def test_hostile_bodies_are_400_with_the_spec_error_shape(
    api: Api, raw: bytes, expected: str
) -> None:
    for path in (KEYSTORES, REMOTE):
        answer = await api.post(path, data=raw, headers={"Content-Type": "application/json"})
        assert answer.status == 400
        assert answer.json["code"] == 400 and expected in answer.message
