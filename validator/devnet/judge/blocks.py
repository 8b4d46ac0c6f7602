"""Judging blocks: the RANDAO reveal behind a production request, and a published block.

A published block is judged as the other submissions are (see
:mod:`validator.devnet.judge.duty_messages`): its proposer signature and the signatures
embedded in it in one batch, then the slasher, then the chain's rules.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from remerkleable.core import View

from validator.consensus.encoding import to_hex
from validator.devnet.beacon_api.errors import ApiError
from validator.devnet.chain.blocktree import BlockRecord
from validator.devnet.chain.production import INFINITY_SIGNATURE, attesting_count
from validator.devnet.chain.simulated_chain import DevnetChain
from validator.devnet.judge.message_readers import (
    AttestationDataFields,
)
from validator.devnet.judge.signatures import SignatureCheck, failed_checks_async

log = logging.getLogger("validator.devnet")


async def verify_randao_for_production(
    chain: DevnetChain, slot: int, randao_reveal: bytes, skip_verification: bool
) -> int:
    """The proposer of ``slot`` after checking its RANDAO reveal; ApiError(400) otherwise."""
    proposer = chain.expected_proposer(slot)
    if proposer is None:
        raise ApiError(400, f"no block can be proposed at slot {slot}")
    if skip_verification:
        if randao_reveal != INFINITY_SIGNATURE:
            raise ApiError(
                400, "with skip_randao_verification the randao_reveal must be the point at infinity"
            )
        return proposer
    message = chain.roots.judge.randao_reveal(chain.epoch_of(slot))
    check = SignatureCheck(
        0, "randao reveal", (chain.registry.pubkey(proposer),), message, randao_reveal
    )
    if not await failed_checks_async([check]):
        return proposer
    for former in sorted(chain.served_proposers.get(slot, set()) - {proposer}):
        stale = SignatureCheck(
            0, "randao reveal", (chain.registry.pubkey(former),), message, randao_reveal
        )
        if not await failed_checks_async([stale]):
            chain.ledger.count("stale_proposer_requests")
            raise ApiError(
                400,
                f"validator {former} is no longer the proposer of slot {slot} (the proposer "
                f"duties changed with their dependent root; it is now validator {proposer})",
            )
    chain.ledger.count("invalid_signatures")
    raise ApiError(
        400, f"invalid randao_reveal for validator {proposer}, the proposer of slot {slot}"
    )


def embedded_signature_checks(chain: DevnetChain, block: View) -> list[SignatureCheck] | str:
    """Signature sets of the attestations and sync aggregate of a block this chain did not build."""
    checks: list[SignatureCheck] = []
    body = block.body
    for position, attestation in enumerate(body.attestations):
        data = AttestationDataFields.of(attestation.data)
        committees = chain.duties.committees_for_vote(data.slot, data.beacon_block_root)
        members: list[int] = []
        for committee_index, bit in enumerate(attestation.committee_bits):
            if bit:
                committee = committees.committee(data.slot, committee_index)
                if committee is None:
                    return (
                        f"attestation {position}: no committee {committee_index} "
                        f"at slot {data.slot}"
                    )
                members.extend(committee)
        bits = list(attestation.aggregation_bits)
        if len(bits) != len(members):
            return f"attestation {position}: aggregation_bits do not match its committees"
        attesters = tuple(member for member, bit in zip(members, bits, strict=True) if bit)
        if not attesters:
            return f"attestation {position}: no aggregation bit set"
        checks.append(
            SignatureCheck(
                position,
                f"attestation {position} in the block",
                tuple(chain.registry.pubkey(index) for index in attesters),
                chain.roots.attestation_signing_root(data),
                bytes(attestation.signature),
            )
        )
    slot = int(block.slot)
    sync = body.sync_aggregate
    seats = chain.duties.sync_committee_for_message_slot(slot - 1)
    participants = tuple(
        member for member, bit in zip(seats, sync.sync_committee_bits, strict=True) if bit
    )
    if participants:
        checks.append(
            SignatureCheck(
                -1,
                "sync aggregate in the block",
                tuple(chain.registry.pubkey(index) for index in participants),
                chain.roots.sync_message_signing_root(slot - 1, bytes(block.parent_root)),
                bytes(sync.sync_committee_signature),
            )
        )
    elif bytes(sync.sync_committee_signature) != INFINITY_SIGNATURE:
        return "an empty sync aggregate must carry the point at infinity"
    return checks


def _signed_header(block: View, signature: bytes) -> dict[str, Any]:
    """The block's SignedBeaconBlockHeader in JSON (a blinded body has the same root)."""
    return {
        "message": {
            "slot": str(int(block.slot)),
            "proposer_index": str(int(block.proposer_index)),
            "parent_root": to_hex(bytes(block.parent_root)),
            "state_root": to_hex(bytes(block.state_root)),
            "body_root": to_hex(bytes(block.body.hash_tree_root())),
        },
        "signature": to_hex(signature),
    }


async def publish_block(
    chain: DevnetChain, block: View, signature: bytes, blinded: bool, now: float
) -> int:
    """POST /eth/v2/beacon/blocks and blinded_blocks: 200 (head), 202 (kept as an orphan)."""
    root = await asyncio.to_thread(lambda: bytes(block.hash_tree_root()))
    slot = int(block.slot)
    proposer = int(block.proposer_index)
    produced = chain.produced.get(root)
    if blinded and produced is None:
        chain.ledger.count("rejected_messages")
        raise ApiError(400, "unknown blinded block: this node did not build its execution payload")
    if proposer >= len(chain.registry):
        chain.ledger.count("rejected_messages")
        raise ApiError(400, f"unknown proposer {proposer}")
    proposer_key = (chain.registry.pubkey(proposer),)
    checks = [
        SignatureCheck(
            0,
            "block signature",
            proposer_key,
            chain.roots.judge.block(root, slot),
            signature,
        ),
        SignatureCheck(
            0,
            "randao reveal",
            proposer_key,
            chain.roots.judge.randao_reveal(chain.epoch_of(slot)),
            bytes(block.body.randao_reveal),
        ),
    ]
    embedded: list[SignatureCheck] = []
    if produced is None:
        found = embedded_signature_checks(chain, block)
        if isinstance(found, str):
            chain.ledger.count("rejected_messages")
            raise ApiError(400, f"invalid block: {found}")
        embedded = found
    failed = await failed_checks_async(checks + embedded)
    if failed:
        chain.ledger.count("invalid_signatures")
        raise ApiError(400, "invalid block: bad " + ", ".join(check.what for check in failed))
    findings = chain.judge_block(
        proposer, slot, root, await asyncio.to_thread(_signed_header, block, signature)
    )
    if findings:
        chain.ledger.count("rejected_messages")
        raise ApiError(400, f"slashable block: {findings[0].description}")
    if produced is None:
        for attestation in block.body.attestations:
            _judge_embedded_attestation(chain, attestation)
    if chain.tree.get(root) is not None:
        chain.ledger.count("duplicate_messages")
        chain.ledger.count("duplicate_blocks")
        return 200
    problem = None
    if slot > chain.latest_allowed_slot(now):
        problem = (
            f"block slot {slot} has not started (the chain is at slot {chain.current_slot(now)})"
        )
    elif slot < chain.current_slot(now) - chain.slots_per_epoch:
        problem = f"block slot {slot} is too old"
    elif proposer != chain.expected_proposer(slot) and (
        produced is None or produced.proposer_index != proposer
    ):
        problem = f"validator {proposer} is not the proposer of slot {slot}"
    if problem:
        chain.ledger.count("rejected_messages")
        raise ApiError(400, f"invalid block: {problem}")
    record = BlockRecord(
        slot=slot,
        root=root,
        parent_root=bytes(block.parent_root),
        state_root=bytes(block.state_root),
        proposer_index=proposer,
        origin="client",
    )
    became_head = chain.import_block(record)
    chain.client_blocks.setdefault(slot, set()).add(proposer)
    chain.ledger.block_accepted(slot)
    chain.ledger.count("blocks_proposed")
    if root in chain.envelopes_due:
        chain.block_arrivals[root] = now
        chain.ledger.count("envelopes_expected")  # a self-built Gloas block: its payload owed
        if slot >= chain.ledger.count_from_slot:
            chain.envelopes_owed[slot] = root
    # Attesters' votes the client's block carries on chain (aggregation bits set).
    chain.ledger.count("attestations_included", attesting_count(block.body.attestations))
    if produced is not None:
        for included_slot, data_root in produced.included_attestations:
            chain.attestation_pool.mark_included(included_slot, data_root)
    if chain.faults is not None:
        chain.faults.on_client_block(slot, proposer)
    return 200 if became_head else 202


def _judge_embedded_attestation(chain: DevnetChain, attestation: View) -> None:
    data = AttestationDataFields.of(attestation.data)
    committees = chain.duties.committees_for_vote(data.slot, data.beacon_block_root)
    members: list[int] = []
    for committee_index, bit in enumerate(attestation.committee_bits):
        if bit:
            members.extend(committees.committee(data.slot, committee_index) or ())
    data_root = chain.roots.attestation_data_root(data)
    for member, bit in zip(members, attestation.aggregation_bits, strict=False):
        if bit:
            chain.judge_attestation(member, data.source_epoch, data.target_epoch, data_root)
