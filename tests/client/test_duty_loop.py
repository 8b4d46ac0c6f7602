"""The duty loop against the strict test double: every duty kind, at its time, in its form.

The double and the client both check every exchange against the Beacon API
spec. On top of that each test checks what the loop published: the right
messages for the right validators, signatures that verify against the interop
keys over the spec's signing roots, the consensus-version header, and when in
the slot each kind went out.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import crypto_backend
from slashing_protection import SlashingProtection
from tests.client.conftest import NodeStarter, ServiceRunner
from tests.client.duty_node import DutyNode, Schedule
from validator.beacon import routes
from validator.consensus.signing_roots import (
    aggregate_and_proof_signing_root,
    attestation_signing_root,
    block_signing_root,
    contribution_and_proof_signing_root,
    sync_committee_message_signing_root,
    sync_committee_selection_proof_signing_root,
)
from validator.consensus.ssz import AttestationData, ContributionAndProof, from_json
from validator.consensus.ssz.blocks import block_types
from validator.consensus.ssz.electra import AggregateAndProof
from validator.duties.selection import is_sync_committee_aggregator

VALIDATORS = 8
FEE_RECIPIENT = "0x" + "fe" * 20


def sync_schedule() -> Schedule:
    # Validators 0-3 sit in subcommittee 0, 4-7 in subcommittee 1.
    return Schedule(sync_positions={index: [index * 32] for index in range(VALIDATORS)})


def pubkey_of(node: DutyNode, index: int) -> bytes:
    return node.keys[index][1]


def hexbytes(value: str) -> bytes:
    return bytes.fromhex(value[2:])


def fraction_of_slot(node: DutyNode, slot: int, at: float) -> float:
    return (at - node.slot_start(slot)) / node.chain.seconds_per_slot


async def test_every_duty_is_performed_in_time_and_in_the_standard_form(
    duty_node: NodeStarter, run_service: ServiceRunner, validators_dir: Callable[..., Path]
) -> None:
    node, url = await duty_node(validator_count=VALIDATORS, schedule=sync_schedule())
    directory = validators_dir(VALIDATORS)
    last_slot = 7
    service = await run_service(
        url,
        directory,
        init_slashing_protection=True,
        last_slot=last_slot,
        suggested_fee_recipient=hexbytes(FEE_RECIPIENT),
        graffiti="duty loop test",
    )
    chain = node.chain
    assert service.chain is not None
    first_slot = min(
        chain.current_slot(arrival.at) for arrival in node.published(routes.POOL_ATTESTATIONS_V2)
    )
    slots = range(first_slot + 1, last_slot + 1)  # the first slot may have started mid-way
    assert len(slots) >= 5

    # Blocks: one per slot (every slot's proposer is one of ours), signed, in time.
    blocks = {
        int(a.body["signed_block"]["message"]["slot"]): a
        for a in node.published(routes.PUBLISH_BLOCK_V2)
    }
    for slot in slots:
        arrival = blocks[slot]
        assert arrival.headers["Eth-Consensus-Version"] == node.version(slot)
        types = block_types(node.version(slot))
        signed = from_json(types.signed_block_contents, arrival.body)
        block = signed.signed_block.message
        assert int(block.proposer_index) == node.proposer(slot)
        assert bytes(block.body.graffiti).rstrip(b"\0") == b"duty loop test"
        assert crypto_backend.verify(
            pubkey_of(node, node.proposer(slot)),
            block_signing_root(chain, block),
            bytes(signed.signed_block.signature),
        )

    # Attestations: every duty of every slot, Electra SingleAttestation form, one POST per slot.
    attestation_posts = node.published(routes.POOL_ATTESTATIONS_V2)
    by_slot = {int(a.body[0]["data"]["slot"]): a for a in attestation_posts}
    assert len(by_slot) == len(attestation_posts), "one POST per slot"
    head_fractions = []
    for slot in slots:
        arrival = by_slot[slot]
        assert arrival.headers["Eth-Consensus-Version"] == node.version(slot)
        expected = {
            i for i in range(VALIDATORS) if node.attester_slot(chain.epoch_at_slot(slot), i) == slot
        }
        assert {int(item["attester_index"]) for item in arrival.body} == expected
        for item in arrival.body:
            index = int(item["attester_index"])
            assert int(item["committee_index"]) == node.committee_index(index)
            assert item["data"] == node.attestation_data(slot)
            data = from_json(AttestationData, item["data"])
            assert crypto_backend.verify(
                pubkey_of(node, index),
                attestation_signing_root(chain, data),
                hexbytes(item["signature"]),
            )
        head_fractions.append(fraction_of_slot(node, slot, arrival.at))
    # Never before the head event (a tenth into the slot). Strict checks on both sides make
    # every exchange slow, so how soon after is left to test_timing.py.
    assert all(0.1 <= fraction for fraction in head_fractions), head_fractions

    # Aggregates: committees of 4 make every member an aggregator; two thirds into the slot.
    aggregate_posts = node.published(routes.AGGREGATE_AND_PROOFS_V2)
    aggregated = {}
    for arrival in aggregate_posts:
        for item in arrival.body:
            message = from_json(AggregateAndProof, item["message"])
            slot = int(message.aggregate.data.slot)
            aggregated.setdefault(slot, set()).add(int(message.aggregator_index))
            assert crypto_backend.verify(
                pubkey_of(node, int(message.aggregator_index)),
                aggregate_and_proof_signing_root(chain, message),
                hexbytes(item["signature"]),
            )
            assert fraction_of_slot(node, slot, arrival.at) >= 2 / 3
            assert arrival.headers["Eth-Consensus-Version"] == node.version(slot)
    for slot in slots:
        assert aggregated[slot] == {int(a["attester_index"]) for a in by_slot[slot].body}

    # Sync committee messages: every member, each slot, over the head root.
    messages = {}
    for arrival in node.published(routes.POOL_SYNC_COMMITTEES):
        slot = int(arrival.body[0]["slot"])
        messages[slot] = arrival
        assert fraction_of_slot(node, slot, arrival.at) >= 0.1
        for item in arrival.body:
            assert item["beacon_block_root"] == node.head_root(slot)
            assert crypto_backend.verify(
                pubkey_of(node, int(item["validator_index"])),
                sync_committee_message_signing_root(
                    chain, slot, hexbytes(item["beacon_block_root"])
                ),
                hexbytes(item["signature"]),
            )
    for slot in slots:
        assert {int(item["validator_index"]) for item in messages[slot].body} == set(
            range(VALIDATORS)
        )

    # Contributions: exactly the members whose selection proof selects them.
    contributed: set[tuple[int, int, int]] = set()
    for arrival in node.published(routes.CONTRIBUTION_AND_PROOFS):
        for item in arrival.body:
            message = from_json(ContributionAndProof, item["message"])
            slot = int(message.contribution.slot)
            assert fraction_of_slot(node, slot, arrival.at) >= 2 / 3
            assert crypto_backend.verify(
                pubkey_of(node, int(message.aggregator_index)),
                contribution_and_proof_signing_root(chain, message),
                hexbytes(item["signature"]),
            )
            contributed.add(
                (slot, int(message.aggregator_index), int(message.contribution.subcommittee_index))
            )
    expected_contributions = set()
    for slot in slots:
        for index in range(VALIDATORS):
            subcommittee = index // 4
            secret = node.keys[index][0]
            proof = crypto_backend.sign(
                secret, sync_committee_selection_proof_signing_root(chain, slot, subcommittee)
            )
            if is_sync_committee_aggregator(chain, proof):
                expected_contributions.add((slot, index, subcommittee))
    assert {c for c in contributed if c[0] in slots} == expected_contributions

    # Per epoch: committee subscriptions (aggregators marked), sync subscriptions, fee recipients.
    subscriptions = [
        item for a in node.published(routes.BEACON_COMMITTEE_SUBSCRIPTIONS) for item in a.body
    ]
    assert {(int(s["validator_index"]), int(s["slot"])) for s in subscriptions} >= {
        (i, node.attester_slot(1, i)) for i in range(VALIDATORS)
    }
    assert all(s["is_aggregator"] is True for s in subscriptions)
    assert node.published(routes.SYNC_COMMITTEE_SUBSCRIPTIONS)
    preparations = node.published(routes.PREPARE_BEACON_PROPOSER)
    assert preparations
    assert {(int(p["validator_index"]), p["fee_recipient"]) for p in preparations[-1].body} == {
        (index, FEE_RECIPIENT) for index in range(VALIDATORS)
    }

    # The record holds what was signed, and the lock was released on stop.
    with SlashingProtection.open(directory, chain.genesis_validators_root) as record:
        for index in range(VALIDATORS):
            mark = record.watermark(pubkey_of(node, index))
            assert mark is not None
            assert mark.target == chain.epoch_at_slot(last_slot)
        proposer_mark = record.watermark(pubkey_of(node, node.proposer(last_slot)))
        assert proposer_mark is not None and proposer_mark.slot == last_slot


async def test_a_blinded_block_is_signed_and_published_blinded(
    duty_node: NodeStarter, run_service: ServiceRunner, validators_dir: Callable[..., Path]
) -> None:
    node, url = await duty_node(validator_count=4, head_delay=None)
    node.blinded_blocks = True
    await run_service(url, validators_dir(4), init_slashing_protection=True, last_slot=3)
    assert node.published(routes.PUBLISH_BLOCK_V2) == []
    published = node.published(routes.PUBLISH_BLINDED_BLOCK_V2)
    assert published
    for arrival in published:
        slot = int(arrival.body["message"]["slot"])
        assert arrival.headers["Eth-Consensus-Version"] == node.version(slot)
        signed = from_json(block_types(node.version(slot)).signed_blinded_block, arrival.body)
        assert crypto_backend.verify(
            pubkey_of(node, node.proposer(slot)),
            block_signing_root(node.chain, signed.message),
            bytes(signed.signature),
        )
