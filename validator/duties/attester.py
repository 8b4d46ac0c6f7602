"""Attestations and their aggregation (Electra on: EIP-7549 forms).

Attest, at the slot's head event or one third into the slot, whichever comes
first: one ``attestation_data`` request (from Electra the data is the same for
every committee, with index 0), one signer call for every key attesting in the
slot (so one durable record write), then one ``POST
/eth/v2/beacon/pool/attestations`` of ``SingleAttestation`` objects.

Aggregate, two thirds into the slot, for keys whose selection proof makes them
aggregators: one ``aggregate_attestation`` (v2) per committee, each aggregator's
``AggregateAndProof`` signed, all published in one ``aggregate_and_proofs`` (v2).

Data the beacon node serves is checked against the request before the signer
sees it (the slot asked for, the target epoch of that slot, committee index
0); a mismatch is refused and counted in ``validator_duty_refusals_total``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace

from remerkleable.core import View

from validator.beacon import AttesterDuty, BeaconApiError, BeaconNodeError
from validator.consensus.encoding import to_hex
from validator.consensus.forks import ForkName
from validator.consensus.spec import UnsupportedForkError
from validator.consensus.ssz import (
    AttestationData,
    SszInputError,
    electra,
    from_json,
    gloas,
    to_json,
)
from validator.duties.context import (
    DutyContext,
    deadline_passed,
    missed,
    observe_publish_delay,
    outcomes_of,
    publish_in_time,
    refuse,
    report,
)
from validator.duties.metrics import DutyKind, DutyResult
from validator.duties.selection import is_aggregator
from validator.signing.types import AttestationRequest, SigningRefusedError

log = logging.getLogger("validator.attester")


@dataclass
class SlotAttestations:
    """What the attestation step of a slot left for its aggregation step."""

    data: View | None = None
    """The AttestationData the slot's keys attested to (None: none could be had)."""
    published: set[bytes] = field(default_factory=set)


class Attester:
    def __init__(self, context: DutyContext) -> None:
        self._ctx = context
        # (slot, pubkey) -> aggregator selection proof, signed ahead with the subscriptions.
        self._selection_proofs: dict[tuple[int, bytes], bytes] = {}

    def _containers(self, slot: int) -> SimpleNamespace:
        """The chain's preset's Electra containers, or Gloas's (EIP-7688 progressive
        attestations) in a Gloas slot (built once per preset, then a lookup)."""
        fork = gloas if self._ctx.chain.is_gloas_slot(slot) else electra
        return fork.containers(self._ctx.chain.preset)

    # -- attesting ---------------------------------------------------------------

    def _check_data(self, data: View, slot: int) -> tuple[str, str] | None:
        epoch = self._ctx.chain.epoch_at_slot(slot)
        if int(data.slot) != slot:
            return "wrong_slot", f"asked for slot {slot}'s attestation data, got slot {data.slot}'s"
        if self._ctx.chain.is_gloas_slot(slot):
            # From Gloas the index is the payload-status vote the node fills: 0 or 1.
            if int(data.index) not in (0, 1):
                return "wrong_index", f"a Gloas attestation's index is 0 or 1, got {data.index}"
        elif int(data.index) != 0:
            return "wrong_index", f"attestation data from Electra on has index 0, got {data.index}"
        if int(data.target.epoch) != epoch:
            return (
                "wrong_target",
                f"slot {slot} attests to target epoch {epoch}, the data says {data.target.epoch}",
            )
        return None

    async def fetch_data(self, slot: int) -> tuple[View | None, DutyResult, str]:
        """The slot's AttestationData, checked; or None, FAILED (no node answered) or
        REFUSED (the answer is not the slot's data), and why."""
        ctx = self._ctx
        try:
            raw = await ctx.client.get_attestation_data(slot, 0)
            data = from_json(AttestationData, raw)
        except BeaconNodeError as error:
            return None, DutyResult.FAILED, f"no attestation data: {error}"
        except SszInputError as error:
            refuse(DutyKind.ATTESTATION, "unreadable")
            return None, DutyResult.REFUSED, f"unreadable attestation data: {error}"
        mismatch = self._check_data(data, slot)
        if mismatch is not None:
            refuse(DutyKind.ATTESTATION, mismatch[0])
            return None, DutyResult.REFUSED, mismatch[1]
        return data, DutyResult.PUBLISHED, ""

    async def attest(self, slot: int, duties: Sequence[AttesterDuty]) -> SlotAttestations:
        """Attest for every duty of ``slot``; report each validator's outcome."""
        made = SlotAttestations()
        if not duties:
            return made
        kind = DutyKind.ATTESTATION
        indices = [duty.validator_index for duty in duties]
        fork, unsupported = self._signable_fork(slot)
        if fork is None:
            refuse(kind, "unsupported_fork")
            report(
                slot,
                kind,
                outcomes_of(indices, [DutyResult.REFUSED] * len(duties)),
                {DutyResult.REFUSED: unsupported},
            )
            return made
        data, result, problem = await self.fetch_data(slot)
        if data is None:
            report(slot, kind, outcomes_of(indices, [result] * len(duties)), {result: problem})
            return made
        made.data = data
        if deadline_passed(self._ctx.clock, kind, slot):
            late = missed(self._ctx.clock, kind, slot, len(duties))
            report(slot, kind, outcomes_of(indices, late.results), {DutyResult.MISSED: late.detail})
            return made
        # Remote keys wait on their signer: sign and publish them apart, so that a slow or
        # down remote signer never holds back the local keys' attestations.
        signer = self._ctx.signer
        groups = [
            [duty for duty in duties if not signer.is_remote(duty.pubkey)],
            [duty for duty in duties if signer.is_remote(duty.pubkey)],
        ]
        outcomes: list[tuple[int, DutyResult]] = []
        details: dict[DutyResult, str] = {}
        for group_outcomes, group_details, published in await asyncio.gather(
            *(self._sign_and_publish(slot, fork, data, group) for group in groups if group)
        ):
            outcomes.extend(group_outcomes)
            for result, detail in group_details.items():
                details[result] = f"{details[result]}; {detail}" if result in details else detail
            made.published |= published
        report(slot, kind, outcomes, details)
        return made

    async def _sign_and_publish(
        self, slot: int, fork: ForkName, data: View, duties: Sequence[AttesterDuty]
    ) -> tuple[list[tuple[int, DutyResult]], dict[DutyResult, str], set[bytes]]:
        """Sign ``duties``' attestations as one batch and publish them; what became of each."""
        kind = DutyKind.ATTESTATION
        published: set[bytes] = set()
        results = await self._ctx.signer.sign_attestations(
            [AttestationRequest(duty.pubkey, data) for duty in duties]
        )
        outcomes: list[tuple[int, DutyResult]] = []
        refusals: dict[str, int] = defaultdict(int)
        to_publish: list[tuple[AttesterDuty, bytes]] = []
        for duty, signed in zip(duties, results, strict=True):
            if signed.signature is None:
                outcomes.append((duty.validator_index, DutyResult.REFUSED))
                refusals[str(signed.refusal)] += 1
            else:
                to_publish.append((duty, signed.signature))
        details: dict[DutyResult, str] = {}
        if refusals:
            details[DutyResult.REFUSED] = "; ".join(
                f"{reason} (x{count})" if count > 1 else reason
                for reason, count in refusals.items()
            )
        if to_publish:
            # SingleAttestation JSON, built directly: the data is the same for all, and
            # walking a container per key would cost more than signing at 10,000 keys.
            data_json = to_json(data)
            messages = [
                {
                    "committee_index": str(duty.committee_index),
                    "attester_index": str(duty.validator_index),
                    "data": data_json,
                    "signature": to_hex(signature),
                }
                for duty, signature in to_publish
            ]
            publication = await publish_in_time(
                self._ctx.clock,
                kind,
                slot,
                lambda: self._ctx.client.publish_attestations(
                    messages, consensus_version=fork.value
                ),
                len(messages),
            )
            published_duties = [duty for duty, _ in to_publish]
            if publication.add_to(
                [duty.validator_index for duty in published_duties], outcomes, details
            ):
                observe_publish_delay(kind, self._ctx.clock, slot)
            published = {
                duty.pubkey
                for duty, result in zip(published_duties, publication.results, strict=True)
                if result is DutyResult.PUBLISHED
            }
        return outcomes, details, published

    def _signable_fork(self, slot: int) -> tuple[ForkName | None, str]:
        """The fork at ``slot`` when this client attests in it; else None and why not.

        A fork the client does not know raises UnsupportedForkError in the chain spec:
        that is a refusal like any other, not a failure of the duty.
        """
        chain = self._ctx.chain
        try:
            fork = chain.fork_name_at(chain.epoch_at_slot(slot))
        except UnsupportedForkError as error:
            return None, str(error)
        if not fork.at_least(ForkName.ELECTRA):
            return None, f"this client attests from Electra on, not in {fork.value}"
        return fork, ""

    # -- aggregator selection ----------------------------------------------------

    async def selection_proofs(
        self, slot: int, duties: Sequence[AttesterDuty]
    ) -> dict[bytes, bytes]:
        """Each duty's selection proof for ``slot`` (signed once, then kept)."""
        missing = [
            duty.pubkey for duty in duties if (slot, duty.pubkey) not in self._selection_proofs
        ]
        if missing:
            results = await self._ctx.signer.sign_selection_proofs(slot, missing)
            for result in results:
                if result.signature is not None:
                    self._selection_proofs[(slot, result.pubkey)] = result.signature
        return {
            duty.pubkey: self._selection_proofs[(slot, duty.pubkey)]
            for duty in duties
            if (slot, duty.pubkey) in self._selection_proofs
        }

    async def aggregators(self, slot: int, duties: Sequence[AttesterDuty]) -> set[bytes]:
        """The keys among ``duties`` (all of ``slot``) that aggregate their committee.

        None where this client does not aggregate (before Electra, or a fork it does not
        know): no selection proof is signed for an aggregation that would be refused.
        """
        if self._signable_fork(slot)[0] is None:
            return set()
        proofs = await self.selection_proofs(slot, duties)
        target = self._ctx.chain.target_aggregators_per_committee
        return {
            duty.pubkey
            for duty in duties
            if duty.pubkey in proofs
            and is_aggregator(duty.committee_length, proofs[duty.pubkey], target)
        }

    def forget_before(self, slot: int) -> None:
        for key in [key for key in self._selection_proofs if key[0] < slot]:
            del self._selection_proofs[key]

    # -- aggregating -------------------------------------------------------------

    async def aggregate(
        self, slot: int, duties: Sequence[AttesterDuty], made: SlotAttestations | None
    ) -> None:
        """Aggregate each committee of ``slot`` for which one of ``duties`` is an aggregator."""
        if not duties:
            return
        kind = DutyKind.AGGREGATE
        fork, unsupported = self._signable_fork(slot)
        if fork is None:
            # Refused by design: before any selection proof is signed or anything fetched.
            refuse(kind, "unsupported_fork")
            refused = [(duty.validator_index, DutyResult.REFUSED) for duty in duties]
            report(slot, kind, refused, {DutyResult.REFUSED: unsupported})
            return
        if deadline_passed(self._ctx.clock, kind, slot):
            late = missed(self._ctx.clock, kind, slot, len(duties))
            indices = [duty.validator_index for duty in duties]
            report(slot, kind, outcomes_of(indices, late.results), {DutyResult.MISSED: late.detail})
            return
        chosen = await self.aggregators(slot, duties)
        outcomes: list[tuple[int, DutyResult]] = [
            (duty.validator_index, DutyResult.SKIPPED)
            for duty in duties
            if duty.pubkey not in chosen
        ]
        aggregating = [duty for duty in duties if duty.pubkey in chosen]
        if not aggregating:
            report(slot, kind, outcomes)
            return
        details: dict[DutyResult, str] = {}
        data = made.data if made is not None else None
        if data is None:
            data, result, problem = await self.fetch_data(slot)
            if data is None:
                outcomes += [(duty.validator_index, result) for duty in aggregating]
                report(slot, kind, outcomes, {result: problem})
                return
        data_root = bytes(data.hash_tree_root())
        by_committee: dict[int, list[AttesterDuty]] = defaultdict(list)
        for duty in aggregating:
            by_committee[duty.committee_index].append(duty)
        proofs = await self.selection_proofs(slot, aggregating)
        signed_messages: list[tuple[AttesterDuty, dict[str, object]]] = []
        for committee_index, members in sorted(by_committee.items()):
            aggregate, result, problem = await self._fetch_aggregate(
                slot, data_root, committee_index
            )
            if aggregate is None:
                outcomes += [(duty.validator_index, result) for duty in members]
                details[result] = problem
                continue
            aggregate_json = to_json(aggregate)  # once per committee, shared by its aggregators
            # All at once: a remote key's signature is a round trip, and the slot is short.
            signing = await asyncio.gather(
                *(
                    self._ctx.signer.sign_aggregate_and_proof(
                        duty.pubkey,
                        self._containers(slot).AggregateAndProof(
                            aggregator_index=duty.validator_index,
                            aggregate=aggregate,
                            selection_proof=proofs[duty.pubkey],
                        ),
                    )
                    for duty in members
                ),
                return_exceptions=True,
            )
            for duty, signed in zip(members, signing, strict=True):
                if isinstance(signed, SigningRefusedError):
                    outcomes.append((duty.validator_index, DutyResult.REFUSED))
                    details[DutyResult.REFUSED] = str(signed.refusal)
                    continue
                if isinstance(signed, BaseException):
                    raise signed
                signed_messages.append(
                    (
                        duty,
                        {
                            "message": {
                                "aggregator_index": str(duty.validator_index),
                                "aggregate": aggregate_json,
                                "selection_proof": to_hex(proofs[duty.pubkey]),
                            },
                            "signature": to_hex(bytes(signed.signature)),
                        },
                    )
                )
        if signed_messages:
            publication = await publish_in_time(
                self._ctx.clock,
                kind,
                slot,
                lambda: self._ctx.client.publish_aggregate_and_proofs(
                    [message for _, message in signed_messages],
                    consensus_version=fork.value,
                ),
                len(signed_messages),
            )
            indices = [duty.validator_index for duty, _ in signed_messages]
            if publication.add_to(indices, outcomes, details):
                observe_publish_delay(kind, self._ctx.clock, slot)
        report(slot, kind, outcomes, details)

    async def _fetch_aggregate(
        self, slot: int, data_root: bytes, committee_index: int
    ) -> tuple[View | None, DutyResult, str]:
        """The committee's aggregate, checked; else None, the outcome and why.

        404 means the node saw no attestation of the committee: nothing to aggregate.
        """
        try:
            answer = await self._ctx.client.get_aggregate_attestation(
                slot, data_root, committee_index
            )
            if self._ctx.chain.is_gloas_slot(slot) and answer.version != "gloas":
                refuse(DutyKind.AGGREGATE, "wrong_version")
                return None, DutyResult.REFUSED, f"a {answer.version!r} aggregate in a Gloas slot"
            aggregate = from_json(self._containers(slot).Attestation, answer.data)
        except BeaconApiError as error:
            result = DutyResult.SKIPPED if error.status == 404 else DutyResult.FAILED
            return None, result, str(error)
        except BeaconNodeError as error:
            return None, DutyResult.FAILED, str(error)
        except SszInputError as error:
            refuse(DutyKind.AGGREGATE, "unreadable")
            return None, DutyResult.REFUSED, f"unreadable aggregate: {error}"
        if bytes(aggregate.data.hash_tree_root()) != data_root:
            refuse(DutyKind.AGGREGATE, "wrong_data")
            return (
                None,
                DutyResult.REFUSED,
                "the aggregate is not of the attestation data asked for",
            )
        committees = [index for index, bit in enumerate(aggregate.committee_bits) if bit]
        if committees != [committee_index]:
            refuse(DutyKind.AGGREGATE, "wrong_committee")
            return (
                None,
                DutyResult.REFUSED,
                f"asked for committee {committee_index}'s aggregate, got committees {committees}",
            )
        return aggregate, DutyResult.PUBLISHED, ""
