"""A scripted validator for the devnet's tests: signs duties with the interop keys.

Not the product's duty loop: a small, readable script that fetches duties,
signs with ``validator.consensus.signing_roots`` and publishes through the real
``validator.beacon`` client. It keeps its own minimal slashing protection
(highest source/target per validator, signed block slots) and refuses what a
correct client refuses, counting each refusal, so fault modes can be shown to
yield nothing slashable from a correct client.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import crypto_backend
from validator.beacon import BeaconNodeClient
from validator.beacon.errors import BeaconNodeError
from validator.beacon.types import AttesterDuty
from validator.consensus.interop import interop_secret_key
from validator.consensus.signing_roots import (
    aggregate_and_proof_signing_root,
    attestation_signing_root,
    block_signing_root,
    contribution_and_proof_signing_root,
    randao_reveal_signing_root,
    selection_proof_signing_root,
    sync_committee_message_signing_root,
    sync_committee_selection_proof_signing_root,
)
from validator.consensus.spec import ChainSpec
from validator.consensus.ssz import (
    AggregateAndProof,
    AttestationData,
    ContributionAndProof,
    SignedAggregateAndProof,
    SignedContributionAndProof,
    SyncCommitteeContribution,
    electra,
    from_json,
    hash_tree_root,
    to_json,
)
from validator.consensus.ssz.blocks import parse_produced_block
from validator.devnet.chain.shuffling import is_aggregator, is_sync_committee_aggregator

FORK = "fulu"
SUBCOMMITTEE_SIZE = 128


def hex0x(data: bytes) -> str:
    return "0x" + data.hex()


@dataclass
class MiniProtection:
    """What a correct client refuses: the minimal EIP-3076 rules, kept in memory."""

    blocks: dict[int, int] = field(default_factory=dict)
    """validator -> highest signed block slot."""
    attestations: dict[int, tuple[int, int]] = field(default_factory=dict)
    """validator -> (highest source, highest target)."""

    def allow_block(self, validator: int, slot: int) -> bool:
        if slot <= self.blocks.get(validator, -1):
            return False
        self.blocks[validator] = slot
        return True

    def allow_attestation(self, validator: int, source: int, target: int) -> bool:
        previous = self.attestations.get(validator)
        if previous is not None and (source < previous[0] or target <= previous[1]):
            return False
        self.attestations[validator] = (
            max(source, previous[0] if previous else 0),
            target,
        )
        return True


class Driver:
    def __init__(self, client: BeaconNodeClient, spec: ChainSpec, validator_count: int) -> None:
        self.client = client
        self.spec = spec
        self.keys = [interop_secret_key(i) for i in range(validator_count)]
        self.protection = MiniProtection()
        self.refusals: Counter[str] = Counter()
        self.sent: Counter[str] = Counter()
        self.errors: list[str] = []
        self.signed_blocks: dict[int, bytes] = {}
        self.attested_data: dict[tuple[int, int], dict[str, Any]] = {}
        """(validator, target epoch) -> the data it signed."""
        self.refused_attestations: list[tuple[int, dict[str, Any]]] = []
        """(validator, data) of every attestation the protection refused."""

    # --- time ----------------------------------------------------------------------

    def slot_time(self, slot: int, fraction: float = 0.0) -> float:
        return self.spec.slot_start_time(slot) + fraction * self.spec.seconds_per_slot

    async def wait_until(self, slot: int, fraction: float = 0.0) -> None:
        delay = self.slot_time(slot, fraction) - time.time()
        if delay > 0:
            await asyncio.sleep(delay)

    def sign(self, validator: int, message: bytes) -> bytes:
        return crypto_backend.sign(self.keys[validator], message)

    # --- data checks a correct client makes ----------------------------------------

    def data_problem(self, slot: int, data: dict[str, Any]) -> str | None:
        epoch = slot // self.spec.slots_per_epoch
        if int(data["slot"]) != slot:
            return "wrong_slot"
        if int(data["target"]["epoch"]) != epoch:
            return "wrong_target_epoch"
        if int(data["source"]["epoch"]) > epoch:
            return "future_source"
        return None

    # --- attestations -----------------------------------------------------------------

    async def duties_at(self, slot: int) -> list[AttesterDuty]:
        epoch = slot // self.spec.slots_per_epoch
        duties = await self.client.get_attester_duties(epoch, range(len(self.keys)))
        return [duty for duty in duties.duties if duty.slot == slot]

    def single_attestation(
        self, duty: AttesterDuty, data: dict[str, Any], signature: bytes | None = None
    ) -> dict[str, Any]:
        view = from_json(AttestationData, data)
        if signature is None:
            signature = self.sign(duty.validator_index, attestation_signing_root(self.spec, view))
        return {
            "committee_index": str(duty.committee_index),
            "attester_index": str(duty.validator_index),
            "data": data,
            "signature": hex0x(signature),
        }

    async def attest(self, slot: int) -> tuple[dict[str, Any] | None, list[AttesterDuty]]:
        """Attest for every validator with a duty at ``slot``; returns the data and duties used."""
        duties = await self.duties_at(slot)
        if not duties:
            return None, []
        data = await self.client.get_attestation_data(slot)
        problem = self.data_problem(slot, data)
        if problem:
            self.refusals[problem] += len(duties)
            return data, []
        signed = []
        used = []
        for duty in duties:
            source, target = int(data["source"]["epoch"]), int(data["target"]["epoch"])
            if not self.protection.allow_attestation(duty.validator_index, source, target):
                self.refusals["attestation"] += 1
                self.refused_attestations.append((duty.validator_index, data))
                continue
            self.attested_data[(duty.validator_index, target)] = data
            signed.append(self.single_attestation(duty, data))
            used.append(duty)
        if signed:
            await self.client.publish_attestations(signed, consensus_version=FORK)
            self.sent["attestations"] += len(signed)
        return data, used

    async def aggregate(self, slot: int, data: dict[str, Any], duties: list[AttesterDuty]) -> int:
        """Aggregate for the duties whose selection proof makes them aggregators (one POST)."""
        data_root = hash_tree_root(from_json(AttestationData, data))
        chosen = []
        for duty in duties:
            proof = self.sign(duty.validator_index, selection_proof_signing_root(self.spec, slot))
            if is_aggregator(duty.committee_length, proof, 16):
                chosen.append((duty, proof))
        answers = await asyncio.gather(
            *(
                self.client.get_aggregate_attestation(slot, data_root, duty.committee_index)
                for duty, _ in chosen
            )
        )
        signed = []
        for (duty, proof), answer in zip(chosen, answers, strict=True):
            message = AggregateAndProof(
                aggregator_index=duty.validator_index,
                aggregate=from_json(electra.Attestation, answer.data),
                selection_proof=proof,
            )
            signature = self.sign(
                duty.validator_index, aggregate_and_proof_signing_root(self.spec, message)
            )
            signed.append(to_json(SignedAggregateAndProof(message=message, signature=signature)))
        if signed:
            await self.client.publish_aggregate_and_proofs(signed, consensus_version=FORK)
            self.sent["aggregates"] += len(signed)
        return len(signed)

    # --- blocks -------------------------------------------------------------------------

    async def proposer_at(self, slot: int) -> int | None:
        duties = await self.client.get_proposer_duties(slot // self.spec.slots_per_epoch)
        for duty in duties.duties:
            if duty.slot == slot:
                return duty.validator_index
        return None

    def randao_reveal(self, validator: int, slot: int) -> bytes:
        epoch = slot // self.spec.slots_per_epoch
        return self.sign(validator, randao_reveal_signing_root(self.spec, epoch))

    async def produce(self, slot: int, validator: int) -> Any:
        produced = await self.client.produce_block(slot, self.randao_reveal(validator, slot))
        assert produced.data is not None
        return parse_produced_block(produced.version, produced.blinded, produced.data)

    async def propose(self, slot: int) -> bytes | None:
        """Propose if one of ours is the proposer; returns the signed block root."""
        proposer = await self.proposer_at(slot)
        if proposer is None:
            return None
        block = await self.produce(slot, proposer)
        if int(block.block.slot) != slot:
            self.refusals["block_wrong_slot"] += 1
            return None
        if not self.protection.allow_block(proposer, slot):
            self.refusals["block"] += 1
            return None
        signature = self.sign(proposer, block_signing_root(self.spec, block.block))
        await self.client.publish_block(to_json(block.signed(signature)), consensus_version=FORK)
        root = hash_tree_root(block.block)
        self.signed_blocks[slot] = root
        self.sent["blocks"] += 1
        return root

    # --- sync committee -------------------------------------------------------------

    async def sync_members(self, slot: int) -> dict[int, tuple[int, ...]]:
        """validator -> its seats, for messages at ``slot`` (the committee of slot + 1's period)."""
        epoch = (slot + 1) // self.spec.slots_per_epoch
        duties = await self.client.get_sync_duties(epoch, range(len(self.keys)))
        return {d.validator_index: d.validator_sync_committee_indices for d in duties.duties}

    async def sync_messages(self, slot: int) -> bytes:
        members = await self.sync_members(slot)
        root = (await self.client.get_block_root("head")).root
        message = sync_committee_message_signing_root(self.spec, slot, root)
        messages = [
            {
                "slot": str(slot),
                "beacon_block_root": hex0x(root),
                "validator_index": str(validator),
                "signature": hex0x(self.sign(validator, message)),
            }
            for validator in members
        ]
        if messages:
            await self.client.publish_sync_committee_messages(messages)
            self.sent["sync_messages"] += len(messages)
        return root

    async def contributions(self, slot: int, root: bytes) -> int:
        """Contribute for every (member, subcommittee) selected as aggregator (one POST)."""
        members = await self.sync_members(slot)
        chosen = []
        for validator, seats in members.items():
            for subcommittee in sorted({seat // SUBCOMMITTEE_SIZE for seat in seats}):
                proof = self.sign(
                    validator,
                    sync_committee_selection_proof_signing_root(self.spec, slot, subcommittee),
                )
                if is_sync_committee_aggregator(proof, 16):
                    chosen.append((validator, subcommittee, proof))
        answers = await asyncio.gather(
            *(
                self.client.get_sync_committee_contribution(slot, subcommittee, root)
                for _, subcommittee, _ in chosen
            )
        )
        signed = []
        for (validator, _, proof), data in zip(chosen, answers, strict=True):
            message = ContributionAndProof(
                aggregator_index=validator,
                contribution=from_json(SyncCommitteeContribution, data),
                selection_proof=proof,
            )
            signature = self.sign(
                validator, contribution_and_proof_signing_root(self.spec, message)
            )
            signed.append(to_json(SignedContributionAndProof(message=message, signature=signature)))
        if signed:
            await self.client.publish_contribution_and_proofs(signed)
            self.sent["contributions"] += len(signed)
        return len(signed)

    # --- a whole slot ---------------------------------------------------------------

    async def run_slot(self, slot: int, *, aggregate: bool = True, sync: bool = True) -> None:
        """Every duty of ``slot`` at its time; errors are recorded, not raised."""
        await self.wait_until(slot, 0.02)
        await self._guard("propose", self.propose(slot))
        await self.wait_until(slot, 1 / 3)
        attested = await self._guard("attest", self.attest(slot))
        root = await self._guard("sync", self.sync_messages(slot)) if sync else None
        await self._guard("re-announced proposal", self.reannounced_proposal(slot))
        await self.wait_until(slot, 2 / 3)
        if aggregate and attested is not None and attested[0] is not None:
            data, duties = attested
            await self._guard("aggregate", self.aggregate(slot, data, duties))
        if sync and root is not None:
            await self._guard("contributions", self.contributions(slot, root))

    async def reannounced_proposal(self, slot: int) -> None:
        """A duty for a slot already proposed: ask for the block, refuse to sign it."""
        if slot not in self.signed_blocks:
            return
        proposer = await self.proposer_at(slot)
        if proposer is None:
            return
        try:
            block = await self.produce(slot, proposer)
        except BeaconNodeError:
            return
        if hash_tree_root(block.block) != self.signed_blocks[slot]:
            if not self.protection.allow_block(proposer, slot):
                self.refusals["block"] += 1

    async def _guard(self, what: str, action: Any) -> Any:
        try:
            return await action
        except BeaconNodeError as failure:
            self.errors.append(f"{what}: {failure}")
            return None

    async def run(self, first_slot: int, last_slot: int, **options: Any) -> None:
        for slot in range(first_slot, last_slot + 1):
            await self.run_slot(slot, **options)
