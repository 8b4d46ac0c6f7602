"""``validator run --slashing-protection-db``: the client and its Keymanager API on the shared
record in a real PostgreSQL (history in and out goes through the database, no file record)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import aiohttp
import orjson
import pytest

from keymanager.keystore import DEVNET_INSECURE_KDF, encrypt_keystore
from slashing_protection import RECORD_FILE
from slashing_protection.postgres import PostgresSlashingProtection
from tests.support.beacon_fixtures import NodeStarter
from tests.support.duty_node import GENESIS_VALIDATORS_ROOT, DutyNode
from tests.validator.conftest import ServiceRunner, keymanager_running, service_running
from validator.beacon import routes
from validator.consensus.encoding import to_hex
from validator.consensus.interop import interop_secret_key
from validator.halts import HaltError, resume
from validator.service import StartupError


def history(pubkey: bytes, slot: int, source: int, target: int) -> str:
    return orjson.dumps(
        {
            "metadata": {
                "interchange_format_version": "5",
                "genesis_validators_root": to_hex(GENESIS_VALIDATORS_ROOT),
            },
            "data": [
                {
                    "pubkey": to_hex(pubkey),
                    "signed_blocks": [{"slot": str(slot)}],
                    "signed_attestations": [
                        {"source_epoch": str(source), "target_epoch": str(target)}
                    ],
                }
            ],
        }
    ).decode()


async def test_the_client_and_its_keymanager_api_keep_history_in_the_database(
    start_node: NodeStarter,
    run_service: ServiceRunner,
    validators_dir: Callable[..., Path],
    pg_url: str,
) -> None:
    node, url = await start_node(DutyNode, validator_count=8)
    directory = validators_dir(4)
    imported_key = node.keys[4][1]
    async with keymanager_running(
        run_service, url, directory, slashing_protection_db=pg_url
    ) as api:
        base = api.base_url
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {api.token}"}) as http:
            # History in: a key with a past, its watermark far ahead of the chain.
            keystore = encrypt_keystore(interop_secret_key(4), "pass", kdf=DEVNET_INSECURE_KDF)
            body = {
                "keystores": [keystore.to_json().decode()],
                "passwords": ["pass"],
                "slashing_protection": history(imported_key, 9_000, 900, 901),
            }
            async with http.post(f"{base}/keystores", json=body) as response:
                assert response.status == 200
                assert [item["status"] for item in (await response.json())["data"]] == ["imported"]
            # Let key 0 attest at least once before it is taken away.
            async with asyncio.timeout(30):
                while not any(
                    item["attester_index"] == "0"
                    for arrival in node.published(routes.POOL_ATTESTATIONS_V2)
                    for item in arrival.body
                ):
                    await asyncio.sleep(0.05)
            # History out: DELETE answers what the database holds.
            gone = {"pubkeys": [to_hex(node.keys[0][1])]}
            async with http.delete(f"{base}/keystores", json=gone) as response:
                assert response.status == 200
                deleted = await response.json()
        await asyncio.sleep(1.0)

    assert not (directory / RECORD_FILE).exists(), "the file record was used"
    with PostgresSlashingProtection.open(pg_url, GENESIS_VALIDATORS_ROOT) as record:
        mark = record.watermark(imported_key)
        assert mark is not None and (mark.slot, mark.source, mark.target) == (9_000, 900, 901)
        assert not record.check_attestation(imported_key, 900, 901).allowed
        out = orjson.loads(deleted["slashing_protection"])["data"]
        assert [entry["pubkey"] for entry in out] == [to_hex(node.keys[0][1])]
        stored = record.watermark(node.keys[0][1])
        assert stored is not None and stored.target is not None
        assert int(out[0]["signed_attestations"][-1]["target_epoch"]) == stored.target


async def test_a_database_that_cannot_be_reached_stops_the_start(
    start_node: NodeStarter,
    run_service: ServiceRunner,
    validators_dir: Callable[..., Path],
    tmp_path: Path,
) -> None:
    _, url = await start_node(DutyNode, validator_count=4)
    nowhere = f"postgresql://postgres@/postgres?host={tmp_path / 'no-server'}"
    with pytest.raises(StartupError, match="cannot connect to the slashing-protection database"):
        await run_service(
            url, validators_dir(4), init_slashing_protection=True, slashing_protection_db=nowhere
        )
    with pytest.raises(StartupError, match="must be a postgresql://"):
        await run_service(url, validators_dir(4), slashing_protection_db="/var/lib/record")


async def test_with_the_shared_record_the_directory_is_still_locked_while_running(
    start_node: NodeStarter,
    run_service: ServiceRunner,
    validators_dir: Callable[..., Path],
    pg_url: str,
) -> None:
    """Halts and the clean-shutdown marker live in the directory: `validator resume` and a
    second client on the same directory are refused while one runs, as with the file record."""
    _, url = await start_node(DutyNode, validator_count=8)
    directory = validators_dir(4)
    async with service_running(
        run_service,
        url,
        directory,
        ready=lambda service: service.scheduler is not None,
        init_slashing_protection=True,
        slashing_protection_db=pg_url,
    ):
        with pytest.raises(HaltError, match="in use by another process"):
            resume(directory, None)
        with pytest.raises(StartupError, match="in use by another process"):
            await run_service(url, directory, slashing_protection_db=pg_url, stop_after=1.0)
    assert resume(directory, None) == []  # free again once the client stopped
