"""A duty whose deadline has passed is dropped and counted as missed, never sent late
(started in the middle of a slot with slow sync duties, a client could otherwise send that
slot's sync committee messages after the slot had ended, for the node to reject)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from prometheus_client import REGISTRY

from tests.support.beacon_fixtures import NodeStarter
from tests.support.duty_node import DutyNode, Schedule
from tests.validator.conftest import ServiceRunner
from validator.beacon import routes

VALIDATORS = 8
SLOT_MS = 600
# Less than slot transit slack would hide; far more than any on-time message needs.
TRANSIT = 0.1


def missed(kind: str) -> float:
    labels = {"kind": kind, "result": "missed"}
    return REGISTRY.get_sample_value("validator_duties_total", labels) or 0.0


async def test_sync_messages_of_a_slot_never_arrive_after_it(
    start_node: NodeStarter, run_service: ServiceRunner, validators_dir: Callable[..., Path]
) -> None:
    node, url = await start_node(DutyNode,
        validator_count=VALIDATORS,
        slot_duration_ms=SLOT_MS,
        genesis_slots_ago=1.5,
        schedule=Schedule(sync_positions={0: [0], 1: [1], 2: [200]}),
    )
    # Genesis is a whole second, so the node's clock may be anywhere in slots 0 and 1 by
    # now: wait for the middle of slot 1, or the answer below could still beat slot 1's end.
    await asyncio.sleep(max(0.0, node.slot_start(1) + SLOT_MS / 2000 - time.time()))
    # The first sync duties answer takes most of a slot: slot 1's messages cannot make it.
    node.delays[routes.SYNC_DUTIES] = 0.9 * SLOT_MS / 1000
    before = missed("sync_committee_message")
    await run_service(url, validators_dir(VALIDATORS), init_slashing_protection=True, last_slot=5)
    node.delays.clear()
    assert missed("sync_committee_message") > before
    published: set[int] = set()
    for arrival in node.published(routes.POOL_SYNC_COMMITTEES):
        for message in arrival.body:
            slot = int(message["slot"])
            published.add(slot)
            assert arrival.at < node.slot_start(slot + 1) + TRANSIT, (slot, arrival.at)
    for arrival in node.published(routes.CONTRIBUTION_AND_PROOFS):
        for signed in arrival.body:
            slot = int(signed["message"]["contribution"]["slot"])
            assert arrival.at < node.slot_start(slot + 1) + TRANSIT, (slot, arrival.at)
    # Later slots, with their duties known in time, still got their messages.
    assert published & {3, 4, 5}
