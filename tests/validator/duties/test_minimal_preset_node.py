"""The client against a minimal-preset beacon-node double: it starts, takes the node's
preset, and signs blocks, aggregates and contributions over minimal-preset roots.

The roots are checked with nothing of the client's: each published object (as JSON) is
merkleized by hand with the minimal preset's container shapes (tests/support/roots_by_hand.py),
its signing root is computed by hand, and the signature must verify against it with the
interop key. The same objects are not mainnet ones (mainnet containers refuse them).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import crypto_backend
from tests.support.beacon_fixtures import NodeStarter
from tests.support.duty_node import GENESIS_VALIDATORS_ROOT, DutyNode, Schedule
from tests.support.roots_by_hand import (
    DOMAIN_AGGREGATE_AND_PROOF,
    DOMAIN_BEACON_PROPOSER,
    DOMAIN_CONTRIBUTION_AND_PROOF,
    MINIMAL_BY_HAND,
    root_by_hand,
    shapes_by_hand,
    signing_root_by_hand,
)
from tests.validator.conftest import ServiceRunner
from validator.beacon import routes
from validator.consensus.chain_preset import simulated_fork_version
from validator.consensus.forks import ForkName
from validator.consensus.ssz import SszInputError, electra, from_json
from validator.consensus.ssz.preset import MINIMAL

VALIDATORS = 8
MINIMAL_SHAPES = shapes_by_hand(MINIMAL_BY_HAND)


def verifies_by_hand(
    node: DutyNode, index: int, shape: Any, message: Any, domain_type: bytes, slot: int, sig: str
) -> bool:
    fork = ForkName.parse(node.version(slot))
    signing_root = signing_root_by_hand(
        root_by_hand(shape, message),
        domain_type,
        simulated_fork_version(fork),
        GENESIS_VALIDATORS_ROOT,
    )
    return crypto_backend.verify(node.keys[index][1], signing_root, bytes.fromhex(sig[2:]))


async def test_the_client_signs_minimal_preset_roots_on_a_minimal_node(
    start_node: NodeStarter, run_service: ServiceRunner, validators_dir: Callable[..., Path]
) -> None:
    # Sync subcommittees of 8 seats (32 / 4): validators 0-1 in subcommittee 0, 2-3 in 1, ...
    schedule = Schedule(sync_positions={index: [index * 4] for index in range(VALIDATORS)})
    node, url = await start_node(
        DutyNode, validator_count=VALIDATORS, schedule=schedule, preset=MINIMAL
    )
    assert node.config.spec_response()["data"]["PRESET_BASE"] == "minimal"
    service = await run_service(
        url, validators_dir(VALIDATORS), init_slashing_protection=True, last_slot=6
    )
    assert service.chain is not None and service.chain.preset is MINIMAL

    blocks = node.published(routes.PUBLISH_BLOCK_V2)
    assert len(blocks) >= 3
    for arrival in blocks:
        signed = arrival.body["signed_block"]
        block, slot = signed["message"], int(signed["message"]["slot"])
        assert len(block["body"]["sync_aggregate"]["sync_committee_bits"]) == 2 + 2 * 4
        proposer = int(block["proposer_index"])
        args = (block, DOMAIN_BEACON_PROPOSER, slot, signed["signature"])
        assert verifies_by_hand(node, proposer, MINIMAL_SHAPES["electra.BeaconBlock"], *args)
        with pytest.raises(SszInputError, match="sync_committee_bits"):
            from_json(electra.BeaconBlock, block)  # not a mainnet block

    aggregates = [item for a in node.published(routes.AGGREGATE_AND_PROOFS_V2) for item in a.body]
    assert aggregates
    for item in aggregates:
        message = item["message"]
        assert message["aggregate"]["committee_bits"] in ("0x01", "0x02")  # 4 committee bits
        args = (
            message,
            DOMAIN_AGGREGATE_AND_PROOF,
            int(message["aggregate"]["data"]["slot"]),
            item["signature"],
        )
        aggregator = int(message["aggregator_index"])
        shape = MINIMAL_SHAPES["electra.AggregateAndProof"]
        assert verifies_by_hand(node, aggregator, shape, *args)

    contributions = [
        item for a in node.published(routes.CONTRIBUTION_AND_PROOFS) for item in a.body
    ]
    assert contributions
    for item in contributions:
        message = item["message"]
        assert message["contribution"]["aggregation_bits"] == "0xff"  # 8 seats
        args = (
            message,
            DOMAIN_CONTRIBUTION_AND_PROOF,
            int(message["contribution"]["slot"]),
            item["signature"],
        )
        aggregator = int(message["aggregator_index"])
        assert verifies_by_hand(node, aggregator, MINIMAL_SHAPES["ContributionAndProof"], *args)

    # Every sync committee member sent its message each slot (subcommittees of the preset).
    messages = [item for a in node.published(routes.POOL_SYNC_COMMITTEES) for item in a.body]
    assert {int(item["validator_index"]) for item in messages} == set(range(VALIDATORS))
