"""``--keymanager``: keys and settings changed through the API while the loop runs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import aiohttp
import orjson

from keymanager.keystore import DEVNET_INSECURE_KDF, encrypt_keystore
from tests.support.beacon_fixtures import NodeStarter
from tests.support.duty_node import DutyNode
from tests.validator.conftest import ServiceRunner, keymanager_running
from validator.beacon import routes
from validator.consensus.encoding import to_hex
from validator.consensus.interop import interop_secret_key

NEW_FEE_RECIPIENT = "0x" + "c0" * 20


def attesters_after(node: DutyNode, slot: int) -> set[int]:
    return {
        int(item["attester_index"])
        for arrival in node.published(routes.POOL_ATTESTATIONS_V2)
        for item in arrival.body
        if int(item["data"]["slot"]) >= slot
    }


async def test_keys_and_settings_changed_through_the_api_take_effect_in_the_duties(
    start_node: NodeStarter, run_service: ServiceRunner, validators_dir: Callable[..., Path]
) -> None:
    node, url = await start_node(DutyNode, validator_count=12)
    chain = node.chain
    directory = validators_dir(8)
    async with keymanager_running(run_service, url, directory) as api:
        base = api.base_url
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {api.token}"}) as http:
            async with http.get(f"{base}/keystores") as response:
                assert response.status == 200
                listed = {item["validating_pubkey"] for item in (await response.json())["data"]}
            assert listed == {to_hex(node.keys[index][1]) for index in range(8)}

            keystore = encrypt_keystore(interop_secret_key(8), "pass", kdf=DEVNET_INSECURE_KDF)
            body = {"keystores": [keystore.to_json().decode()], "passwords": ["pass"]}
            async with http.post(f"{base}/keystores", json=body) as response:
                assert response.status == 200
                statuses = [item["status"] for item in (await response.json())["data"]]
            assert statuses == ["imported"]

            gone = {"pubkeys": [to_hex(node.keys[0][1])]}
            async with http.delete(f"{base}/keystores", json=gone) as response:
                assert response.status == 200
                deleted = await response.json()
            deleted_at = max(0, node.clock_slot())
            assert [item["status"] for item in deleted["data"]] == ["deleted"]
            history = orjson.loads(deleted["slashing_protection"])
            assert [entry["pubkey"] for entry in history["data"]] == [to_hex(node.keys[0][1])]

            key_1 = to_hex(node.keys[1][1])
            setting = {"ethaddress": NEW_FEE_RECIPIENT}
            async with http.post(
                f"{base}/validator/{key_1}/feerecipient", json=setting
            ) as response:
                assert response.status == 202

        # Two whole epochs after the changes, then stop.
        next_epoch = chain.start_slot_of_epoch(chain.epoch_at_slot(deleted_at) + 1)
        stop_at = next_epoch + 2 * chain.slots_per_epoch
        await asyncio.sleep(max(0.0, node.slot_start(stop_at) - time.time()))

    assert 8 in attesters_after(node, next_epoch), "the imported key attests"
    assert 0 not in attesters_after(node, deleted_at + 1), "the deleted key stopped"
    last_preparation = node.published(routes.PREPARE_BEACON_PROPOSER)[-1].body
    # No --suggested-fee-recipient: only the key with its own setting is prepared.
    assert {(p["validator_index"], p["fee_recipient"]) for p in last_preparation} == {
        ("1", NEW_FEE_RECIPIENT)
    }
