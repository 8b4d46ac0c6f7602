"""A correct validator's whole flow against the devnet: every duty accepted and counted."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.validator.devnet.harness import SLOTS_PER_EPOCH, connected_driver, running_devnet
from validator.beacon.events import BlockEvent, HeadEvent
from validator.devnet.judge.blocks import embedded_signature_checks
from validator.devnet.judge.signatures import failed_checks

SUMMARY_KEYS = {
    "slots",
    "blocks_proposed",
    "attestations_received",
    "aggregates_received",
    "sync_messages_received",
    "contributions_received",
    "invalid_signatures",
    "slashable_messages",
    "missed_duties",
    "missed_duties_detail",
    "justified_epoch",
    "finalized_epoch",
    "fault_events",
    "cumulative",
}


async def test_correct_flow_is_accepted_counted_and_finalizes(tmp_path: Path) -> None:
    async with running_devnet(tmp_path / "devnet") as node:
        async with connected_driver(node) as driver:
            events: list[object] = []

            async def listen() -> None:
                async with driver.client.events(["head", "block"]) as stream:
                    async for event in stream:
                        events.append(event)

            listener = asyncio.create_task(listen())
            first = node.chain.current_slot() + 1
            node.start_counting_duties(first)
            await driver.run(first, 3 * SLOTS_PER_EPOCH + 1)
            proposer_roots = {
                epoch: (await driver.client.get_proposer_duties(epoch)).dependent_root
                for epoch in range(4)
            }
            attester_roots = {
                epoch: (await driver.client.get_attester_duties(epoch, [0])).dependent_root
                for epoch in range(4)
            }
            listener.cancel()
        summary = node.summary()
    assert driver.errors == []
    assert SUMMARY_KEYS <= summary.keys()
    assert summary["invalid_signatures"] == 0
    assert summary["slashable_messages"] == 0
    assert summary["blocks_proposed"] == driver.sent["blocks"] > 0
    assert summary["attestations_received"] == driver.sent["attestations"] > 0
    assert summary["aggregates_received"] == driver.sent["aggregates"] > 0
    assert summary["sync_messages_received"] == driver.sent["sync_messages"] > 0
    assert summary["contributions_received"] == driver.sent["contributions"] > 0
    assert summary["missed_duties_detail"]["attestations"] == 0
    assert summary["missed_duties"] == sum(summary["missed_duties_detail"].values())
    assert summary["attestation_duties"] >= 2 * 8
    assert summary["justified_epoch"] >= 2 and summary["finalized_epoch"] >= 1
    assert summary["slots"] >= 3 * SLOTS_PER_EPOCH

    blocks = [event for event in events if isinstance(event, BlockEvent)]
    heads = [event for event in events if isinstance(event, HeadEvent)]
    assert len(blocks) == len(heads) == driver.sent["blocks"]
    assert [event.block for event in blocks] == [event.block for event in heads]
    assert {event.block for event in heads} == set(driver.signed_blocks.values())
    previous_slot = 0
    for head in heads:
        epoch = head.slot // SLOTS_PER_EPOCH
        assert head.current_duty_dependent_root == proposer_roots[epoch]
        assert head.previous_duty_dependent_root == attester_roots[epoch]
        assert head.epoch_transition == (epoch != previous_slot // SLOTS_PER_EPOCH)
        previous_slot = head.slot


async def test_produced_blocks_carry_valid_attestations_and_sync_aggregates(tmp_path: Path) -> None:
    async with running_devnet(tmp_path / "devnet") as node:
        async with connected_driver(node) as driver:
            first = node.chain.current_slot() + 1
            await driver.run(first, first + 3)
            assert driver.errors == []
            produced = sorted(node.chain.produced.values(), key=lambda p: p.slot)[-2:]
            for block in produced:
                checks = embedded_signature_checks(node.chain, block.block)
                assert not isinstance(checks, str)
                whats = {check.what for check in checks}
                assert "sync aggregate in the block" in whats
                assert any(what.startswith("attestation") for what in whats)
                assert failed_checks(checks) == []
                # Forging one embedded signature is caught.
                forged = block.block.copy()
                forged.body.sync_aggregate.sync_committee_signature = bytes(
                    forged.body.attestations[0].signature
                )
                forged_checks = embedded_signature_checks(node.chain, forged)
                assert not isinstance(forged_checks, str)
                assert [c.what for c in failed_checks(forged_checks)] == [
                    "sync aggregate in the block"
                ]
