"""A correct validator's whole flow against the devnet: every duty accepted and counted."""

from __future__ import annotations

from pathlib import Path

from tests.devnet.conftest import connected_driver, running_devnet


async def test_correct_flow_is_accepted_and_counted(tmp_path: Path) -> None:
    async with running_devnet(tmp_path / "devnet") as node:
        async with connected_driver(node) as driver:
            first = node.chain.current_slot() + 1
            await driver.run(first, first + 4 * 4)
        summary = node.summary()
    print(summary)
    print(driver.errors, driver.sent, driver.refusals)
    assert driver.errors == []
    assert summary["invalid_signatures"] == 0
    assert summary["slashable_messages"] == 0
    assert summary["blocks_proposed"] == driver.sent["blocks"] > 0
    assert summary["attestations_received"] == driver.sent["attestations"] > 0
    assert summary["aggregates_received"] == driver.sent["aggregates"] > 0
    assert summary["sync_messages_received"] == driver.sent["sync_messages"] > 0
    assert summary["contributions_received"] == driver.sent["contributions"] > 0
