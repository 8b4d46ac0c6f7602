"""/eth/v1/remotekeys: stored durably, listed, deleted; never beside a local keystore."""

from __future__ import annotations

from pathlib import Path

import crypto_backend
from keymanager.store import ValidatorStore
from slashing_protection import SlashingProtection
from tests.keymanager.api.support import GVR, Api, hex_pubkey, import_body, pubkey, secret
from validator.consensus.signing_roots import randao_reveal_signing_root
from validator.consensus.spec import ChainSpec
from validator.signer_server import SignerApi, start_signer_api
from validator.signing.signer import Signer

REMOTE = "/eth/v1/remotekeys"
URL = "https://signer.example:9000"


async def test_import_list_delete(api: Api, validators_dir: Path) -> None:
    assert (await api.get(REMOTE)).json == {"data": []}
    body = {
        "remote_keys": [
            {"pubkey": hex_pubkey(1), "url": URL},
            {"pubkey": hex_pubkey(2).upper().replace("0X", "0x"), "url": URL},
        ]
    }
    assert (await api.post(REMOTE, body)).statuses == ["imported", "imported"]
    listed = (await api.get(REMOTE)).json["data"]
    assert sorted(listed, key=lambda item: item["pubkey"]) == sorted(
        [{"pubkey": hex_pubkey(n), "url": URL, "readonly": False} for n in (1, 2)],
        key=lambda item: item["pubkey"],
    )
    # Stored durably: a fresh store over the same directory sees them.
    assert {key.pubkey for key in ValidatorStore(validators_dir).remote_keys()} == {
        pubkey(1),
        pubkey(2),
    }
    answer = await api.delete(REMOTE, {"pubkeys": [hex_pubkey(1), hex_pubkey(3), hex_pubkey(1)]})
    assert answer.statuses == ["deleted", "not_found", "not_found"]
    assert [key.pubkey for key in ValidatorStore(validators_dir).remote_keys()] == [pubkey(2)]


async def test_duplicate_and_conflict_with_a_local_keystore(
    api: Api, store: ValidatorStore
) -> None:
    await api.post("/eth/v1/keystores", import_body([1]))
    body = {
        "remote_keys": [
            {"pubkey": hex_pubkey(2), "url": URL},
            {"pubkey": hex_pubkey(2), "url": URL},
            {"pubkey": hex_pubkey(1), "url": URL},
        ]
    }
    answer = await api.post(REMOTE, body)
    assert answer.statuses == ["imported", "duplicate", "error"]
    assert "local keystore" in answer.json["data"][2]["message"]
    assert [key.pubkey for key in store.remote_keys()] == [pubkey(2)]
    # A local keystore is not a remote key: deleting it here finds nothing.
    answer = await api.delete(REMOTE, {"pubkeys": [hex_pubkey(1)]})
    assert answer.statuses == ["not_found"]
    assert store.has_keystore(pubkey(1))


async def test_bad_input_is_400_and_stores_nothing(api: Api, store: ValidatorStore) -> None:
    for body in (
        {"remote_keys": [{"pubkey": hex_pubkey(1)}]},
        {"remote_keys": [{"pubkey": hex_pubkey(1), "url": URL}, {"pubkey": 5, "url": URL}]},
        {"remote_keys": {}},
        {},
    ):
        answer = await api.post(REMOTE, body)
        assert answer.status == 400, body
    assert store.remote_keys() == []
    assert (await api.post(REMOTE, data=b"[")).status == 400
    # Those 400s are not in the spec's list for this route; they are judged by ErrorResponse.
    assert api.checker.outside_spec


async def test_an_imported_remote_key_signs_through_its_signer_until_deleted(
    api: Api, tmp_path: Path, chain: ChainSpec, signer: Signer, record: SlashingProtection
) -> None:
    # A real signer API on loopback holding key 5, over its own record.
    served_dir = tmp_path / "served"
    served_dir.mkdir()
    with SlashingProtection.open(served_dir, GVR, register=[pubkey(5)]) as served_record:
        served = Signer(chain, served_record)
        await served.add_keys({pubkey(5): secret(5)})
        runner = await start_signer_api(SignerApi(served, chain), "127.0.0.1", 0)
        try:
            url = f"http://127.0.0.1:{runner.addresses[0][1]}"
            body = {"remote_keys": [{"pubkey": hex_pubkey(5), "url": url}]}
            assert (await api.post(REMOTE, body)).statuses == ["imported"]
            # Registered in this validator's record, held by its signer as a remote key.
            assert record.contains(pubkey(5)) and signer.is_remote(pubkey(5))
            epoch = 3
            signature = await signer.sign_randao_reveal(pubkey(5), epoch)
            root = randao_reveal_signing_root(chain, epoch)
            assert crypto_backend.verify(pubkey(5), root, signature)
            assert (await api.delete(REMOTE, {"pubkeys": [hex_pubkey(5)]})).statuses == [
                "deleted"
            ]
            assert not signer.has_key(pubkey(5))
        finally:
            await runner.cleanup()
