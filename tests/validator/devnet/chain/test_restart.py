"""A second run on the same directory continues the chain, and its slasher remembers."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.validator.devnet.driver import FORK
from tests.validator.devnet.harness import connected_driver, running_devnet
from validator.beacon.errors import BeaconApiError
from validator.devnet import DevnetStateError, SimulatedBeaconNode
from validator.devnet.chain.state_directory import PUBKEYS_FILE, STATE_FILE, ChainIdentity


async def test_restart_continues_the_chain_and_the_slasher(tmp_path: Path) -> None:
    state_dir = tmp_path / "devnet"
    async with running_devnet(state_dir) as first:
        async with connected_driver(first) as driver:
            slot = first.chain.current_slot() + 1
            await driver.run_slot(slot, aggregate=False, sync=False)
            assert driver.errors == []
            voted = driver.attested_data
            genesis = (first.genesis_time, first.genesis_validators_root)
            head = first.chain.tree.head
            first_summary = first.summary()
    assert (state_dir / STATE_FILE).is_file() and (state_dir / PUBKEYS_FILE).is_file()
    assert list((state_dir / "slasher").iterdir())
    assert first_summary["attestations_received"] == len(voted) > 0

    await asyncio.sleep(1.0)  # slots pass while the chain is stopped
    async with running_devnet(state_dir) as second:
        assert (second.genesis_time, second.genesis_validators_root) == genesis
        assert second.chain.tree.get(head.root) == head
        assert second.chain.current_slot() > head.slot + 1
        for missed in range(head.slot + 1, second.chain.current_slot() + 1):
            assert second.chain.tree.canonical_at(missed) is None
        async with connected_driver(second) as driver:
            (validator, target), data = next(iter(voted.items()))
            duties = await driver.client.get_attester_duties(target, [validator])
            conflicting = dict(data, beacon_block_root="0x" + "cd" * 32)
            attestation = driver.single_attestation(duties.duties[0], conflicting)
            with pytest.raises(BeaconApiError) as caught:
                await driver.client.publish_attestations([attestation], consensus_version=FORK)
            assert caught.value.failures[0].message.startswith("slashable:")
        summary = second.summary()
    assert summary["runs"] == 2
    assert summary["slashable_double_votes"] == 1
    assert summary["cumulative"]["attestations_received"] == first_summary["attestations_received"]
    assert summary["counting_duties_from_slot"] > head.slot + 1


async def test_another_validator_count_is_refused(tmp_path: Path) -> None:
    async with running_devnet(tmp_path / "devnet", validators=8):
        pass
    node = SimulatedBeaconNode(tmp_path / "devnet", 16, 0.4, 4)
    with pytest.raises(DevnetStateError, match="validators = 8, this run asks for 16"):
        await node.start()
    # The refusal left nothing locked or changed: the right count still starts.
    async with running_devnet(tmp_path / "devnet", validators=8) as again:
        assert again.summary()["runs"] == 2


async def test_a_second_devnet_on_the_same_directory_is_refused(tmp_path: Path) -> None:
    async with running_devnet(tmp_path / "devnet"):
        second = SimulatedBeaconNode(tmp_path / "devnet", 8, 0.4, 4)
        with pytest.raises(DevnetStateError, match="already running"):
            await second.start()


async def test_one_node_object_stops_idempotently_and_starts_again(tmp_path: Path) -> None:
    node = SimulatedBeaconNode(tmp_path / "devnet", 4, 0.4, 4)
    await node.start()
    genesis = node.genesis_time
    await node.stop()
    await node.stop()
    assert node.summary()["runs"] == 1
    await node.start()
    try:
        assert node.genesis_time == genesis
        assert node.summary()["runs"] == 2
    finally:
        await node.stop()


def test_a_state_written_before_presets_is_a_mainnet_chain() -> None:
    identity = ChainIdentity(1, bytes(32), 8, 500, 4, 8, preset="minimal")
    data = identity.to_json()
    assert ChainIdentity.from_json(data) == identity
    del data["preset"]
    assert ChainIdentity.from_json(data).preset == "mainnet"
