"""Judging what the client sends: signatures first, then the slasher, then the chain's rules.

Every POST follows the same order. Items that cannot be decoded, or that name
an unknown validator, are refused without further work. The signatures of all
other items go to one ``verify_signature_sets`` batch. An item with a bad
signature is refused and counted in ``invalid_signatures``; every validly
signed attestation and block is shown to the slasher (whatever the chain's
other rules later say about it: a signed message is evidence); then the
chain's rules decide whether it is accepted. Pool endpoints answer 400 with
one ``failures`` entry per refused item and still accept the others.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from remerkleable.core import View

from validator.consensus.ssz.codec import SszInputError, from_json
from validator.devnet.chain.finality import Checkpoint
from validator.devnet.chain.production import sync_subcommittee_seats
from validator.devnet.chain.shuffling import is_aggregator, is_sync_committee_aggregator
from validator.devnet.chain.simulated_chain import DevnetChain
from validator.devnet.judge.message_readers import (
    AttestationDataFields,
    SingleAttestationFields,
    WireError,
    parse_single_attestation,
    parse_sync_committee_message,
)
from validator.devnet.judge.signatures import SignatureCheck, failed_checks_async

log = logging.getLogger("validator.devnet")

Failures = list[tuple[int, str]]




def record_invalid(chain: DevnetChain, failures: Failures, item: int, what: str) -> None:
    chain.ledger.count("invalid_signatures")
    failures.append((item, f"invalid signature: {what}"))
    log.warning("invalid signature on item %d: %s", item, what)


def record_refusal(chain: DevnetChain, failures: Failures, item: int, message: str) -> None:
    chain.ledger.count("rejected_messages")
    failures.append((item, message))


async def decode_all(ssz_type: Any, items: Sequence[Any]) -> list[View | str]:
    """from_json for every item in a worker thread; a string is the item's decoding error."""

    def decode() -> list[View | str]:
        decoded: list[View | str] = []
        for item in items:
            try:
                decoded.append(from_json(ssz_type, item))
            except SszInputError as failure:
                decoded.append(f"malformed: {failure}")
        return decoded

    return await asyncio.to_thread(decode)


def _index_allowed(chain: DevnetChain, data: Any) -> bool:
    """Electra fixes ``data.index`` at 0; from Gloas it is the payload-status vote (0 or 1),
    and 0 for a block of the attestation's own slot."""
    if not chain.is_gloas_slot(data.slot):
        return bool(data.index == 0)
    if data.index == 0:
        return True
    voted = chain.tree.get(data.beacon_block_root)
    return bool(data.index == 1 and (voted is None or voted.slot != data.slot))


def slot_window_problem(chain: DevnetChain, slot: int, now: float, oldest: int) -> str | None:
    if slot > chain.latest_allowed_slot(now):
        return f"slot {slot} has not started (the chain is at slot {chain.current_slot(now)})"
    if slot < oldest:
        return f"slot {slot} is too old (the chain is at slot {chain.current_slot(now)})"
    return None


# --- attestations -----------------------------------------------------------------


@dataclass(frozen=True)
class _Placed:
    """An attestation placed in its committee."""

    committee_length: int
    position: int


def _place_attestation(
    chain: DevnetChain, attestation: SingleAttestationFields, now: float
) -> _Placed | str:
    data = attestation.data
    if not _index_allowed(chain, data):
        return "data.index must be 0 from Electra on (0 or 1 from Gloas on)"
    problem = slot_window_problem(
        chain, data.slot, now, chain.current_slot(now) - chain.slots_per_epoch
    )
    if problem:
        return problem
    if data.target_epoch != chain.epoch_of(data.slot):
        return f"target epoch {data.target_epoch} is not the epoch of slot {data.slot}"
    if chain.tree.get(data.beacon_block_root) is None:
        return f"unknown beacon_block_root 0x{data.beacon_block_root.hex()}"
    committees = chain.duties.committees_for_vote(data.slot, data.beacon_block_root)
    assignment = committees.assignment(attestation.attester_index)
    if (
        assignment is None
        or assignment.slot != data.slot
        or assignment.committee_index != attestation.committee_index
    ):
        return (
            f"validator {attestation.attester_index} is not in committee "
            f"{attestation.committee_index} at slot {data.slot}"
        )
    return _Placed(assignment.committee_length, assignment.validator_committee_index)


def _accept_vote(
    chain: DevnetChain, validator: int, data: AttestationDataFields, now: float
) -> None:
    chain.ledger.attestation_accepted(
        validator, data.target_epoch, now - chain.slot_start(data.slot)
    )
    chain.finality.record_vote(
        validator,
        Checkpoint(data.source_epoch, data.source_root),
        Checkpoint(data.target_epoch, data.target_root),
    )


async def submit_attestations(chain: DevnetChain, body: Sequence[Any], now: float) -> Failures:
    """POST /eth/v2/beacon/pool/attestations (Electra SingleAttestation objects)."""
    failures: Failures = []
    candidates: list[tuple[int, SingleAttestationFields]] = []
    checks: list[SignatureCheck] = []
    for item, raw in enumerate(body):
        try:
            attestation = parse_single_attestation(raw)
        except WireError as failure:
            record_refusal(chain, failures, item, f"malformed: {failure}")
            continue
        if attestation.attester_index >= len(chain.registry):
            record_refusal(chain, failures, item, f"unknown validator {attestation.attester_index}")
            continue
        checks.append(
            SignatureCheck(
                item,
                "attestation",
                (chain.registry.pubkey(attestation.attester_index),),
                chain.roots.attestation_signing_root(attestation.data),
                attestation.signature,
            )
        )
        candidates.append((item, attestation))
    bad = {check.item for check in await failed_checks_async(checks)}
    for item, attestation in candidates:
        if item in bad:
            record_invalid(chain, failures, item, "attestation")
            continue
        data = attestation.data
        data_root = chain.roots.attestation_data_root(data)
        findings = chain.judge_attestation(
            attestation.attester_index, data.source_epoch, data.target_epoch, data_root
        )
        if findings:
            record_refusal(chain, failures, item, f"slashable: {findings[0].description}")
            continue
        placed = _place_attestation(chain, attestation, now)
        if isinstance(placed, str):
            record_refusal(chain, failures, item, placed)
            continue
        added = chain.attestation_pool.add(
            data.slot,
            attestation.committee_index,
            data_root,
            data,
            placed.committee_length,
            placed.position,
            attestation.signature,
        )
        if not added:
            chain.ledger.count("duplicate_messages")
            chain.ledger.count("duplicate_attestations")
            continue
        _accept_vote(chain, attestation.attester_index, data, now)
        chain.ledger.count("attestations_received")
    return failures


async def submit_aggregates(
    chain: DevnetChain, body: Sequence[Any], now: float, containers: Any = None
) -> Failures:
    """POST /eth/v2/validator/aggregate_and_proofs (Electra SignedAggregateAndProof, or
    Gloas's progressive one under ``Eth-Consensus-Version: gloas``)."""
    failures: Failures = []
    kinds = chain.blocks if containers is None else containers
    decoded = await decode_all(kinds.SignedAggregateAndProof, body)
    candidates: list[tuple[int, Any, AttestationDataFields, tuple[int, ...], int]] = []
    checks: list[SignatureCheck] = []
    for item, signed in enumerate(decoded):
        if isinstance(signed, str):
            record_refusal(chain, failures, item, signed)
            continue
        message = signed.message
        aggregate = message.aggregate
        aggregator = int(message.aggregator_index)
        data = AttestationDataFields.of(aggregate.data)
        problem, attesters, committee_length = _aggregate_problem(
            chain, aggregator, aggregate, data, now
        )
        if problem:
            record_refusal(chain, failures, item, problem)
            continue
        aggregator_key = (chain.registry.pubkey(aggregator),)
        checks += [
            SignatureCheck(
                item,
                "selection proof",
                aggregator_key,
                chain.roots.judge.selection_proof(data.slot),
                bytes(message.selection_proof),
            ),
            SignatureCheck(
                item,
                "aggregate and proof",
                aggregator_key,
                chain.roots.judge.aggregate_and_proof(message),
                bytes(signed.signature),
            ),
            SignatureCheck(
                item,
                "aggregate attestation",
                tuple(chain.registry.pubkey(index) for index in attesters),
                chain.roots.attestation_signing_root(data),
                bytes(aggregate.signature),
            ),
        ]
        candidates.append((item, message, data, attesters, committee_length))
    failed = await failed_checks_async(checks)
    bad: dict[int, list[str]] = {}
    for check in failed:
        bad.setdefault(check.item, []).append(check.what)
    for item, message, data, attesters, committee_length in candidates:
        if item in bad:
            record_invalid(chain, failures, item, ", ".join(bad[item]))
            continue
        data_root = chain.roots.attestation_data_root(data)
        slashable = []
        for attester in attesters:
            slashable += chain.judge_attestation(
                attester, data.source_epoch, data.target_epoch, data_root
            )
        if slashable:
            record_refusal(chain, failures, item, f"slashable: {slashable[0].description}")
            continue
        if not is_aggregator(
            committee_length,
            bytes(message.selection_proof),
            chain.spec.target_aggregators_per_committee,
        ):
            record_refusal(
                chain,
                failures,
                item,
                f"validator {int(message.aggregator_index)} is not an aggregator "
                f"at slot {data.slot}",
            )
            continue
        for attester in attesters:
            _accept_vote(chain, attester, data, now)
        chain.ledger.count("aggregates_received")
    return failures


def _aggregate_problem(
    chain: DevnetChain, aggregator: int, aggregate: Any, data: AttestationDataFields, now: float
) -> tuple[str | None, tuple[int, ...], int]:
    if aggregator >= len(chain.registry):
        return f"unknown validator {aggregator}", (), 0
    if not _index_allowed(chain, data):
        return "data.index must be 0 from Electra on (0 or 1 from Gloas on)", (), 0
    problem = slot_window_problem(
        chain, data.slot, now, chain.current_slot(now) - chain.slots_per_epoch
    )
    if problem:
        return problem, (), 0
    if data.target_epoch != chain.epoch_of(data.slot):
        return f"target epoch {data.target_epoch} is not the epoch of slot {data.slot}", (), 0
    committee_indices = [index for index, bit in enumerate(aggregate.committee_bits) if bit]
    if len(committee_indices) != 1:
        return "an aggregate must have exactly one committee bit set", (), 0
    if chain.tree.get(data.beacon_block_root) is None:
        return f"unknown beacon_block_root 0x{data.beacon_block_root.hex()}", (), 0
    committees = chain.duties.committees_for_vote(data.slot, data.beacon_block_root)
    committee = committees.committee(data.slot, committee_indices[0])
    if committee is None:
        return f"no committee {committee_indices[0]} at slot {data.slot}", (), 0
    bits = list(aggregate.aggregation_bits)
    if len(bits) != len(committee):
        return (
            f"aggregation_bits has {len(bits)} bits, committee {committee_indices[0]} has "
            f"{len(committee)} members",
            (),
            0,
        )
    attesters = tuple(member for member, bit in zip(committee, bits, strict=True) if bit)
    if not attesters:
        return "an aggregate must have at least one aggregation bit set", (), 0
    if aggregator not in committee:
        return (
            f"validator {aggregator} is not in committee {committee_indices[0]} "
            f"at slot {data.slot}",
            (),
            0,
        )
    return None, attesters, len(committee)


# --- sync committee -----------------------------------------------------------------


async def submit_sync_messages(chain: DevnetChain, body: Sequence[Any], now: float) -> Failures:
    """POST /eth/v1/beacon/pool/sync_committees."""
    failures: Failures = []
    candidates = []
    checks: list[SignatureCheck] = []
    for item, raw in enumerate(body):
        try:
            message = parse_sync_committee_message(raw)
        except WireError as failure:
            record_refusal(chain, failures, item, f"malformed: {failure}")
            continue
        if message.validator_index >= len(chain.registry):
            record_refusal(chain, failures, item, f"unknown validator {message.validator_index}")
            continue
        problem = slot_window_problem(chain, message.slot, now, chain.current_slot(now) - 1)
        if problem is None and message.validator_index not in set(
            chain.duties.sync_committee_for_message_slot(message.slot)
        ):
            problem = (
                f"validator {message.validator_index} is not in the sync committee "
                f"for slot {message.slot}"
            )
        if problem is None and chain.tree.get(message.beacon_block_root) is None:
            problem = f"unknown beacon_block_root 0x{message.beacon_block_root.hex()}"
        if problem:
            record_refusal(chain, failures, item, problem)
            continue
        checks.append(
            SignatureCheck(
                item,
                "sync committee message",
                (chain.registry.pubkey(message.validator_index),),
                chain.roots.sync_message_signing_root(message.slot, message.beacon_block_root),
                message.signature,
            )
        )
        candidates.append((item, message))
    bad = {check.item for check in await failed_checks_async(checks)}
    for item, message in candidates:
        if item in bad:
            record_invalid(chain, failures, item, "sync committee message")
            continue
        if not chain.sync_pool.add(
            message.slot, message.beacon_block_root, message.validator_index, message.signature
        ):
            chain.ledger.count("duplicate_messages")
            continue
        chain.ledger.sync_message_accepted(message.slot, message.validator_index)
        chain.ledger.count("sync_messages_received")
    return failures


async def submit_contributions(chain: DevnetChain, body: Sequence[Any], now: float) -> Failures:
    """POST /eth/v1/validator/contribution_and_proofs."""
    failures: Failures = []
    decoded = await decode_all(chain.sync_containers.SignedContributionAndProof, body)
    candidates = []
    checks: list[SignatureCheck] = []
    for item, signed in enumerate(decoded):
        if isinstance(signed, str):
            record_refusal(chain, failures, item, signed)
            continue
        message = signed.message
        contribution = message.contribution
        aggregator = int(message.aggregator_index)
        slot = int(contribution.slot)
        subcommittee = int(contribution.subcommittee_index)
        block_root = bytes(contribution.beacon_block_root)
        problem: str | None = None
        participants: tuple[int, ...] = ()
        if aggregator >= len(chain.registry):
            problem = f"unknown validator {aggregator}"
        elif subcommittee >= chain.preset.SYNC_COMMITTEE_SUBNET_COUNT:
            problem = f"no sync subcommittee {subcommittee}"
        else:
            problem = slot_window_problem(chain, slot, now, chain.current_slot(now) - 1)
        if problem is None:
            seats = sync_subcommittee_seats(chain, slot, subcommittee)
            participants = tuple(
                member
                for member, bit in zip(seats, contribution.aggregation_bits, strict=True)
                if bit
            )
            if aggregator not in seats:
                problem = f"validator {aggregator} is not in sync subcommittee {subcommittee}"
            elif not participants:
                problem = "a contribution must have at least one aggregation bit set"
            elif chain.tree.get(block_root) is None:
                problem = f"unknown beacon_block_root 0x{block_root.hex()}"
        if problem:
            record_refusal(chain, failures, item, problem)
            continue
        aggregator_key = (chain.registry.pubkey(aggregator),)
        checks += [
            SignatureCheck(
                item,
                "selection proof",
                aggregator_key,
                chain.roots.judge.sync_selection_proof(slot, subcommittee),
                bytes(message.selection_proof),
            ),
            SignatureCheck(
                item,
                "contribution and proof",
                aggregator_key,
                chain.roots.judge.contribution_and_proof(message),
                bytes(signed.signature),
            ),
            SignatureCheck(
                item,
                "contribution",
                tuple(chain.registry.pubkey(index) for index in participants),
                chain.roots.sync_message_signing_root(slot, block_root),
                bytes(contribution.signature),
            ),
        ]
        candidates.append((item, message))
    failed = await failed_checks_async(checks)
    bad: dict[int, list[str]] = {}
    for check in failed:
        bad.setdefault(check.item, []).append(check.what)
    for item, message in candidates:
        if item in bad:
            record_invalid(chain, failures, item, ", ".join(bad[item]))
            continue
        if not is_sync_committee_aggregator(
            bytes(message.selection_proof),
            chain.spec.target_aggregators_per_sync_subcommittee,
            chain.preset,
        ):
            record_refusal(
                chain,
                failures,
                item,
                f"validator {int(message.aggregator_index)} is not a sync committee aggregator",
            )
            continue
        chain.ledger.count("contributions_received")
    return failures
