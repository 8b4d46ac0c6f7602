"""Strict mode: the devnet's own answers conform to the Beacon API, violations are loud."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp

from tests.support.official_vectors import official_vectors
from tests.validator.devnet.harness import connected_driver, running_devnet
from validator.beacon.events import HeadEvent
from validator.devnet.strict_mode.checkers import StrictClientChecker
from validator.devnet.strict_mode.openapi_spec import load_beacon_api_spec


async def test_a_full_flow_conforms_on_both_sides(tmp_path: Path) -> None:
    official_vectors("beacon-api")
    checker = StrictClientChecker(load_beacon_api_spec())
    # 1.2 s slots: the spec checks on both sides cost CPU; this test is about conformance.
    async with running_devnet(tmp_path / "devnet", seconds_per_slot=1.2, strict=True) as node:
        async with connected_driver(node, middlewares=(checker,)) as driver:
            heads: list[HeadEvent] = []

            async def listen() -> None:
                async with driver.client.events(["head", "block"]) as stream:
                    async for event in stream:
                        if isinstance(event, HeadEvent):
                            heads.append(event)

            listener = asyncio.create_task(listen())
            first = node.chain.current_slot() + 1
            await driver.run(first, first + 3)
            await driver.client.get_validators(["0", "1"])
            await driver.client.get_finality_checkpoints()
            await driver.client.get_state_fork()
            await driver.client.get_spec()
            await driver.client.get_fork_schedule()
            await driver.client.get_node_version()
            listener.cancel()
        summary = node.summary()
    assert driver.errors == []
    assert checker.violations == []
    assert summary["strict_violations"] == 0, summary["strict_violation_details"]
    assert checker.checked_responses > 30
    assert summary["blocks_proposed"] > 0 and summary["contributions_received"] > 0
    assert heads, "head events reached the client through the strict server"


async def test_a_non_conforming_request_is_refused_and_counted(tmp_path: Path) -> None:
    official_vectors("beacon-api")
    async with running_devnet(tmp_path / "devnet", strict=True) as node:
        async with aiohttp.ClientSession() as session:
            url = f"{node.url}/eth/v1/validator/duties/attester/0"
            async with session.post(url, json=[1, 2]) as answer:  # integers, not strings
                assert answer.status == 400
                body = await answer.json()
                assert "does not conform to the Beacon API" in body["message"]
            async with session.get(f"{node.url}/eth/v1/events?topics=head,block") as answer:
                assert answer.status == 400  # the comma form is not the spec's array form
        summary = node.summary()
    assert summary["strict_violations"] == 2
    assert len(summary["strict_violation_details"]) == 2
