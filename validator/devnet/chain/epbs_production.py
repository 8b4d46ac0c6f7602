"""Gloas blocks the devnet builds: the chain is its own execution layer and its own builder.

Every Gloas block is self-built: the body commits to a bid with
``builder_index = BUILDER_INDEX_SELF_BUILD``, value 0 and the point at infinity as its
signature, and the payload travels in an ``ExecutionPayloadEnvelope`` that the proposer
signs and publishes after the block. The bid follows the proposer's signed preferences
for the slot when the chain holds them (fee recipient, gas limit); the block carries the
previous slot's payload attestations, aggregated per data from the pool.
"""

from __future__ import annotations

from hashlib import sha256
from typing import Any

from validator.consensus.ssz.gloas import BUILDER_INDEX_SELF_BUILD
from validator.devnet.chain.production import (
    BASE_FEE_PER_GAS,
    EXTRA_DATA,
    INFINITY_SIGNATURE,
    _block_attestations,
    _sync_aggregate,
    devnet_eth1_data,
    execution_block_hash,
    parent_execution_hash,
)
from validator.devnet.chain.simulated_chain import DevnetChain
from validator.devnet.judge.signatures import aggregate_signatures_async


async def build_gloas_block(
    chain: DevnetChain, slot: int, proposer_index: int, randao_reveal: bytes, graffiti: bytes
) -> tuple[Any, Any, bytes]:
    """(BeaconBlock, its ExecutionPayloadEnvelope, the block root) for ``slot``."""
    kinds = chain.gloas_blocks
    parent = chain.tree.head
    gvr = chain.identity.genesis_validators_root
    attestations, _included = await _block_attestations(chain, slot)
    parent_hash = parent_execution_hash(chain, parent)
    block_hash = execution_block_hash(gvr, parent.root, slot)
    fee_recipient, gas_limit = chain.proposal_terms(slot, proposer_index)
    bid = kinds.BeaconBlockBody.fields()["signed_execution_payload_bid"].fields()["message"](
        parent_block_hash=parent_hash,
        parent_block_root=parent.root,
        block_hash=block_hash,
        prev_randao=sha256(randao_reveal).digest(),
        fee_recipient=fee_recipient,
        gas_limit=gas_limit,
        builder_index=BUILDER_INDEX_SELF_BUILD,
        slot=slot,
        value=0,
        execution_payment=0,
        blob_kzg_commitments=[],
        execution_requests_root=kinds.ExecutionPayloadEnvelope.fields()[
            "execution_requests"
        ]().hash_tree_root(),
    )
    body = kinds.BeaconBlockBody(
        randao_reveal=randao_reveal,
        eth1_data=devnet_eth1_data(chain),
        graffiti=graffiti,
        attestations=[_as_gloas_attestation(kinds, attestation) for attestation in attestations],
        sync_aggregate=await _sync_aggregate(chain, slot, parent.root),
        signed_execution_payload_bid=kinds.BeaconBlockBody.fields()["signed_execution_payload_bid"](
            message=bid, signature=INFINITY_SIGNATURE
        ),
        payload_attestations=await _payload_attestations(chain, slot, parent.root),
    )
    body_root = bytes(body.hash_tree_root())
    state_root = sha256(
        b"devnet-state" + parent.root + slot.to_bytes(8, "little") + body_root
    ).digest()
    block = kinds.BeaconBlock(
        slot=slot,
        proposer_index=proposer_index,
        parent_root=parent.root,
        state_root=state_root,
        body=body,
    )
    root = bytes(block.hash_tree_root())
    payload = kinds.ExecutionPayload(
        parent_hash=parent_hash,
        fee_recipient=fee_recipient,
        state_root=sha256(b"devnet-execution-state" + parent.root).digest(),
        receipts_root=sha256(b"").digest(),
        prev_randao=sha256(randao_reveal).digest(),
        block_number=slot,
        gas_limit=gas_limit,
        timestamp=int(chain.slot_start(slot)),
        extra_data=EXTRA_DATA,
        base_fee_per_gas=BASE_FEE_PER_GAS,
        block_hash=block_hash,
        slot_number=slot,
    )
    envelope = kinds.ExecutionPayloadEnvelope(
        payload=payload,
        builder_index=BUILDER_INDEX_SELF_BUILD,
        beacon_block_root=root,
        parent_beacon_block_root=parent.root,
    )
    return block, envelope, root


def _as_gloas_attestation(kinds: Any, attestation: Any) -> Any:
    """An on-chain aggregate in Gloas's (progressive) Attestation container."""
    fields = kinds.Attestation.fields()
    return kinds.Attestation(
        aggregation_bits=fields["aggregation_bits"](*list(attestation.aggregation_bits)),
        data=attestation.data,
        signature=attestation.signature,
        committee_bits=fields["committee_bits"](*list(attestation.committee_bits)),
    )


async def _payload_attestations(chain: DevnetChain, slot: int, parent_root: bytes) -> list[Any]:
    """The previous slot's PTC votes for the parent block, one aggregate per data (at most
    MAX_PAYLOAD_ATTESTATIONS), bits by position in that slot's PTC."""
    kinds = chain.gloas_blocks
    by_root = chain.payload_attestation_pool.votes.get(slot - 1, {})
    ptc = chain.duties.ptc(slot - 1) if chain.is_gloas_slot(slot - 1) else ()
    made = []
    for data, voters in by_root.values():
        if bytes(data.beacon_block_root) != parent_root or not voters:
            continue
        bits = [member in voters for member in ptc]
        # Each voter once, however many seats it holds.
        signature = await aggregate_signatures_async(
            [voters[member] for member in dict.fromkeys(ptc) if member in voters]
        )
        made.append(
            kinds.PayloadAttestation(
                aggregation_bits=kinds.PayloadAttestation.fields()["aggregation_bits"](*bits),
                data=data,
                signature=signature,
            )
        )
        if len(made) >= 4:  # MAX_PAYLOAD_ATTESTATIONS (the same in both presets)
            break
    return made
