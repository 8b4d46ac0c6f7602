"""What the loop refuses: messages the record cannot cover, and start-ups that are not safe."""

from __future__ import annotations

import errno
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import REGISTRY

import slashing_protection.record
from slashing_protection import SlashingProtection
from tests.support.beacon_fixtures import NodeStarter
from tests.support.duty_node import GENESIS_VALIDATORS_ROOT, DutyNode, Schedule
from tests.validator.conftest import ServiceRunner
from validator.beacon import routes
from validator.service import StartupError

VALIDATORS = 8


def refusals(kind: str, reason: str) -> float:
    value = REGISTRY.get_sample_value(
        "validator_signature_refusals_total", {"kind": kind, "reason": reason}
    )
    return value or 0.0


def duty_count(kind: str, result: str) -> float:
    value = REGISTRY.get_sample_value("validator_duties_total", {"kind": kind, "result": result})
    return value or 0.0


def published_slots(node: DutyNode, route: str) -> set[int]:
    slots = set()
    for arrival in node.published(route):
        if route == routes.PUBLISH_BLOCK_V2:
            slots.add(int(arrival.body["signed_block"]["message"]["slot"]))
        elif route == routes.POOL_SYNC_COMMITTEES:
            slots.update(int(item["slot"]) for item in arrival.body)
        else:
            slots.update(int(item["data"]["slot"]) for item in arrival.body)
    return slots


async def test_a_failed_record_write_publishes_no_block_and_no_attestation(
    start_node: NodeStarter,
    run_service: ServiceRunner,
    validators_dir: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    node, url = await start_node(
        DutyNode,
        validator_count=VALIDATORS,
        schedule=Schedule(sync_positions={0: [0]}),
    )
    broken_from = 3
    real_write = slashing_protection.record.write_durably
    broken = False

    def write(path: Path, data: bytes, **options: Any) -> None:
        if broken:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(path, data, **options)

    def break_disk(slot: int) -> None:
        nonlocal broken
        broken = slot >= broken_from

    monkeypatch.setattr(slashing_protection.record, "write_durably", write)
    refused_before = refusals("attestation", "record_write_failed")
    blocks_refused_before = refusals("block", "record_write_failed")
    await run_service(
        url,
        validators_dir(VALIDATORS),
        init_slashing_protection=True,
        last_slot=broken_from + 2,
        on_slot=break_disk,
    )
    attestation_slots = published_slots(node, routes.POOL_ATTESTATIONS_V2)
    block_slots = published_slots(node, routes.PUBLISH_BLOCK_V2)
    assert attestation_slots and max(attestation_slots) < broken_from
    assert block_slots and max(block_slots) < broken_from
    # Not slashable, not recorded: sync committee messages go on.
    assert max(published_slots(node, routes.POOL_SYNC_COMMITTEES)) >= broken_from + 1
    assert refusals("attestation", "record_write_failed") - refused_before >= 6
    assert refusals("block", "record_write_failed") - blocks_refused_before >= 2


async def test_a_key_without_a_record_is_refused_and_the_others_go_on(
    start_node: NodeStarter, run_service: ServiceRunner, validators_dir: Callable[..., Path]
) -> None:
    node, url = await start_node(DutyNode, validator_count=VALIDATORS)
    directory = validators_dir(VALIDATORS)
    registered = [node.keys[index][1] for index in range(6)]
    SlashingProtection.open(directory, GENESIS_VALIDATORS_ROOT, register=registered).close()
    refused_before = refusals("attestation", "not_registered")
    service = await run_service(url, directory, last_slot=5)
    attesters = {
        int(item["attester_index"])
        for arrival in node.published(routes.POOL_ATTESTATIONS_V2)
        for item in arrival.body
    }
    assert attesters == set(range(6))
    assert service.unregistered == sorted(node.keys[index][1] for index in (6, 7))
    assert refusals("attestation", "not_registered") - refused_before >= 2
    proposers = {
        int(arrival.body["signed_block"]["message"]["proposer_index"])
        for arrival in node.published(routes.PUBLISH_BLOCK_V2)
    }
    assert proposers and not proposers & {6, 7}
    with SlashingProtection.open(directory, GENESIS_VALIDATORS_ROOT) as record:
        assert not record.contains(node.keys[6][1])


async def test_no_record_without_the_init_flag(
    start_node: NodeStarter, run_service: ServiceRunner, validators_dir: Callable[..., Path]
) -> None:
    node, url = await start_node(DutyNode, validator_count=2)
    directory = validators_dir(2)
    with pytest.raises(StartupError, match="no slashing-protection record"):
        await run_service(url, directory, last_slot=3)
    assert not (directory / "slashing_protection.json").exists()
    assert node.published(routes.POOL_ATTESTATIONS_V2) == []


async def test_another_chains_record_stops_the_start(
    start_node: NodeStarter, run_service: ServiceRunner, validators_dir: Callable[..., Path]
) -> None:
    node, url = await start_node(DutyNode, validator_count=2)
    directory = validators_dir(2)
    other_chain = bytes.fromhex("0e" * 32)
    SlashingProtection.open(directory, other_chain, register=[node.keys[0][1]]).close()
    before = (directory / "slashing_protection.json").read_bytes()
    with pytest.raises(StartupError, match="genesis_validators_root"):
        await run_service(url, directory, init_slashing_protection=True, last_slot=3)
    assert (directory / "slashing_protection.json").read_bytes() == before
    assert node.requests_to(routes.ATTESTER_DUTIES) == []


async def test_a_locked_directory_stops_the_start(
    start_node: NodeStarter, run_service: ServiceRunner, validators_dir: Callable[..., Path]
) -> None:
    node, url = await start_node(DutyNode, validator_count=2)
    directory = validators_dir(2)
    with SlashingProtection.open(directory, GENESIS_VALIDATORS_ROOT, register=[node.keys[0][1]]):
        with pytest.raises(StartupError, match="in use by another process"):
            await run_service(url, directory, init_slashing_protection=True, last_slot=3)
    assert node.requests_to(routes.ATTESTER_DUTIES) == []
