"""The slasher sees what the client publishes: double votes, surround votes, double proposals."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.validator.devnet.driver import FORK, Driver
from tests.validator.devnet.harness import connected_driver, running_devnet
from validator.beacon import RawEvent
from validator.beacon.errors import BeaconApiError
from validator.consensus.encoding import to_hex
from validator.consensus.signing_roots import block_signing_root
from validator.consensus.ssz import fulu, to_json
from validator.duties.doppelganger import slashed_indices


def altered(data: dict[str, Any], **changes: Any) -> dict[str, Any]:
    copy = {**data, "source": dict(data["source"]), "target": dict(data["target"])}
    for path, value in changes.items():
        if "__" in path:
            outer, inner = path.split("__")
            copy[outer][inner] = value
        else:
            copy[path] = value
    return copy


async def publish_rejected(driver: Driver, attestation: dict[str, Any]) -> str:
    with pytest.raises(BeaconApiError) as caught:
        await driver.client.publish_attestations([attestation], consensus_version=FORK)
    return caught.value.failures[0].message


async def test_slashable_patterns_are_detected_and_rebroadcasts_are_not(tmp_path: Path) -> None:
    async with running_devnet(tmp_path / "devnet") as node:
        async with connected_driver(node) as driver:
            slot = node.chain.current_slot() + 1
            await driver.wait_until(slot, 0.05)
            root = await driver.propose(slot)
            assert root is not None
            await driver.wait_until(slot, 1 / 3)
            duties = await driver.duties_at(slot)
            data = await driver.client.get_attestation_data(slot)
            honest = driver.single_attestation(duties[0], data)
            await driver.client.publish_attestations([honest], consensus_version=FORK)
            # The same attestation again: a re-broadcast, accepted, nothing slashable.
            await driver.client.publish_attestations([honest], consensus_version=FORK)

            # Double vote: same target, another head.
            other_head = altered(data, beacon_block_root="0x" + "ab" * 32)
            message = await publish_rejected(
                driver, driver.single_attestation(duties[0], other_head)
            )
            assert message.startswith("slashable: validator") and "twice" in message

            # Surround vote: 2->5 first (refused as off-chain, but signed), then 1->6 around it.
            wide_inner = altered(data, source__epoch="2", target__epoch="5")
            assert "slashable" not in await publish_rejected(
                driver, driver.single_attestation(duties[1], wide_inner)
            )
            around = altered(data, source__epoch="1", target__epoch="6")
            message = await publish_rejected(driver, driver.single_attestation(duties[1], around))
            assert message.startswith("slashable:") and "surrounds" in message

            # Double proposal: the same block again is fine, a changed one is not, and the
            # chain announces it as a proposer_slashing event with both signed headers.
            slashing_events: list[RawEvent] = []

            async def listen() -> None:
                async with driver.client.events(["proposer_slashing"]) as stream:
                    async for event in stream:
                        assert isinstance(event, RawEvent)
                        slashing_events.append(event)
                        return

            subscribers = node.chain.events.subscriber_count
            listener = asyncio.create_task(listen())
            async with asyncio.timeout(10):
                while node.chain.events.subscriber_count <= subscribers:
                    await asyncio.sleep(0.01)
            summary_before = node.summary()
            assert summary_before["blocks_proposed"] == 1
            produced = node.chain.produced[root]
            signature = driver.sign(
                produced.proposer_index, block_signing_root(driver.spec, produced.block)
            )
            same = fulu.SignedBlockContents(
                signed_block=fulu.SignedBeaconBlock(message=produced.block, signature=signature)
            )
            await driver.client.publish_block(to_json(same), consensus_version=FORK)
            changed_block = produced.block.copy()
            changed_block.body.graffiti = b"\x99" * 32
            changed = fulu.SignedBlockContents(
                signed_block=fulu.SignedBeaconBlock(
                    message=changed_block,
                    signature=driver.sign(
                        produced.proposer_index, block_signing_root(driver.spec, changed_block)
                    ),
                )
            )
            with pytest.raises(BeaconApiError) as caught:
                await driver.client.publish_block(to_json(changed), consensus_version=FORK)
            assert "slashable block" in caught.value.message
            async with asyncio.timeout(10):
                await listener
            (event,) = slashing_events
            assert slashed_indices(event) == {produced.proposer_index}
            headers = event.data["signed_header_1"], event.data["signed_header_2"]
            assert {header["message"]["body_root"] for header in headers} == {
                to_hex(bytes(produced.block.body.hash_tree_root())),
                to_hex(bytes(changed_block.body.hash_tree_root())),
            }
        summary = node.summary()
    assert summary["slashable_messages"] == 3
    assert summary["slashable_double_votes"] == 1
    assert summary["slashable_surround_votes"] == 1
    assert summary["slashable_double_proposals"] == 1
    assert summary["invalid_signatures"] == 0
    assert summary["duplicate_messages"] == 2
    assert summary["attestations_received"] == 1
    assert {finding["kind"] for finding in summary["slashings"]} == {
        "double_vote",
        "surround_vote",
        "double_proposal",
    }
