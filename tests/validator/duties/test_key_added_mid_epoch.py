"""A key imported through the Keymanager API at any moment gets its duties for the current
and next epoch at once and acts in the next slot it is due; no previous epoch's duties are
asked for."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import aiohttp
import pytest

from keymanager.keystore import DEVNET_INSECURE_KDF, encrypt_keystore
from tests.support.beacon_fixtures import NodeStarter
from tests.support.duty_node import DutyNode
from tests.validator.conftest import ServiceRunner, keymanager_running
from validator.beacon import routes
from validator.consensus.interop import interop_secret_key

NEW_KEY = 8  # interop key 8 attests in the first slot of every epoch on the duty node
SLOT_MS = 1000


def attested_slots(node: DutyNode, index: int) -> set[int]:
    return {
        int(item["data"]["slot"])
        for arrival in node.published(routes.POOL_ATTESTATIONS_V2)
        for item in arrival.body
        if int(item["attester_index"]) == index
    }


async def wait_until(when: float) -> None:
    await asyncio.sleep(max(0.0, when - time.time()))


@pytest.mark.parametrize("slot_in_epoch", [1, 3], ids=["mid-epoch", "last-slot"])
async def test_a_key_imported_in_an_epoch_gets_its_duties_at_once(
    start_node: NodeStarter,
    run_service: ServiceRunner,
    validators_dir: Callable[..., Path],
    slot_in_epoch: int,
) -> None:
    node, url = await start_node(DutyNode, validator_count=12, slot_duration_ms=SLOT_MS)
    chain = node.chain
    directory = validators_dir(8)
    async with keymanager_running(run_service, url, directory) as api:
        keystore = encrypt_keystore(interop_secret_key(NEW_KEY), "pass", kdf=DEVNET_INSECURE_KDF)
        body = {"keystores": [keystore.to_json().decode()], "passwords": ["pass"]}
        # Import a fifth into a slot of the next epoch (the loop is running by then).
        epoch = chain.epoch_at_slot(max(0, node.clock_slot())) + 1
        import_slot = chain.start_slot_of_epoch(epoch) + slot_in_epoch
        await wait_until(node.slot_start(import_slot) + 0.2 * SLOT_MS / 1000)
        requests_before = len(node.attester_duty_requests)
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {api.token}"}) as http:
            async with http.post(
                f"{api.base_url}/keystores", json=body
            ) as response:
                assert response.status == 200
                assert [item["status"] for item in (await response.json())["data"]] == [
                    "imported"
                ]
        imported_in = node.clock_slot()
        assert imported_in == import_slot, "the import took too long for this test's timing"
        first_due = chain.start_slot_of_epoch(epoch + 1)
        await wait_until(node.slot_start(first_due + 2))
    asked = node.attester_duty_requests[requests_before:]
    assert asked, "the import fetched attester duties"
    assert min(asked) >= epoch, f"asked for epochs {asked} after importing in epoch {epoch}"
    assert first_due in attested_slots(node, NEW_KEY)
