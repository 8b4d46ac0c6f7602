"""Each fault mode misbehaves as documented; a correct client still gives the slasher nothing."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp

from tests.validator.devnet.driver import Driver
from tests.validator.devnet.harness import connected_driver, running_devnet
from validator.beacon.events import ChainReorgEvent, HeadEvent
from validator.devnet import SimulatedBeaconNode

SLOT = 0.3
SLOTS_PER_EPOCH = 4


@contextlib.asynccontextmanager
async def faulty(tmp_path: Path, fault: str) -> AsyncIterator[tuple[SimulatedBeaconNode, Driver]]:
    async with running_devnet(tmp_path / "devnet", seconds_per_slot=SLOT, fault=fault) as node:
        async with connected_driver(node) as driver:
            yield node, driver


async def run_until(node: SimulatedBeaconNode, driver: Driver, epoch: int, index: int) -> None:
    """Do every duty (sync committee aside) up to slot ``index`` of ``epoch``."""
    first = node.chain.current_slot() + 1
    await driver.run(first, epoch * SLOTS_PER_EPOCH + index, sync=False)


def assert_nothing_slashable(node: SimulatedBeaconNode) -> dict[str, Any]:
    summary = node.summary()
    assert summary["slashable_messages"] == 0, summary["slashings"]
    assert summary["invalid_signatures"] == 0
    return summary


async def test_double_vote_gives_voters_a_second_duty_with_another_head(tmp_path: Path) -> None:
    async with faulty(tmp_path, "double-vote") as (node, driver):
        await run_until(node, driver, 2, 3)
        summary = assert_nothing_slashable(node)
    assert summary["fault_events"]["reorgs"] >= 1
    assert summary["fault_events"]["double_vote_traps"] >= 1
    assert driver.refusals["attestation"] >= 1
    # What was refused: a second vote of a validator for epoch 2, with another head and target.
    seconds = [
        (driver.attested_data[(validator, 2)], data)
        for validator, data in driver.refused_attestations
        if (validator, 2) in driver.attested_data and data["target"]["epoch"] == "2"
    ]
    assert seconds
    for signed, offered in seconds:
        assert int(offered["slot"]) > int(signed["slot"])
        assert offered["beacon_block_root"] != signed["beacon_block_root"]
        assert offered["target"]["root"] != signed["target"]["root"]


async def test_surround_vote_serves_a_source_older_than_earlier_votes(tmp_path: Path) -> None:
    async with faulty(tmp_path, "surround-vote") as (node, driver):
        await run_until(node, driver, 2, 3)
        assert node.chain.finality.current_justified.epoch >= 1
        sources_before = {source for source, _ in driver.protection.attestations.values()}
        assert min(sources_before) >= 1
        await driver.run(node.chain.current_slot() + 1, 3 * SLOTS_PER_EPOCH + 1, sync=False)
        data = await driver.client.get_attestation_data(node.chain.current_slot())
        summary = assert_nothing_slashable(node)
    assert int(data["source"]["epoch"]) == 0 and int(data["target"]["epoch"]) == 3
    assert summary["fault_events"]["surround_offers"] >= 1
    assert driver.refusals["attestation"] >= 1


async def test_far_future_offers_slots_and_targets_far_ahead(tmp_path: Path) -> None:
    async with faulty(tmp_path, "far-future") as (node, driver):
        await run_until(node, driver, 1, 3)
        summary = assert_nothing_slashable(node)
    assert driver.refusals["wrong_target_epoch"] >= 1
    assert driver.refusals["wrong_slot"] >= 1
    assert driver.refusals["block_wrong_slot"] == 1
    assert summary["fault_events"]["far_future_offers"] >= 3


async def test_conflicting_block_reannounces_a_proposal_already_made(tmp_path: Path) -> None:
    async with faulty(tmp_path, "conflicting-block") as (node, driver):
        await run_until(node, driver, 1, 3)
        summary = assert_nothing_slashable(node)
    assert summary["fault_events"]["proposals_reannounced"] == 1
    assert summary["fault_events"]["conflicting_block_requests"] >= 1
    assert driver.refusals["block"] >= 1


async def test_reorg_changes_dependent_roots_and_announces_it(tmp_path: Path) -> None:
    async with faulty(tmp_path, "reorg") as (node, driver):
        events: list[object] = []

        async def listen() -> None:
            async with driver.client.events(["head", "chain_reorg"]) as stream:
                async for event in stream:
                    events.append(event)

        listener = asyncio.create_task(listen())
        await run_until(node, driver, 1, 2)
        before = await driver.client.get_attester_duties(2, range(8))
        await driver.run(node.chain.current_slot() + 1, 2 * SLOTS_PER_EPOCH, sync=False)
        after = await driver.client.get_attester_duties(2, range(8))
        listener.cancel()
        summary = assert_nothing_slashable(node)
    assert summary["fault_events"]["reorgs"] >= 1
    assert before.dependent_root != after.dependent_root
    reorgs = [event for event in events if isinstance(event, ChainReorgEvent)]
    assert reorgs and reorgs[0].epoch == 1
    heads = [event for event in events if isinstance(event, HeadEvent)]
    assert any(head.block == reorgs[0].new_head_block for head in heads)


async def test_unavailable_refuses_then_holds_requests(tmp_path: Path) -> None:
    async with faulty(tmp_path, "unavailable") as (node, driver):
        await run_until(node, driver, 1, 1)
        url = node.url
        async with aiohttp.ClientSession() as session:
            await driver.wait_until(SLOTS_PER_EPOCH + 2, 0.1)
            async with session.get(f"{url}/eth/v1/validator/duties/proposer/1") as answer:
                assert answer.status == 503
                assert (await answer.json())["code"] == 503
            async with session.get(f"{url}/eth/v1/node/version") as answer:
                assert answer.status == 500  # the spec gives this endpoint no 503
            async with session.get(f"{url}/eth/v1/node/health") as answer:
                assert answer.status == 503
            await driver.wait_until(SLOTS_PER_EPOCH + 3, 0.1)
            started = asyncio.get_running_loop().time()
            async with session.get(f"{url}/eth/v1/beacon/genesis") as answer:
                assert answer.status == 500
            assert asyncio.get_running_loop().time() - started >= 2 * SLOT * 0.9
        await driver.run(2 * SLOTS_PER_EPOCH, 2 * SLOTS_PER_EPOCH + 1, sync=False)
        summary = assert_nothing_slashable(node)
    assert summary["fault_events"]["unavailable_responses"] >= 4
    assert summary["fault_events"]["delayed_responses"] >= 1
    assert summary["fault_events"]["event_streams_closed"] >= 1
    assert summary["blocks_proposed"] >= 5


async def test_duties_reorg_announces_the_same_proposers_under_another_root(
    tmp_path: Path,
) -> None:
    async with faulty(tmp_path, "duties-reorg") as (node, driver):
        await run_until(node, driver, 0, SLOTS_PER_EPOCH - 1)
        before = await driver.client.get_proposer_duties(1)
        await run_until(node, driver, 1, 1)
        after = await driver.client.get_proposer_duties(1)
        head = node.chain.head_event(False)
        summary = assert_nothing_slashable(node)
    assert summary["fault_events"]["duties_reorgs"] == 1
    assert after.dependent_root != before.dependent_root
    assert after.duties == before.duties
    assert head["current_duty_dependent_root"] == "0x" + after.dependent_root.hex()


async def test_builder_offline_serves_local_blocks_to_registered_proposers(
    tmp_path: Path,
) -> None:
    from tests.validator.devnet.chain.test_builder_relay import _registration

    async with running_devnet(
        tmp_path / "devnet", seconds_per_slot=SLOT, fault="builder-offline", builder=True
    ) as node:
        async with connected_driver(node) as driver:
            now = int(time.time())
            await driver.client.register_validators(
                [_registration(driver, index, now) for index in range(8)]
            )
            await run_until(node, driver, 1, 1)
            summary = assert_nothing_slashable(node)
    assert summary["fault_events"]["relay_failures"] >= 1
    assert summary["blocks_proposed"] >= 1
    assert summary["builder_blocks_offered"] == 0
