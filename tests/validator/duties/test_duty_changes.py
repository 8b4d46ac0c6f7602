"""Duties that change under the loop: re-orgs, event-stream reconnects, late deposits."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.support.beacon_fixtures import NodeStarter
from tests.support.duty_node import DutyNode, root_for
from tests.validator.conftest import ServiceRunner
from validator.beacon import routes

VALIDATORS = 8


def attested(node: DutyNode) -> dict[int, set[int]]:
    """slot -> validators whose attestation for it was published."""
    found: dict[int, set[int]] = {}
    for arrival in node.published(routes.POOL_ATTESTATIONS_V2):
        for item in arrival.body:
            found.setdefault(int(item["data"]["slot"]), set()).add(int(item["attester_index"]))
    return found


def expected_attesters(node: DutyNode, slot: int) -> set[int]:
    epoch = node.chain.epoch_at_slot(slot)
    return {i for i in range(VALIDATORS) if node.attester_slot(epoch, i) == slot}


async def test_a_changed_dependent_root_refetches_duties_and_the_new_ones_are_done(
    start_node: NodeStarter, run_service: ServiceRunner, validators_dir: Callable[..., Path]
) -> None:
    node, url = await start_node(DutyNode, validator_count=VALIDATORS, genesis_slots_ago=0.2)
    chain = node.chain

    def reorganise(slot: int) -> None:
        # One slot into epoch 0, the chain re-organises across the block epoch 1's attester
        # duties depend on: they move one slot later. The next head event says so.
        if slot == 1:
            node.dependent_roots[-1] = root_for("re-organised", -1)
            node.attester_offsets[1] = 1

    await run_service(
        url,
        validators_dir(VALIDATORS),
        init_slashing_protection=True,
        last_slot=chain.start_slot_of_epoch(2) - 1,
        on_slot=reorganise,
    )
    # Epoch 1's attester duties were fetched ahead, then again after the head event.
    assert node.attester_duty_requests.count(1) >= 2
    found = attested(node)
    for slot in range(chain.start_slot_of_epoch(1), chain.start_slot_of_epoch(2)):
        assert found.get(slot, set()) == expected_attesters(node, slot), slot
    # The duties moved: validator 0 attests at the epoch's second slot, not its first.
    assert 0 in found[chain.start_slot_of_epoch(1) + 1]


async def test_a_reconnected_event_stream_refetches_duties(
    start_node: NodeStarter, run_service: ServiceRunner, validators_dir: Callable[..., Path]
) -> None:
    node, url = await start_node(DutyNode, validator_count=VALIDATORS)
    dropped_at: list[int] = []

    def drop(slot: int) -> None:
        if slot == 2:
            dropped_at.append(len(node.attester_duty_requests))
            node.drop_event_streams()

    await run_service(
        url, validators_dir(VALIDATORS), init_slashing_protection=True, last_slot=4, on_slot=drop
    )
    assert node.event_connections >= 2
    # Fetched again after the reconnect, though no dependent root changed.
    assert len(node.attester_duty_requests) > dropped_at[0]
    assert 0 in node.attester_duty_requests[dropped_at[0] :]


async def test_keys_the_chain_does_not_know_yet_are_looked_up_again_each_epoch(
    start_node: NodeStarter, run_service: ServiceRunner, validators_dir: Callable[..., Path]
) -> None:
    node, url = await start_node(DutyNode, validator_count=VALIDATORS, known_validators=6)
    chain = node.chain

    def deposit(slot: int) -> None:
        if slot == 1:
            node.known_validators = VALIDATORS  # validators 6 and 7 get deposited

    await run_service(
        url,
        validators_dir(VALIDATORS),
        init_slashing_protection=True,
        last_slot=chain.start_slot_of_epoch(2) - 1,
        on_slot=deposit,
    )
    # The key gate's poll for slashed statuses (filtered by status) is not a lookup.
    lookups = [
        request
        for request in node.requests_to(routes.STATE_VALIDATORS)
        if "statuses" not in request.json()
    ]
    assert len(lookups) >= 2
    later_ids = [set(request.json()["ids"]) for request in lookups[1:]]
    # Only the two unknown keys are asked for again.
    assert all(len(ids) == 2 for ids in later_ids), later_ids
    found = attested(node)
    epoch1 = range(chain.start_slot_of_epoch(1), chain.start_slot_of_epoch(2))
    assert {6, 7} <= set().union(*(found.get(slot, set()) for slot in epoch1))
    assert not {6, 7} & set().union(
        *(found.get(slot, set()) for slot in range(chain.start_slot_of_epoch(1)))
    )
