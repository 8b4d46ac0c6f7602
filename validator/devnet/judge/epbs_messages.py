"""Judging the Gloas (ePBS) messages: PTC votes, self-built envelopes, proposer preferences.

Each signature is checked against the judge's own signing root
(:mod:`validator.devnet.judge.signing_roots`, domains written there from the spec), never
the client's code; a bad one counts in ``invalid_signatures``. Votes from a validator
without a seat in the slot's PTC, envelopes of blocks this chain did not build, and
preferences of a validator that does not propose the slot (or under another dependent
root) are refused and counted as ``rejected_messages``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from validator.consensus.ssz import gloas
from validator.consensus.ssz.gloas import BUILDER_INDEX_SELF_BUILD
from validator.devnet.beacon_api.errors import ApiError
from validator.devnet.chain.simulated_chain import DevnetChain
from validator.devnet.judge.duty_messages import (
    Failures,
    decode_all,
    record_refusal,
    slot_window_problem,
)
from validator.devnet.judge.signatures import SignatureCheck, failed_checks_async


async def submit_payload_attestations(
    chain: DevnetChain, body: Sequence[Any], now: float
) -> Failures:
    """POST /eth/v1/beacon/pool/payload_attestations (PayloadAttestationMessage objects)."""
    failures: Failures = []
    decoded = await decode_all(gloas.PayloadAttestationMessage, body)
    candidates: list[tuple[int, Any, int, bytes]] = []
    checks: list[SignatureCheck] = []
    for item, message in enumerate(decoded):
        if isinstance(message, str):
            record_refusal(chain, failures, item, message)
            continue
        slot, validator = int(message.data.slot), int(message.validator_index)
        problem = slot_window_problem(chain, slot, now, chain.current_slot(now) - 1)
        if problem is None and not chain.is_gloas_slot(slot):
            problem = f"slot {slot} is before the Gloas fork"
        if problem is None and validator not in chain.duties.ptc(slot):
            problem = f"validator {validator} has no seat in slot {slot}'s PTC"
        if problem is None and chain.tree.canonical_at(slot) is None:
            problem = f"no block at slot {slot} to vote on"
        if problem is not None:
            record_refusal(chain, failures, item, problem)
            continue
        data_root = bytes(message.data.hash_tree_root())
        candidates.append((item, message, validator, data_root))
        checks.append(
            SignatureCheck(
                item,
                "payload attestation",
                (chain.registry.pubkey(validator),),
                chain.roots.judge.payload_attestation(data_root, slot),
                bytes(message.signature),
            )
        )
    failed = {check.item for check in await failed_checks_async(checks)}
    for item, message, validator, data_root in candidates:
        if item in failed:
            chain.ledger.count("invalid_signatures")
            failures.append((item, "invalid signature"))
            continue
        slot = int(message.data.slot)
        due = chain.slot_start(slot) + chain.spec.ms_into_slot(
            chain.spec.gloas_deadlines.payload_attestation_due_bps
        ) / 1000
        if chain.payload_attestation_pool.add(
            slot, data_root, message.data, validator, bytes(message.signature)
        ):
            chain.ledger.count("payload_attestations_received")
            if now > due + chain.clock_disparity:
                chain.ledger.count("late_payload_attestations")
        else:
            chain.ledger.count("duplicate_messages")
    return failures


async def submit_envelope(chain: DevnetChain, signed: Any, now: float) -> None:
    """POST /eth/v1/beacon/execution_payload_envelopes: a self-built payload's envelope."""
    envelope = signed.message
    root = bytes(envelope.beacon_block_root)
    due = chain.envelopes_due.get(root)
    if due is None:
        chain.ledger.count("rejected_messages")
        raise ApiError(400, "the envelope's beacon_block_root is no block this node built")
    slot, proposer, produced = due
    envelope_root = await asyncio.to_thread(lambda: bytes(envelope.hash_tree_root()))
    if int(envelope.builder_index) != BUILDER_INDEX_SELF_BUILD:
        chain.ledger.count("rejected_messages")
        raise ApiError(400, "the block's bid is self-built: the envelope must be too")
    if envelope_root != bytes(produced.hash_tree_root()):
        chain.ledger.count("rejected_messages")
        raise ApiError(400, "the envelope differs from the one this node built for the block")
    check = SignatureCheck(
        0,
        "envelope signature",
        (chain.registry.pubkey(proposer),),
        chain.roots.judge.execution_payload_envelope(envelope_root, slot),
        bytes(signed.signature),
    )
    if await failed_checks_async([check]):
        chain.ledger.count("invalid_signatures")
        raise ApiError(400, "invalid envelope signature")
    if root in chain.envelopes_seen:
        chain.ledger.count("duplicate_messages")
        return
    chain.envelopes_seen[root] = now
    chain.ledger.count("envelopes_received")
    chain.events.publish(
        "execution_payload_available", {"slot": str(slot), "block_root": "0x" + root.hex()}
    )


async def submit_preferences(chain: DevnetChain, body: Sequence[Any], now: float) -> Failures:
    """POST /eth/v1/validator/proposer_preferences (SignedProposerPreferences objects)."""
    failures: Failures = []
    decoded = await decode_all(gloas.SignedProposerPreferences, body)
    candidates: list[tuple[int, Any]] = []
    checks: list[SignatureCheck] = []
    for item, signed in enumerate(decoded):
        if isinstance(signed, str):
            record_refusal(chain, failures, item, signed)
            continue
        preferences = signed.message
        slot, validator = int(preferences.proposal_slot), int(preferences.validator_index)
        epoch = chain.epoch_of(slot)
        problem = None
        if not chain.is_gloas_slot(slot):
            problem = f"proposal slot {slot} is before the Gloas fork"
        elif slot <= chain.current_slot(now):
            problem = f"proposal slot {slot} has begun"
        elif epoch > chain.current_epoch(now) + 1:
            problem = f"proposal slot {slot} is past the proposer lookahead"
        elif bytes(preferences.dependent_root) != chain.tree.proposer_dependent_root(epoch):
            # [IGNORE] in the spec: made on duties since re-shuffled; not the sender's fault.
            chain.ledger.count("stale_proposer_preferences")
            continue
        elif chain.duties.proposer(slot) != validator:
            problem = f"validator {validator} does not propose slot {slot}"
        if problem is not None:
            record_refusal(chain, failures, item, problem)
            continue
        candidates.append((item, preferences))
        checks.append(
            SignatureCheck(
                item,
                "proposer preferences",
                (chain.registry.pubkey(validator),),
                chain.roots.judge.proposer_preferences(preferences),
                bytes(signed.signature),
            )
        )
    failed = {check.item for check in await failed_checks_async(checks)}
    for item, preferences in candidates:
        if item in failed:
            chain.ledger.count("invalid_signatures")
            failures.append((item, "invalid signature"))
            continue
        slot = int(preferences.proposal_slot)
        if slot in chain.preferences:
            chain.ledger.count("duplicate_messages")
            continue
        chain.preferences[slot] = (
            int(preferences.validator_index),
            bytes(preferences.fee_recipient),
            int(preferences.target_gas_limit),
        )
        chain.ledger.count("proposer_preferences_received")
    return failures
