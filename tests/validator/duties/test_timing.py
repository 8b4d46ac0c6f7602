"""When in the slot each duty goes out, and that duties never wait for one another.

These runs leave out the strict spec checks (test_duty_loop.py has them): the
checks cost tens of milliseconds per exchange, which would blur timings
measured in fractions of a 0.6-second slot.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path

from tests.support.beacon_fixtures import NodeStarter
from tests.support.duty_node import DutyNode, Schedule
from tests.validator.conftest import ServiceRunner
from validator.beacon import routes

VALIDATORS = 8


def fractions(node: DutyNode, route: str, slot_of: Callable[[object], int]) -> dict[int, float]:
    """slot -> how far into that slot the route's publication arrived."""
    found = {}
    for arrival in node.published(route):
        slot = slot_of(arrival.body)
        found[slot] = (arrival.at - node.slot_start(slot)) / node.chain.seconds_per_slot
    return found


def attestation_slot(body: object) -> int:
    assert isinstance(body, list)
    return int(body[0]["data"]["slot"])


def sync_slot(body: object) -> int:
    assert isinstance(body, list)
    return int(body[0]["slot"])


def aggregate_slot(body: object) -> int:
    assert isinstance(body, list)
    return int(body[0]["message"]["aggregate"]["data"]["slot"])


def block_slot(body: object) -> int:
    assert isinstance(body, dict)
    return int(body["signed_block"]["message"]["slot"])


def settled(found: dict[int, float]) -> list[float]:
    """Leave out the first slot seen: it may have started before the loop did."""
    return [fraction for slot, fraction in sorted(found.items())[1:]]


async def test_attestations_follow_the_head_event_and_aggregates_wait_for_two_thirds(
    start_node: NodeStarter, run_service: ServiceRunner, validators_dir: Callable[..., Path]
) -> None:
    node, url = await start_node(
        DutyNode,
        strict=False,
        validator_count=VALIDATORS,
        head_delay=0.1,
        schedule=Schedule(sync_positions={index: [index * 32] for index in range(VALIDATORS)}),
    )
    await run_service(
        url, validators_dir(VALIDATORS), strict=False, init_slashing_protection=True, last_slot=6
    )
    attestations = settled(fractions(node, routes.POOL_ATTESTATIONS_V2, attestation_slot))
    sync_messages = settled(fractions(node, routes.POOL_SYNC_COMMITTEES, sync_slot))
    aggregates = settled(fractions(node, routes.AGGREGATE_AND_PROOFS_V2, aggregate_slot))
    blocks = settled(fractions(node, routes.PUBLISH_BLOCK_V2, block_slot))
    assert len(attestations) >= 4
    # After the head event (0.1), well before the one-third timer would have fired.
    assert all(0.1 <= fraction for fraction in attestations + sync_messages)
    assert statistics.median(attestations) < 0.3, attestations
    assert statistics.median(sync_messages) < 0.3, sync_messages
    assert all(2 / 3 <= fraction < 1 for fraction in aggregates), aggregates
    assert statistics.median(blocks) < 0.25, blocks


async def test_without_head_events_the_one_third_timer_drives_attestations(
    start_node: NodeStarter, run_service: ServiceRunner, validators_dir: Callable[..., Path]
) -> None:
    node, url = await start_node(
        DutyNode, strict=False, validator_count=VALIDATORS, head_delay=None
    )
    await run_service(
        url, validators_dir(VALIDATORS), strict=False, init_slashing_protection=True, last_slot=5
    )
    attestations = settled(fractions(node, routes.POOL_ATTESTATIONS_V2, attestation_slot))
    assert len(attestations) >= 3
    assert all(1 / 3 <= fraction < 2 / 3 for fraction in attestations), attestations


async def test_a_slow_block_production_delays_no_attestation(
    start_node: NodeStarter, run_service: ServiceRunner, validators_dir: Callable[..., Path]
) -> None:
    node, url = await start_node(DutyNode, strict=False, validator_count=VALIDATORS, head_delay=0.1)
    # Half a slot to produce each block: the proposal of every slot is still running
    # when the slot's attestations are due.
    node.delays[routes.PRODUCE_BLOCK_V3] = 0.5 * node.chain.seconds_per_slot
    await run_service(
        url, validators_dir(VALIDATORS), strict=False, init_slashing_protection=True, last_slot=5
    )
    blocks = settled(fractions(node, routes.PUBLISH_BLOCK_V2, block_slot))
    attestations = settled(fractions(node, routes.POOL_ATTESTATIONS_V2, attestation_slot))
    assert blocks and all(fraction >= 0.5 for fraction in blocks), blocks
    assert statistics.median(attestations) < 0.3, attestations
