"""/eth/v1/keystores: list, import with history, delete with history."""

from __future__ import annotations

from pathlib import Path

import orjson

from keymanager.store import ValidatorStore
from slashing_protection import RECORD_FILE, SlashingProtection, Watermark, parse_interchange
from tests.keymanager.api.support import (
    GVR,
    OTHER_GVR,
    Api,
    hex_pubkey,
    history,
    import_body,
    keystore,
    pubkey,
)
from tests.support.keystores import PASSWORD
from validator.consensus.ssz import AttestationData, Checkpoint
from validator.signing.signer import Signer
from validator.signing.types import AttestationRequest, RefusalReason

KEYSTORES = "/eth/v1/keystores"


def attestation(source: int, target: int) -> AttestationData:
    return AttestationData(
        slot=target * 8,
        index=0,
        beacon_block_root=b"\x11" * 32,
        source=Checkpoint(epoch=source, root=b"\x22" * 32),
        target=Checkpoint(epoch=target, root=b"\x33" * 32),
    )


def keystore_files(validators_dir: Path) -> list[str]:
    directory = validators_dir / "keystores"
    return sorted(path.name for path in directory.iterdir()) if directory.exists() else []


# ---------------------------------------------------------------------- GET


async def test_list_is_empty_then_shows_imported_keys(api: Api) -> None:
    assert (await api.get(KEYSTORES)).json == {"data": []}
    answer = await api.post(KEYSTORES, import_body([1, 2]))
    assert answer.status == 200
    assert answer.statuses == ["imported", "imported"]
    listed = (await api.get(KEYSTORES)).json["data"]
    assert sorted(listed, key=lambda item: item["validating_pubkey"]) == sorted(
        [
            {
                "validating_pubkey": hex_pubkey(n),
                "derivation_path": f"m/12381/3600/{n}/0/0",
                "readonly": False,
            }
            for n in (1, 2)
        ],
        key=lambda item: item["validating_pubkey"],
    )


# ---------------------------------------------------------------------- POST


async def test_import_saves_registers_and_loads_the_key(
    api: Api, store: ValidatorStore, record: SlashingProtection, signer: Signer
) -> None:
    assert not record.contains(pubkey(1))
    answer = await api.post(KEYSTORES, import_body([1]))
    assert answer.json == {"data": [{"status": "imported"}]}
    assert store.has_keystore(pubkey(1))
    assert record.watermark(pubkey(1)) == Watermark.never_signed()
    assert signer.has_key(pubkey(1))
    # It signs, and what it signs is in the record first.
    [result] = await signer.sign_attestations([AttestationRequest(pubkey(1), attestation(3, 4))])
    assert result.signature is not None
    assert record.watermark(pubkey(1)) == Watermark(None, 3, 4)


async def test_imported_key_brings_its_history_and_the_next_open_has_it(
    api: Api, validators_dir: Path, record: SlashingProtection, signer: Signer
) -> None:
    body = import_body([1], history({1: (90, (10, 11))}))
    assert (await api.post(KEYSTORES, body)).statuses == ["imported"]
    assert record.watermark(pubkey(1)) == Watermark(90, 10, 11)
    # Below or at its history the key signs nothing.
    [refused] = await signer.sign_attestations([AttestationRequest(pubkey(1), attestation(9, 11))])
    assert refused.refusal is not None and refused.refusal.reason is RefusalReason.SLASHABLE
    # The next start opens the record without --init-slashing-protection (no register=).
    record.close()
    with SlashingProtection.open(validators_dir, GVR) as reopened:
        assert reopened.watermark(pubkey(1)) == Watermark(90, 10, 11)


async def test_history_is_merged_by_maximum_and_never_lowers(
    api: Api, record: SlashingProtection
) -> None:
    record.import_interchange(history({1: (100, (20, 21))}).encode())
    body = import_body([1], history({1: (50, (30, 31))}))
    assert (await api.post(KEYSTORES, body)).statuses == ["imported"]
    assert record.watermark(pubkey(1)) == Watermark(100, 30, 31)


async def test_history_for_another_chain_imports_no_key(
    api: Api, validators_dir: Path, record: SlashingProtection, signer: Signer
) -> None:
    before = (validators_dir / RECORD_FILE).read_bytes()
    body = import_body([1, 2], history({1: (5, (1, 2))}, root=OTHER_GVR))
    answer = await api.post(KEYSTORES, body)
    assert answer.status == 200
    assert answer.statuses == ["error", "error"]
    for item in answer.json["data"]:
        assert "0x" + OTHER_GVR.hex() in item["message"]
        assert "no key was imported" in item["message"]
    assert keystore_files(validators_dir) == []
    assert (validators_dir / RECORD_FILE).read_bytes() == before
    assert not signer.has_key(pubkey(1)) and not record.contains(pubkey(1))


async def test_malformed_history_imports_no_key(
    api: Api, validators_dir: Path, record: SlashingProtection
) -> None:
    before = (validators_dir / RECORD_FILE).read_bytes()
    version_4 = orjson.loads(history({1: (5, None)}))
    version_4["metadata"]["interchange_format_version"] = "4"
    for bad in ("{not json", orjson.dumps(version_4).decode(), "[]"):
        answer = await api.post(KEYSTORES, import_body([1], bad))
        assert answer.statuses == ["error"], bad
        assert answer.json["data"][0]["message"]
    assert keystore_files(validators_dir) == []
    assert (validators_dir / RECORD_FILE).read_bytes() == before


async def test_duplicates_within_and_across_requests(api: Api) -> None:
    assert (await api.post(KEYSTORES, import_body([1, 1]))).statuses == ["imported", "duplicate"]
    assert (await api.post(KEYSTORES, import_body([2, 1]))).statuses == ["imported", "duplicate"]


async def test_a_duplicate_still_merges_the_history_it_came_with(
    api: Api, record: SlashingProtection
) -> None:
    await api.post(KEYSTORES, import_body([1]))
    answer = await api.post(KEYSTORES, import_body([1], history({1: (7, (2, 3))})))
    assert answer.statuses == ["duplicate"]
    assert record.watermark(pubkey(1)) == Watermark(7, 2, 3)


async def test_a_remote_key_and_a_keystore_cannot_coexist(
    api: Api, store: ValidatorStore, signer: Signer
) -> None:
    store.add_remote_key(pubkey(1), "https://signer.example:9000")
    answer = await api.post(KEYSTORES, import_body([1]))
    assert answer.statuses == ["error"]
    assert "remote key" in answer.json["data"][0]["message"]
    assert not store.has_keystore(pubkey(1)) and not signer.has_key(pubkey(1))


async def test_wrong_password_is_that_keys_error_and_nothing_is_written_for_it(
    api: Api, validators_dir: Path, signer: Signer
) -> None:
    """The spec's per-key `error` covers "decrypting error": only all keys
    failing writes nothing."""
    before = (validators_dir / RECORD_FILE).read_bytes()
    body = import_body([1, 2], history({1: (5, (1, 2))}))
    for index in (0, 1):
        body["passwords"][index] = "not the password"
    answer = await api.post(KEYSTORES, body)
    assert answer.statuses == ["error", "error"]
    message = answer.json["data"][1]["message"]
    assert message.startswith("keystores[1]: ") and "wrong password" in message
    assert keystore_files(validators_dir) == []
    assert (validators_dir / RECORD_FILE).read_bytes() == before
    assert not signer.has_key(pubkey(1))


async def test_bad_import_bodies_are_400_and_write_nothing(api: Api, validators_dir: Path) -> None:
    before = (validators_dir / RECORD_FILE).read_bytes()
    good = import_body([1])
    cases: list[tuple[object, str]] = [
        ({"keystores": good["keystores"], "passwords": []}, "1 keystores but 0 passwords"),
        ({"passwords": [PASSWORD]}, "keystores"),
        ({"keystores": "x", "passwords": [PASSWORD]}, "keystores"),
        ({"keystores": [orjson.loads(keystore(1))], "passwords": [PASSWORD]}, "keystores.0"),
        ({"keystores": good["keystores"], "passwords": [1]}, "passwords.0"),
        ({**good, "slashing_protection": {"metadata": {}}}, "slashing_protection"),
        ([good], "must be a JSON object"),
    ]
    for body, expected in cases:
        answer = await api.post(KEYSTORES, body)
        assert answer.status == 400, body
        assert expected in answer.message, (expected, answer.message)
    for raw in (b"{", b"", b"\xff"):
        answer = await api.post(KEYSTORES, data=raw)
        assert answer.status == 400
    assert keystore_files(validators_dir) == []
    assert (validators_dir / RECORD_FILE).read_bytes() == before


async def test_oversized_body_is_400(api: Api) -> None:
    from keymanager.api import MAX_BODY_BYTES

    answer = await api.post(KEYSTORES, data=b" " * (MAX_BODY_BYTES + 1))
    assert answer.status == 400
    assert "16 MiB limit" in answer.message


async def test_empty_import_is_an_empty_answer(api: Api) -> None:
    answer = await api.post(KEYSTORES, {"keystores": [], "passwords": []})
    assert answer.json == {"data": []}


async def test_a_failed_key_save_leaves_no_key_that_can_sign_below_its_history(
    api: Api,
    store: ValidatorStore,
    record: SlashingProtection,
    signer: Signer,
    monkeypatch: object,
) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    real_save = store.save_import

    def failing_save(prepared: object) -> bytes:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store, "save_import", failing_save)
    answer = await api.post(KEYSTORES, import_body([1], history({1: (90, (10, 11))})))
    assert answer.statuses == ["error"]
    assert "No space left on device" in answer.json["data"][0]["message"]
    # The history was written first and stays; the key is nowhere.
    assert record.watermark(pubkey(1)) == Watermark(90, 10, 11)
    assert not store.has_keystore(pubkey(1)) and not signer.has_key(pubkey(1))
    # Imported again without its history, it is still held to it.
    monkeypatch.setattr(store, "save_import", real_save)
    assert (await api.post(KEYSTORES, import_body([1]))).statuses == ["imported"]
    assert record.watermark(pubkey(1)) == Watermark(90, 10, 11)
    [refused] = await signer.sign_attestations([AttestationRequest(pubkey(1), attestation(10, 11))])
    assert refused.refusal is not None and refused.refusal.reason is RefusalReason.SLASHABLE
    [signed] = await signer.sign_attestations([AttestationRequest(pubkey(1), attestation(10, 12))])
    assert signed.signature is not None


async def test_a_failed_registration_removes_the_saved_key(
    api: Api, store: ValidatorStore, record: SlashingProtection, signer: Signer, monkeypatch: object
) -> None:
    import pytest

    from slashing_protection import RecordWriteError

    assert isinstance(monkeypatch, pytest.MonkeyPatch)

    def failing_register(pubkeys: object) -> None:
        raise RecordWriteError("could not write the slashing-protection record (disk full)")

    monkeypatch.setattr(record, "register", failing_register)
    answer = await api.post(KEYSTORES, import_body([1, 2]))
    assert answer.statuses == ["error", "error"]
    assert "the keystore was not kept" in answer.json["data"][0]["message"]
    assert store.list_keystores() == []
    assert not signer.has_key(pubkey(1)) and not signer.has_key(pubkey(2))


# ---------------------------------------------------------------------- DELETE


async def test_delete_returns_the_history_then_not_active(
    api: Api, store: ValidatorStore, record: SlashingProtection, signer: Signer
) -> None:
    await api.post(KEYSTORES, import_body([1, 2], history({1: (90, (10, 11))})))
    [signed] = await signer.sign_attestations([AttestationRequest(pubkey(1), attestation(12, 13))])
    assert signed.signature is not None
    answer = await api.delete(KEYSTORES, {"pubkeys": [hex_pubkey(1)]})
    assert answer.status == 200
    assert answer.statuses == ["deleted"]
    exported = parse_interchange(answer.json["slashing_protection"].encode())
    assert exported.genesis_validators_root == GVR
    assert exported.marks == {pubkey(1): Watermark(90, 12, 13)}
    # Gone from signer and disk, history kept; key 2 untouched.
    assert not signer.has_key(pubkey(1)) and not store.has_keystore(pubkey(1))
    assert record.watermark(pubkey(1)) == Watermark(90, 12, 13)
    assert signer.has_key(pubkey(2)) and store.has_keystore(pubkey(2))
    [refused] = await signer.sign_attestations([AttestationRequest(pubkey(1), attestation(13, 14))])
    assert refused.refusal is not None and refused.refusal.reason is RefusalReason.KEY_REMOVED
    again = await api.delete(KEYSTORES, {"pubkeys": [hex_pubkey(1)]})
    assert again.statuses == ["not_active"]
    assert parse_interchange(again.json["slashing_protection"].encode()).marks == {
        pubkey(1): Watermark(90, 12, 13)
    }


async def test_delete_statuses_in_request_order(api: Api) -> None:
    await api.post(KEYSTORES, import_body([1, 2]))
    await api.delete(KEYSTORES, {"pubkeys": [hex_pubkey(2)]})
    answer = await api.delete(
        KEYSTORES,
        {
            "pubkeys": [
                hex_pubkey(3),
                hex_pubkey(2),
                hex_pubkey(1).upper().replace("0X", "0x"),
                hex_pubkey(1),
            ]
        },
    )
    assert answer.statuses == ["not_found", "not_active", "deleted", "not_active"]
    exported = parse_interchange(answer.json["slashing_protection"].encode())
    assert set(exported.marks) == {pubkey(1), pubkey(2)}


async def test_delete_of_nothing_returns_an_empty_interchange_of_the_real_chain(api: Api) -> None:
    answer = await api.delete(KEYSTORES, {"pubkeys": [hex_pubkey(5)]})
    assert answer.statuses == ["not_found"]
    document = orjson.loads(answer.json["slashing_protection"])
    assert document["metadata"]["genesis_validators_root"] == "0x" + GVR.hex()
    assert document["data"] == []


async def test_delete_bad_bodies_are_400(api: Api, store: ValidatorStore) -> None:
    await api.post(KEYSTORES, import_body([1]))
    for body in (
        {"pubkeys": ["0x1234"]},
        {"pubkeys": [hex_pubkey(1), hex_pubkey(1)[:-2]]},
        {"pubkeys": [hex_pubkey(1)[2:]]},
        {"pubkeys": [hex_pubkey(1) + "00"]},
        {"pubkeys": "0x12"},
        {"pubkeys": [7]},
        {},
    ):
        answer = await api.delete(KEYSTORES, body)
        assert answer.status == 400, body
    assert store.has_keystore(pubkey(1))


async def test_a_file_that_cannot_be_removed_is_an_error_without_history(
    api: Api, store: ValidatorStore, signer: Signer, monkeypatch: object
) -> None:
    import pytest

    from keymanager.errors import StoreCorruptionError

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    await api.post(KEYSTORES, import_body([1]))

    def failing_delete(pubkey: bytes) -> bool:
        raise StoreCorruptionError("validator_settings.json: invalid settings")

    monkeypatch.setattr(store, "delete_keystore", failing_delete)
    answer = await api.delete(KEYSTORES, {"pubkeys": [hex_pubkey(1)]})
    assert answer.statuses == ["error"]
    assert "no longer signs" in answer.json["data"][0]["message"]
    assert parse_interchange(answer.json["slashing_protection"].encode()).marks == {}
    # Fail closed: the key stays out of the signer.
    assert not signer.has_key(pubkey(1))


async def test_the_cached_list_follows_every_change(api: Api, validators_dir: Path) -> None:
    first = await api.get(KEYSTORES)
    again = await api.get(KEYSTORES)
    assert first.body == again.body == b'{"data":[]}'
    await api.post(KEYSTORES, import_body([1]))
    assert [item["validating_pubkey"] for item in (await api.get(KEYSTORES)).json["data"]] == [
        hex_pubkey(1)
    ]
    # A key written by another program (here another store on the same directory).
    ValidatorStore(validators_dir).import_keystore(keystore(2), PASSWORD)
    listed = {item["validating_pubkey"] for item in (await api.get(KEYSTORES)).json["data"]}
    assert listed == {hex_pubkey(1), hex_pubkey(2)}
    await api.delete(KEYSTORES, {"pubkeys": [hex_pubkey(1)]})
    listed = {item["validating_pubkey"] for item in (await api.get(KEYSTORES)).json["data"]}
    assert listed == {hex_pubkey(2)}
