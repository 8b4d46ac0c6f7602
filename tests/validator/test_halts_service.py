"""Halts and doppelganger protection in a running client, through the Keymanager API."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import aiohttp
import pytest
from prometheus_client import REGISTRY

from keymanager.keystore import DEVNET_INSECURE_KDF, encrypt_keystore
from tests.support.beacon_fixtures import NodeStarter
from tests.support.duty_node import DutyNode
from tests.validator.conftest import ServiceRunner, keymanager_running
from validator.beacon import routes
from validator.consensus.interop import interop_keypair, interop_secret_key
from validator.duties.doppelganger import KeyState
from validator.halts import HaltReason, HaltStore
from validator.service import StartupError

HALTED = 1
NEW_KEY = 6


def state_metric(pubkey: bytes, state: str) -> float | None:
    return REGISTRY.get_sample_value(
        "validator_doppelganger_state", {"pubkey": "0x" + pubkey.hex(), "state": state}
    )


async def test_a_halted_key_is_listed_refused_and_stays_halted_through_delete_and_reimport(
    start_node: NodeStarter, run_service: ServiceRunner, validators_dir: Callable[..., Path]
) -> None:
    _, url = await start_node(DutyNode, validator_count=8, slot_duration_ms=1000)
    directory = validators_dir(4)
    halted = interop_keypair(HALTED)[1]
    new = interop_keypair(NEW_KEY)[1]
    HaltStore(directory).halt(halted, HaltReason.DOPPELGANGER, "seen live in epoch 3", 3)
    async with keymanager_running(
        run_service, url, directory, doppelganger_protection=True
    ) as api:
        gate = api.service.gate
        assert gate is not None
        assert gate.states[halted] is KeyState.HALTED
        assert halted not in gate.signer.pubkeys()
        assert state_metric(halted, "halted") == 1
        # No clean-shutdown marker: every other key waits, none is in the signer yet.
        assert gate.signer.pubkeys() == []
        assert all(gate.states[interop_keypair(i)[1]] is KeyState.WAITING for i in (0, 2, 3))
        base = api.base_url
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {api.token}"}) as http:
            async with http.get(f"{base}/keystores") as response:
                listed = {item["validating_pubkey"] for item in (await response.json())["data"]}
            assert "0x" + halted.hex() in listed and len(listed) == 4
            async with http.delete(
                f"{base}/keystores", json={"pubkeys": ["0x" + halted.hex()]}
            ) as response:
                assert [i["status"] for i in (await response.json())["data"]] == ["deleted"]
            for index in (HALTED, NEW_KEY):
                keystore = encrypt_keystore(
                    interop_secret_key(index), "pass", kdf=DEVNET_INSECURE_KDF
                )
                body = {"keystores": [keystore.to_json().decode()], "passwords": ["pass"]}
                async with http.post(f"{base}/keystores", json=body) as response:
                    assert response.status == 200
        assert gate.states[halted] is KeyState.HALTED
        assert gate.states[new] is KeyState.WAITING
        assert halted not in gate.signer.pubkeys() and new not in gate.signer.pubkeys()
        assert state_metric(new, "waiting") == 1
    assert set(HaltStore(directory).halts()) == {halted}


async def test_a_beacon_node_without_liveness_stops_a_protected_start_in_one_line(
    start_node: NodeStarter, run_service: ServiceRunner, validators_dir: Callable[..., Path]
) -> None:
    node, url = await start_node(DutyNode, strict=False, validator_count=4)
    node.misbehave(routes.LIVENESS, status=404, body={"code": 404, "message": "Not Found"})
    directory = validators_dir(4)
    with pytest.raises(StartupError) as raised:
        await run_service(
            url,
            directory,
            strict=False,
            init_slashing_protection=True,
            doppelganger_protection=True,
        )
    message = str(raised.value)
    assert "\n" not in message
    assert "POST /eth/v1/validator/liveness/{epoch}" in message and "HTTP 404" in message
    # Without the flag the same node is fine: the endpoint is not needed.
    service = await run_service(
        url, directory, strict=False, init_slashing_protection=True, stop_after=1.0
    )
    assert service.gate is not None and len(service.gate.signer.pubkeys()) == 4
