"""Sync committee duties: a message per member each slot, contributions by aggregators.

Members signing at slot ``s`` are those of the committee of ``s + 1``'s epoch
(the next block verifies them). At the slot's head event or one third into the
slot each member signs the head block root (one signer call for all, one
``POST /eth/v1/beacon/pool/sync_committees``). Two thirds into the slot, for
each subcommittee a member sits in, its selection proof decides whether it
aggregates; aggregators fetch the subcommittee's contribution for that root,
sign a ``ContributionAndProof`` and publish them all in one
``contribution_and_proofs`` call. None of these messages is slashable.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Sequence
from types import SimpleNamespace

from remerkleable.core import View

from validator.beacon import BeaconApiError, BeaconNodeError, SyncDuty
from validator.consensus.encoding import to_hex
from validator.consensus.ssz import SszInputError, altair, from_json, to_json
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
from validator.duties.selection import is_sync_committee_aggregator, sync_subcommittee_indices
from validator.signing.types import SigningRefusedError, SyncSelectionRequest

log = logging.getLogger("validator.sync_committee")


class SyncCommitteeDuties:
    def __init__(self, context: DutyContext) -> None:
        self._ctx = context

    @property
    def _containers(self) -> SimpleNamespace:
        """The chain's preset's altair containers (built once per preset, then a lookup)."""
        return altair.containers(self._ctx.chain.preset)

    async def head_root(self, known: bytes | None) -> tuple[bytes | None, str]:
        """The root to sign: the head event's block when it is the slot's, else the node's head."""
        if known is not None:
            return known, ""
        try:
            return (await self._ctx.client.get_block_root("head")).root, ""
        except BeaconNodeError as error:
            return None, f"no head block root: {error}"

    async def send_messages(
        self, slot: int, members: Sequence[SyncDuty], head_root: bytes | None
    ) -> bytes | None:
        """Sign and publish every member's message; the root signed (None when none was)."""
        if not members:
            return None
        kind = DutyKind.SYNC_COMMITTEE_MESSAGE
        indices = [duty.validator_index for duty in members]
        if self._missed(kind, slot, indices):
            return None
        root, problem = await self.head_root(head_root)
        if root is None:
            report(
                slot,
                kind,
                outcomes_of(indices, [DutyResult.FAILED] * len(members)),
                {DutyResult.FAILED: problem},
            )
            return None
        results = await self._ctx.signer.sign_sync_committee_messages(
            slot, root, [duty.pubkey for duty in members]
        )
        outcomes: list[tuple[int, DutyResult]] = []
        details: dict[DutyResult, str] = {}
        messages = []
        sent = []
        for duty, signed in zip(members, results, strict=True):
            if signed.signature is None:
                outcomes.append((duty.validator_index, DutyResult.REFUSED))
                details[DutyResult.REFUSED] = str(signed.refusal)
                continue
            messages.append(
                {
                    "slot": str(slot),
                    "beacon_block_root": to_hex(root),
                    "validator_index": str(duty.validator_index),
                    "signature": to_hex(signed.signature),
                }
            )
            sent.append(duty)
        if messages:
            publication = await publish_in_time(
                self._ctx.clock,
                kind,
                slot,
                lambda: self._ctx.client.publish_sync_committee_messages(messages),
                len(messages),
            )
            if publication.add_to([duty.validator_index for duty in sent], outcomes, details):
                observe_publish_delay(kind, self._ctx.clock, slot)
        report(slot, kind, outcomes, details)
        return root

    async def send_contributions(
        self, slot: int, members: Sequence[SyncDuty], root: bytes | None
    ) -> None:
        """Aggregate each subcommittee a member is chosen for, for the root signed at ``slot``."""
        if not members:
            return
        kind = DutyKind.SYNC_CONTRIBUTION
        chain = self._ctx.chain
        if self._missed(kind, slot, [duty.validator_index for duty in members]):
            return
        requests = [
            SyncSelectionRequest(duty.pubkey, slot, subcommittee)
            for duty in members
            for subcommittee in sync_subcommittee_indices(
                chain, duty.validator_sync_committee_indices
            )
        ]
        index_of = {duty.pubkey: duty.validator_index for duty in members}
        proofs = await self._ctx.signer.sign_sync_committee_selection_proofs(requests)
        outcomes: list[tuple[int, DutyResult]] = []
        details: dict[DutyResult, str] = {}
        chosen: dict[int, list[tuple[bytes, bytes]]] = defaultdict(list)
        for request, proof in zip(requests, proofs, strict=True):
            index = index_of[request.pubkey]
            if proof.signature is None:
                outcomes.append((index, DutyResult.REFUSED))
                details[DutyResult.REFUSED] = f"selection proof: {proof.refusal}"
            elif is_sync_committee_aggregator(chain, proof.signature):
                chosen[request.subcommittee_index].append((request.pubkey, proof.signature))
            else:
                outcomes.append((index, DutyResult.SKIPPED))
        if chosen and root is None:
            root, problem = await self.head_root(None)
            if root is None:
                for aggregators in chosen.values():
                    outcomes += [(index_of[pubkey], DutyResult.FAILED) for pubkey, _ in aggregators]
                report(slot, kind, outcomes, {DutyResult.FAILED: problem})
                return
        signed_messages: list[tuple[int, dict[str, object]]] = []
        for subcommittee, aggregators in sorted(chosen.items()):
            assert root is not None
            contribution, result, problem = await self._fetch_contribution(slot, subcommittee, root)
            if contribution is None:
                outcomes += [(index_of[pubkey], result) for pubkey, _ in aggregators]
                details[result] = problem
                continue
            contribution_json = to_json(contribution)  # once per subcommittee
            # All at once: a remote key's signature is a round trip, and the slot is short.
            signing = await asyncio.gather(
                *(
                    self._ctx.signer.sign_contribution_and_proof(
                        pubkey,
                        self._containers.ContributionAndProof(
                            aggregator_index=index_of[pubkey],
                            contribution=contribution,
                            selection_proof=selection_proof,
                        ),
                    )
                    for pubkey, selection_proof in aggregators
                ),
                return_exceptions=True,
            )
            for (pubkey, selection_proof), signed in zip(aggregators, signing, strict=True):
                if isinstance(signed, SigningRefusedError):
                    outcomes.append((index_of[pubkey], DutyResult.REFUSED))
                    details[DutyResult.REFUSED] = str(signed.refusal)
                    continue
                if isinstance(signed, BaseException):
                    raise signed
                signed_messages.append(
                    (
                        index_of[pubkey],
                        {
                            "message": {
                                "aggregator_index": str(index_of[pubkey]),
                                "contribution": contribution_json,
                                "selection_proof": to_hex(selection_proof),
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
                lambda: self._ctx.client.publish_contribution_and_proofs(
                    [message for _, message in signed_messages]
                ),
                len(signed_messages),
            )
            if publication.add_to([index for index, _ in signed_messages], outcomes, details):
                observe_publish_delay(kind, self._ctx.clock, slot)
        report(slot, kind, outcomes, details)

    def _missed(self, kind: DutyKind, slot: int, indices: Sequence[int]) -> bool:
        """Report every member's duty missed when its deadline passed (nothing is signed)."""
        if not deadline_passed(self._ctx.clock, kind, slot):
            return False
        late = missed(self._ctx.clock, kind, slot, len(indices))
        report(slot, kind, outcomes_of(indices, late.results), {DutyResult.MISSED: late.detail})
        return True

    async def _fetch_contribution(
        self, slot: int, subcommittee: int, root: bytes
    ) -> tuple[View | None, DutyResult, str]:
        try:
            raw = await self._ctx.client.get_sync_committee_contribution(slot, subcommittee, root)
            contribution = from_json(self._containers.SyncCommitteeContribution, raw)
        except BeaconApiError as error:
            result = DutyResult.SKIPPED if error.status == 404 else DutyResult.FAILED
            return None, result, str(error)
        except BeaconNodeError as error:
            return None, DutyResult.FAILED, str(error)
        except SszInputError as error:
            refuse(DutyKind.SYNC_CONTRIBUTION, "unreadable")
            return None, DutyResult.REFUSED, f"unreadable contribution: {error}"
        if (
            int(contribution.slot) != slot
            or int(contribution.subcommittee_index) != subcommittee
            or bytes(contribution.beacon_block_root) != root
        ):
            refuse(DutyKind.SYNC_CONTRIBUTION, "wrong_contribution")
            return (
                None,
                DutyResult.REFUSED,
                f"asked for subcommittee {subcommittee}'s contribution at slot {slot} for "
                f"0x{root.hex()[:16]}, got another",
            )
        return contribution, DutyResult.PUBLISHED, ""
