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

from validator.consensus.domains import (
    DOMAIN_BEACON_PROPOSER,
    compute_signing_root_from_object_root,
)
from validator.consensus.signing_roots import (
    aggregate_and_proof_signing_root,
    contribution_and_proof_signing_root,
    randao_reveal_signing_root,
    selection_proof_signing_root,
    sync_committee_selection_proof_signing_root,
    validator_registration_signing_root,
    voluntary_exit_signing_root,
)
from validator.consensus.ssz import altair, electra
from validator.consensus.ssz.builder import SignedValidatorRegistrationV1
from validator.consensus.ssz.codec import SszInputError, from_json
from validator.consensus.ssz.phase0 import SignedVoluntaryExit
from validator.consensus.ssz.preset import SYNC_COMMITTEE_SUBNET_COUNT
from validator.devnet.apierrors import ApiError
from validator.devnet.blocktree import BlockRecord
from validator.devnet.chain import DevnetChain
from validator.devnet.finality import Checkpoint
from validator.devnet.production import INFINITY_SIGNATURE, sync_subcommittee_seats
from validator.devnet.shuffling import is_aggregator, is_sync_committee_aggregator
from validator.devnet.verification import SignatureCheck, failed_checks_async
from validator.devnet.wire import (
    AttestationDataFields,
    SingleAttestationFields,
    WireError,
    parse_single_attestation,
    parse_sync_committee_message,
)

log = logging.getLogger("validator.devnet")

Failures = list[tuple[int, str]]


def _invalid(chain: DevnetChain, failures: Failures, item: int, what: str) -> None:
    chain.ledger.count("invalid_signatures")
    failures.append((item, f"invalid signature: {what}"))
    log.warning("invalid signature on item %d: %s", item, what)


def _refuse(chain: DevnetChain, failures: Failures, item: int, message: str) -> None:
    chain.ledger.count("rejected_messages")
    failures.append((item, message))


async def _decode_all(ssz_type: Any, items: Sequence[Any]) -> list[View | str]:
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


def _slot_window_problem(chain: DevnetChain, slot: int, now: float, oldest: int) -> str | None:
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
    if data.index != 0:
        return "data.index must be 0 from Electra on"
    problem = _slot_window_problem(
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
            _refuse(chain, failures, item, f"malformed: {failure}")
            continue
        if attestation.attester_index >= len(chain.registry):
            _refuse(chain, failures, item, f"unknown validator {attestation.attester_index}")
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
            _invalid(chain, failures, item, "attestation")
            continue
        data = attestation.data
        data_root = chain.roots.attestation_data_root(data)
        findings = chain.judge_attestation(
            attestation.attester_index, data.source_epoch, data.target_epoch, data_root
        )
        if findings:
            _refuse(chain, failures, item, f"slashable: {findings[0].description}")
            continue
        placed = _place_attestation(chain, attestation, now)
        if isinstance(placed, str):
            _refuse(chain, failures, item, placed)
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
            continue
        _accept_vote(chain, attestation.attester_index, data, now)
        chain.ledger.count("attestations_received")
    return failures


async def submit_aggregates(chain: DevnetChain, body: Sequence[Any], now: float) -> Failures:
    """POST /eth/v2/validator/aggregate_and_proofs (Electra SignedAggregateAndProof)."""
    failures: Failures = []
    decoded = await _decode_all(electra.SignedAggregateAndProof, body)
    candidates: list[tuple[int, Any, AttestationDataFields, tuple[int, ...], int]] = []
    checks: list[SignatureCheck] = []
    for item, signed in enumerate(decoded):
        if isinstance(signed, str):
            _refuse(chain, failures, item, signed)
            continue
        message = signed.message
        aggregate = message.aggregate
        aggregator = int(message.aggregator_index)
        data = AttestationDataFields.of(aggregate.data)
        problem, attesters, committee_length = _aggregate_problem(
            chain, aggregator, aggregate, data, now
        )
        if problem:
            _refuse(chain, failures, item, problem)
            continue
        aggregator_key = (chain.registry.pubkey(aggregator),)
        checks += [
            SignatureCheck(
                item,
                "selection proof",
                aggregator_key,
                selection_proof_signing_root(chain.spec, data.slot),
                bytes(message.selection_proof),
            ),
            SignatureCheck(
                item,
                "aggregate and proof",
                aggregator_key,
                aggregate_and_proof_signing_root(chain.spec, message),
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
            _invalid(chain, failures, item, ", ".join(bad[item]))
            continue
        data_root = chain.roots.attestation_data_root(data)
        slashable = []
        for attester in attesters:
            slashable += chain.judge_attestation(
                attester, data.source_epoch, data.target_epoch, data_root
            )
        if slashable:
            _refuse(chain, failures, item, f"slashable: {slashable[0].description}")
            continue
        if not is_aggregator(
            committee_length,
            bytes(message.selection_proof),
            chain.spec.target_aggregators_per_committee,
        ):
            _refuse(
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
    if data.index != 0:
        return "data.index must be 0 from Electra on", (), 0
    problem = _slot_window_problem(
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
            _refuse(chain, failures, item, f"malformed: {failure}")
            continue
        if message.validator_index >= len(chain.registry):
            _refuse(chain, failures, item, f"unknown validator {message.validator_index}")
            continue
        problem = _slot_window_problem(chain, message.slot, now, chain.current_slot(now) - 1)
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
            _refuse(chain, failures, item, problem)
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
            _invalid(chain, failures, item, "sync committee message")
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
    decoded = await _decode_all(altair.SignedContributionAndProof, body)
    candidates = []
    checks: list[SignatureCheck] = []
    for item, signed in enumerate(decoded):
        if isinstance(signed, str):
            _refuse(chain, failures, item, signed)
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
        elif subcommittee >= SYNC_COMMITTEE_SUBNET_COUNT:
            problem = f"no sync subcommittee {subcommittee}"
        else:
            problem = _slot_window_problem(chain, slot, now, chain.current_slot(now) - 1)
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
            _refuse(chain, failures, item, problem)
            continue
        aggregator_key = (chain.registry.pubkey(aggregator),)
        checks += [
            SignatureCheck(
                item,
                "selection proof",
                aggregator_key,
                sync_committee_selection_proof_signing_root(chain.spec, slot, subcommittee),
                bytes(message.selection_proof),
            ),
            SignatureCheck(
                item,
                "contribution and proof",
                aggregator_key,
                contribution_and_proof_signing_root(chain.spec, message),
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
            _invalid(chain, failures, item, ", ".join(bad[item]))
            continue
        if not is_sync_committee_aggregator(
            bytes(message.selection_proof), chain.spec.target_aggregators_per_sync_subcommittee
        ):
            _refuse(
                chain,
                failures,
                item,
                f"validator {int(message.aggregator_index)} is not a sync committee aggregator",
            )
            continue
        chain.ledger.count("contributions_received")
    return failures


# --- exits and registrations --------------------------------------------------------


async def submit_voluntary_exit(chain: DevnetChain, body: Any, now: float) -> None:
    """POST /eth/v1/beacon/pool/voluntary_exits; ApiError(400) when refused."""
    try:
        signed = from_json(SignedVoluntaryExit, body)
    except SszInputError as failure:
        raise ApiError(400, f"malformed voluntary exit: {failure}") from None
    index = int(signed.message.validator_index)
    exit_epoch = int(signed.message.epoch)
    current_epoch = chain.current_epoch(now)
    if index >= len(chain.registry):
        chain.ledger.count("rejected_messages")
        raise ApiError(400, f"unknown validator {index}")
    checks = [
        SignatureCheck(
            0,
            "voluntary exit",
            (chain.registry.pubkey(index),),
            voluntary_exit_signing_root(chain.spec, signed.message, current_epoch=current_epoch),
            bytes(signed.signature),
        )
    ]
    if await failed_checks_async(checks):
        chain.ledger.count("invalid_signatures")
        raise ApiError(400, f"invalid signature on the voluntary exit of validator {index}")
    problem = None
    if exit_epoch > current_epoch:
        problem = f"exit epoch {exit_epoch} is after the current epoch {current_epoch}"
    elif not chain.lifecycle.is_active(index, current_epoch):
        problem = f"validator {index} is not active"
    elif index in chain.lifecycle.exit_epochs:
        problem = f"validator {index} is already exiting"
    if problem:
        chain.ledger.count("rejected_messages")
        raise ApiError(400, f"invalid voluntary exit: {problem}")
    chain.lifecycle.initiate_exit(index, current_epoch)
    chain.duties.forget_active_sets()
    chain.ledger.count("voluntary_exits_received")
    chain.events.publish("voluntary_exit", body)


async def submit_registrations(chain: DevnetChain, registrations: Sequence[View]) -> None:
    """POST /eth/v1/validator/register_validator; ApiError(400) naming bad signatures."""
    checks = []
    indices = []
    for item, signed in enumerate(registrations):
        index = chain.registry.index_of(bytes(signed.message.pubkey))
        if index is None:
            continue  # the spec: unknown validators are filtered out, not an error
        checks.append(
            SignatureCheck(
                item,
                "registration",
                (bytes(signed.message.pubkey),),
                validator_registration_signing_root(chain.spec, signed.message),
                bytes(signed.signature),
            )
        )
        indices.append((item, index, signed))
    bad = {check.item for check in await failed_checks_async(checks)}
    for item, index, signed in indices:
        if item in bad:
            chain.ledger.count("invalid_signatures")
            continue
        chain.registrations[index] = (
            bytes(signed.message.fee_recipient),
            int(signed.message.gas_limit),
        )
        chain.ledger.count("registrations_received")
    if bad:
        listed = ", ".join(str(item) for item in sorted(bad))
        raise ApiError(400, f"invalid signature on registration(s) {listed}")


def parse_registrations(body: Any) -> list[View]:
    if not isinstance(body, list):
        raise ApiError(400, "expected an array of signed validator registrations")
    try:
        return [from_json(SignedValidatorRegistrationV1, item) for item in body]
    except SszInputError as failure:
        raise ApiError(400, f"malformed registration: {failure}") from None


# --- blocks ------------------------------------------------------------------------


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
    message = randao_reveal_signing_root(chain.spec, chain.epoch_of(slot))
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
            compute_signing_root_from_object_root(
                root, chain.roots.domain(DOMAIN_BEACON_PROPOSER, chain.epoch_of(slot))
            ),
            signature,
        ),
        SignatureCheck(
            0,
            "randao reveal",
            proposer_key,
            randao_reveal_signing_root(chain.spec, chain.epoch_of(slot)),
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
    findings = chain.judge_block(proposer, slot, root)
    if findings:
        chain.ledger.count("rejected_messages")
        raise ApiError(400, f"slashable block: {findings[0].description}")
    if produced is None:
        for attestation in block.body.attestations:
            _judge_embedded_attestation(chain, attestation)
    if chain.tree.get(root) is not None:
        chain.ledger.count("duplicate_messages")
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
