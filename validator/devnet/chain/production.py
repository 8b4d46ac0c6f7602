"""What the devnet builds for the client: blocks, aggregates, sync committee contributions.

Blocks are Fulu blocks of the chain's preset on the current head with the
attestations and the sync aggregate the pools hold, the proposer's fee
recipient and gas limit, and an
execution payload with no transactions (there is no execution layer; its
hashes are derived from the beacon chain). Aggregates and contributions are
built from the verified single messages in the pools.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from hashlib import sha256
from typing import Any

from validator.consensus.ssz.phase0 import Eth1Data
from validator.devnet.chain.blocktree import BlockRecord
from validator.devnet.chain.relay import Registration
from validator.devnet.chain.simulated_chain import DevnetChain
from validator.devnet.judge.signatures import aggregate_signatures_async

INFINITY_SIGNATURE = b"\xc0" + bytes(95)
"""The compressed point at infinity: the signature of an empty aggregate."""
BASE_FEE_PER_GAS = 7
EXTRA_DATA = b"unslashable devnet"


def _attestation(
    chain: DevnetChain, bits: list[bool], data: Any, signature: bytes, committees: set[int]
) -> Any:
    """An (EIP-7549) Attestation of the chain's preset for ``committees``."""
    kind = chain.containers_of_slot(int(data.slot)).Attestation
    fields = kind.fields()
    committee_count = chain.preset.MAX_COMMITTEES_PER_SLOT
    return kind(
        aggregation_bits=fields["aggregation_bits"](*bits),
        data=data,
        signature=signature,
        committee_bits=fields["committee_bits"](
            *[index in committees for index in range(committee_count)]
        ),
    )


def execution_block_hash(genesis_validators_root: bytes, parent_root: bytes, slot: int) -> bytes:
    """The made-up execution block hash of the beacon block at ``slot`` on ``parent_root``."""
    return sha256(
        b"devnet-execution" + genesis_validators_root + parent_root + slot.to_bytes(8, "little")
    ).digest()


def parent_execution_hash(chain: DevnetChain, parent: BlockRecord) -> bytes:
    """The execution block hash a block on ``parent`` builds on (the made-up genesis hash
    on the genesis block)."""
    gvr = chain.identity.genesis_validators_root
    if parent.origin == "genesis":
        return sha256(b"devnet-execution-genesis" + gvr).digest()
    return execution_block_hash(gvr, parent.parent_root, parent.slot)


def devnet_eth1_data(chain: DevnetChain) -> Eth1Data:
    """Every block's Eth1Data: the devnet has no deposit contract, only its genesis keys."""
    gvr = chain.identity.genesis_validators_root
    return Eth1Data(
        deposit_root=sha256(b"devnet-deposits" + gvr).digest(),
        deposit_count=chain.identity.validator_count,
        block_hash=sha256(b"devnet-eth1" + gvr).digest(),
    )


# --- aggregates and contributions ---------------------------------------------


async def build_aggregate(
    chain: DevnetChain, slot: int, committee_index: int, data_root: bytes
) -> Any | None:
    """The aggregate (an Electra Attestation) of the pooled single attestations (None when
    there are none)."""
    pooled = chain.attestation_pool.get(slot, committee_index, data_root)
    if pooled is None or not pooled.signatures:
        return None
    bits = [position in pooled.signatures for position in range(pooled.committee_length)]
    signature = await _cached_aggregate(
        chain, ("attestations", slot, committee_index, data_root), list(pooled.signatures.values())
    )
    return _attestation(chain, bits, pooled.data.view(), signature, {committee_index})


async def _cached_aggregate(
    chain: DevnetChain, key: tuple[object, ...], signatures: list[bytes]
) -> bytes:
    """The aggregate of ``signatures``, computed once while the pool under ``key`` is unchanged.

    Every aggregator of a committee (or sync subcommittee) asks for the same
    aggregate, often at the same moment; pooled signatures are only ever added,
    so their count says whether a cached (or in-flight) aggregate is complete.
    """
    cached = chain.aggregate_cache.get(key)
    if cached is not None and cached[0] == len(signatures):
        return await asyncio.shield(cached[1])
    future = asyncio.ensure_future(aggregate_signatures_async(signatures))
    chain.aggregate_cache[key] = (len(signatures), future)
    return await asyncio.shield(future)


def sync_subcommittee_seats(
    chain: DevnetChain, slot: int, subcommittee_index: int
) -> tuple[int, ...]:
    """The members of one sync subcommittee for messages at ``slot``, one entry per seat."""
    committee = chain.duties.sync_committee_for_message_slot(slot)
    size = chain.duties.sync_subcommittee_size
    start = subcommittee_index * size
    return committee[start : start + size]


async def _subcommittee_aggregate(
    chain: DevnetChain, slot: int, subcommittee_index: int, block_root: bytes
) -> tuple[list[bool], bytes] | None:
    """Seat bits and aggregate signature of one subcommittee's pooled messages."""
    seats = sync_subcommittee_seats(chain, slot, subcommittee_index)
    signatures = chain.sync_pool.signatures_by_seat(slot, block_root, seats)
    present = [signature for signature in signatures if signature is not None]
    if not present:
        return None
    key = ("sync", slot, subcommittee_index, block_root)
    aggregate = await _cached_aggregate(chain, key, present)
    return [signature is not None for signature in signatures], aggregate


async def build_contribution(
    chain: DevnetChain, slot: int, subcommittee_index: int, block_root: bytes
) -> Any | None:
    """The SyncCommitteeContribution of one subcommittee from the pooled messages (None when
    there are none)."""
    found = await _subcommittee_aggregate(chain, slot, subcommittee_index, block_root)
    if found is None:
        return None
    bits, signature = found
    kind = chain.sync_containers.SyncCommitteeContribution
    return kind(
        slot=slot,
        beacon_block_root=block_root,
        subcommittee_index=subcommittee_index,
        aggregation_bits=kind.fields()["aggregation_bits"](*bits),
        signature=signature,
    )


# --- blocks ------------------------------------------------------------------


@dataclass(frozen=True)
class BlockPlan:
    """Everything a block needs from the chain, gathered on the event loop."""

    slot: int
    proposer_index: int
    parent_root: bytes
    randao_reveal: bytes
    graffiti: bytes
    eth1_data: Eth1Data
    attestations: tuple[Any, ...]
    """Electra Attestations of the chain's preset."""
    included: tuple[tuple[int, bytes], ...]
    """(slot, AttestationData root) of every attestation included."""
    sync_aggregate: Any
    payload: Any
    blocks: Any
    """The chain's Fulu containers (``DevnetChain.blocks``)."""

    @property
    def attestation_count(self) -> int:
        return attesting_count(self.attestations)


def attesting_count(attestations: Iterable[Any]) -> int:
    """How many attesters' votes ``attestations`` carry (aggregation bits set)."""
    return sum(
        sum(1 for bit in attestation.aggregation_bits if bit) for attestation in attestations
    )


async def plan_block(
    chain: DevnetChain,
    slot: int,
    proposer_index: int,
    randao_reveal: bytes,
    graffiti: bytes,
    builder: Registration | None = None,
) -> BlockPlan:
    """``builder``: the proposer's registration when the builder's bid won (its payload pays
    the registered fee recipient, at the registered gas limit)."""
    parent = chain.tree.head
    gvr = chain.identity.genesis_validators_root
    attestations, included = await _block_attestations(chain, slot)
    payload = chain.blocks.BeaconBlockBody.fields()["execution_payload"](
        parent_hash=parent_execution_hash(chain, parent),
        fee_recipient=(
            chain.fee_recipient(proposer_index) if builder is None else builder.fee_recipient
        ),
        state_root=sha256(b"devnet-execution-state" + parent.root).digest(),
        receipts_root=sha256(b"").digest(),
        prev_randao=sha256(randao_reveal).digest(),
        block_number=slot,
        gas_limit=chain.gas_limit(proposer_index) if builder is None else builder.gas_limit,
        gas_used=0,
        timestamp=int(chain.slot_start(slot)),
        extra_data=EXTRA_DATA,
        base_fee_per_gas=BASE_FEE_PER_GAS,
        block_hash=execution_block_hash(gvr, parent.root, slot),
        transactions=[],
        withdrawals=[],
        blob_gas_used=0,
        excess_blob_gas=0,
    )
    return BlockPlan(
        slot=slot,
        proposer_index=proposer_index,
        parent_root=parent.root,
        randao_reveal=randao_reveal,
        graffiti=graffiti,
        eth1_data=devnet_eth1_data(chain),
        attestations=tuple(attestations),
        included=tuple(included),
        sync_aggregate=await _sync_aggregate(chain, slot, parent.root),
        payload=payload,
        blocks=chain.blocks,
    )


def assemble_block(plan: BlockPlan) -> tuple[Any, bytes]:
    """The Fulu block and its root (pure CPU work: run it in a worker thread)."""
    body = plan.blocks.BeaconBlockBody(
        randao_reveal=plan.randao_reveal,
        eth1_data=plan.eth1_data,
        graffiti=plan.graffiti,
        proposer_slashings=[],
        attester_slashings=[],
        attestations=list(plan.attestations),
        deposits=[],
        voluntary_exits=[],
        sync_aggregate=plan.sync_aggregate,
        execution_payload=plan.payload,
        bls_to_execution_changes=[],
        blob_kzg_commitments=[],
        execution_requests=plan.blocks.ExecutionRequests(),
    )
    body_root = bytes(body.hash_tree_root())
    state_root = sha256(
        b"devnet-state" + plan.parent_root + plan.slot.to_bytes(8, "little") + body_root
    ).digest()
    block = plan.blocks.BeaconBlock(
        slot=plan.slot,
        proposer_index=plan.proposer_index,
        parent_root=plan.parent_root,
        state_root=state_root,
        body=body,
    )
    return block, bytes(block.hash_tree_root())


def block_contents(chain: DevnetChain, block: Any) -> Any:
    """What produceBlockV3 returns for a full Fulu block (this devnet has no blobs)."""
    return chain.blocks.BlockContents(block=block, kzg_proofs=[], blobs=[])


async def _block_attestations(
    chain: DevnetChain, slot: int
) -> tuple[list[Any], list[tuple[int, bytes]]]:
    """On-chain aggregates (EIP-7549: committees with the same data together) from the pool."""
    attestations: list[Any] = []
    included: list[tuple[int, bytes]] = []
    for attested_slot in range(slot - 1, max(-1, slot - chain.slots_per_epoch - 1), -1):
        for data_root, by_committee in chain.attestation_pool.for_block(attested_slot):
            if len(attestations) >= chain.preset.MAX_ATTESTATIONS_ELECTRA:
                return attestations, included
            bits: list[bool] = []
            committee_aggregates: list[bytes] = []
            data = None
            for committee_index in sorted(by_committee):
                pooled = by_committee[committee_index]
                data = pooled.data
                bits.extend(p in pooled.signatures for p in range(pooled.committee_length))
                # Each committee's aggregate is usually cached already (its aggregators asked).
                key = ("attestations", attested_slot, committee_index, data_root)
                signatures = list(pooled.signatures.values())
                committee_aggregates.append(await _cached_aggregate(chain, key, signatures))
            if data is None or not committee_aggregates:
                continue
            signature = await aggregate_signatures_async(committee_aggregates)
            attestations.append(
                _attestation(chain, bits, data.view(), signature, set(by_committee))
            )
            included.append((attested_slot, data_root))
    return attestations, included


async def _sync_aggregate(chain: DevnetChain, slot: int, parent_root: bytes) -> Any:
    """The previous slot's sync committee messages for the parent block: its subcommittees' sum."""
    kind = chain.sync_containers.SyncAggregate
    if slot == 0:
        return kind(sync_committee_signature=INFINITY_SIGNATURE)
    bits: list[bool] = []
    parts: list[bytes] = []
    for subcommittee in range(chain.preset.SYNC_COMMITTEE_SUBNET_COUNT):
        found = await _subcommittee_aggregate(chain, slot - 1, subcommittee, parent_root)
        if found is None:
            bits += [False] * chain.duties.sync_subcommittee_size
        else:
            bits += found[0]
            parts.append(found[1])
    return kind(
        sync_committee_bits=kind.fields()["sync_committee_bits"](*bits),
        sync_committee_signature=(
            await aggregate_signatures_async(parts) if parts else INFINITY_SIGNATURE
        ),
    )
