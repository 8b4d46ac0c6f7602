"""``validator run --builder`` against a Beacon API double: registrations, blinded blocks, and
the Keymanager API's settings winning over ``--proposer-config`` across a restart."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import aiohttp

from tests.support import canned
from tests.support.beacon_fixtures import NodeStarter
from tests.support.duty_node import DutyNode
from tests.validator.conftest import ServiceRunner, keymanager_running
from validator.beacon import routes
from validator.consensus.encoding import to_hex
from validator.duties.metrics import BLOCKS_PROPOSED, BUILDER_FEE_RECIPIENT_MISMATCHES

VALIDATORS = 8
DEFAULT_FEE = "0x" + "d0" * 20
KEY_FEE = "0x" + "d1" * 20
API_FEE = "0x" + "d2" * 20


def registered(node: DutyNode, since: int = 0) -> dict[str, dict[str, str]]:
    """pubkey -> the last registration message the double received (from arrival ``since``)."""
    found: dict[str, dict[str, str]] = {}
    for arrival in node.published(routes.REGISTER_VALIDATOR)[since:]:
        for item in arrival.body:
            found[item["message"]["pubkey"]] = item["message"]
    return found


def write_config(path: Path, node: DutyNode) -> Path:
    path.write_text(
        json.dumps(
            {
                "proposer_config": {
                    to_hex(node.keys[1][1]): {"fee_recipient": KEY_FEE},
                    to_hex(node.keys[2][1]): {"builder": {"enabled": False}},
                    # A key this validator does not have: a warning, not a stop.
                    "0x" + "ab" * 48: {"fee_recipient": KEY_FEE},
                },
                "default_config": {
                    "fee_recipient": DEFAULT_FEE,
                    "builder": {"gas_limit": "30000000"},
                },
            }
        )
    )
    return path


async def test_builder_blocks_are_signed_blinded_and_every_enabled_key_registers(
    start_node: NodeStarter,
    run_service: ServiceRunner,
    validators_dir: Callable[..., Path],
    tmp_path: Path,
) -> None:
    # One-second slots: a loaded machine still publishes most blocks in their slot.
    node, url = await start_node(DutyNode, validator_count=VALIDATORS, slot_duration_ms=1000)
    node.blinded_blocks = True
    chain = node.chain
    config = write_config(tmp_path / "proposer.json", node)
    builder_before = BLOCKS_PROPOSED.labels("builder")._value.get()
    local_before = BLOCKS_PROPOSED.labels("local")._value.get()
    mismatches_before = BUILDER_FEE_RECIPIENT_MISMATCHES._value.get()
    await run_service(
        url,
        validators_dir(VALIDATORS),
        init_slashing_protection=True,
        builder=True,
        builder_boost_factor=250,
        proposer_config=config,
        last_slot=chain.start_slot_of_epoch(1) + 1,
    )
    messages = registered(node)
    # Key 2 switched the builder flow off in the file; every other key registered.
    assert set(messages) == {to_hex(pk) for index, (_, pk) in enumerate(node.keys) if index != 2}
    assert messages[to_hex(node.keys[1][1])]["fee_recipient"] == KEY_FEE
    assert messages[to_hex(node.keys[0][1])]["fee_recipient"] == DEFAULT_FEE
    assert {message["gas_limit"] for message in messages.values()} == {"30000000"}
    # Sent at start and again in epoch 1, the same signed messages both times.
    rounds = node.published(routes.REGISTER_VALIDATOR)
    assert len(rounds) >= 2 and rounds[0].body == rounds[1].body
    asked = node.requests_to(routes.PRODUCE_BLOCK_V3)
    assert asked, "no block was asked for"
    factors = {
        node.proposer(int(request.path.rsplit("/", 1)[1])): dict(request.query)[
            "builder_boost_factor"
        ]
        for request in asked
    }
    assert all(value == ("0" if index == 2 else "250") for index, value in factors.items())
    blinded = node.published(routes.PUBLISH_BLINDED_BLOCK_V2)
    # A block still being signed when its slot ends is abandoned, never published late.
    assert 1 <= len(blinded) <= len(asked) and not node.published(routes.PUBLISH_BLOCK_V2)
    # Counted once published in time (a loaded machine may abandon one at its deadline).
    counted = BLOCKS_PROPOSED.labels("builder")._value.get() - builder_before
    assert 1 <= counted <= len(blinded)
    assert BLOCKS_PROPOSED.labels("local")._value.get() == local_before
    # The double's payload pays canned.FEE_RECIPIENT, not the key's: counted, published anyway.
    assert canned.FEE_RECIPIENT not in (DEFAULT_FEE, KEY_FEE)
    mismatches = BUILDER_FEE_RECIPIENT_MISMATCHES._value.get() - mismatches_before
    assert len(blinded) <= mismatches <= len(asked)


async def test_the_keymanager_api_wins_over_the_file_and_survives_a_restart(
    start_node: NodeStarter,
    run_service: ServiceRunner,
    validators_dir: Callable[..., Path],
    tmp_path: Path,
) -> None:
    node, url = await start_node(DutyNode, validator_count=VALIDATORS)
    config = write_config(tmp_path / "proposer.json", node)
    directory = validators_dir(VALIDATORS)
    key_1, key_3 = to_hex(node.keys[1][1]), to_hex(node.keys[3][1])
    async with keymanager_running(
        run_service, url, directory, builder=True, proposer_config=config
    ) as api:
        headers = {"Authorization": f"Bearer {api.token}"}
        async with aiohttp.ClientSession(headers=headers) as http:
            async with http.get(f"{api.base_url}/validator/{key_3}/feerecipient") as response:
                assert (await response.json())["data"]["ethaddress"] == DEFAULT_FEE
            async with http.get(f"{api.base_url}/validator/{key_3}/gas_limit") as response:
                assert (await response.json())["data"]["gas_limit"] == "30000000"
            body = {"ethaddress": API_FEE}
            url_1 = f"{api.base_url}/validator/{key_1}/feerecipient"
            async with http.post(url_1, json=body) as response:
                assert response.status == 202
    assert registered(node)[key_1]["fee_recipient"] == KEY_FEE
    first_run = len(node.published(routes.REGISTER_VALIDATOR))
    await run_service(url, directory, builder=True, proposer_config=config, stop_after=1.0)
    after = registered(node, first_run)
    assert after[key_1]["fee_recipient"] == API_FEE
    assert after[key_3]["fee_recipient"] == DEFAULT_FEE


async def test_keys_waiting_under_doppelganger_protection_register_nothing(
    start_node: NodeStarter,
    run_service: ServiceRunner,
    validators_dir: Callable[..., Path],
) -> None:
    node, url = await start_node(DutyNode, validator_count=VALIDATORS)
    chain = node.chain
    service = await run_service(
        url,
        validators_dir(VALIDATORS),
        init_slashing_protection=True,
        doppelganger_protection=True,
        builder=True,
        suggested_fee_recipient=bytes.fromhex(DEFAULT_FEE[2:]),
        last_slot=chain.start_slot_of_epoch(1) + 1,
    )
    assert service.gate is not None and len(service.gate.waiting()) == VALIDATORS
    assert service.registrations is not None
    # Rounds ran (at start and in epoch 1), but no key was in the signer to register.
    assert node.published(routes.REGISTER_VALIDATOR) == []
    assert node.requests_to(routes.PRODUCE_BLOCK_V3) == []
