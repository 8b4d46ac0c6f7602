"""The signer: the one path from a message to a signature in the validator client.

Every message kind is signed here, so its domain and signing root are computed
in one place (``validator.consensus.signing_roots``), and this is the only caller of
``crypto_backend.sign`` and ``crypto_backend.sign_many``. Blocks and
attestations are slashable; for them the order is fixed:

1. the signer holds the key (else ``unknown_key``);
2. checks that need no record: the block's fork, the far-future guard,
   source not above target, and a signing root the chain's forks allow;
3. the slashing-protection record judges and durably records the message
   (one write for a whole attestation batch);
4. the key is checked again under the key lock, and only then signed.

A message refused or not recorded at any step is not signed. Signing and record
calls run in threads (they block); docs/signing.md describes the rules.

Why one module of about 600 lines: it is the only path to a signature, and the
check-record-sign order above must be read, and reviewed, as one piece for
every kind; the parts that stand alone (keys, guards, types, blocking calls)
are already their own modules beside it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from remerkleable.core import View

import crypto_backend
from slashing_protection import (
    RecordRefusal,
    SlashingProtectionError,
    SlashingProtectionRecord,
    Verdict,
)
from slashing_protection.blocking import run_to_completion
from validator.consensus.forks import ForkName
from validator.consensus.signing_roots import (
    aggregate_and_proof_signing_root,
    attestation_signing_root,
    block_signing_root,
    contribution_and_proof_signing_root,
    execution_payload_envelope_signing_root,
    payload_attestation_signing_root,
    proposer_preferences_signing_root,
    randao_reveal_signing_root,
    selection_proof_signing_root,
    sync_committee_message_signing_root,
    sync_committee_selection_proof_signing_root,
    validator_registration_signing_root,
    voluntary_exit_signing_root,
)
from validator.consensus.spec import ChainSpec, UnsupportedForkError
from validator.consensus.ssz import (
    SignedValidatorRegistrationV1,
    SignedVoluntaryExit,
    altair,
    electra,
    gloas,
)
from validator.consensus.ssz.altair import SyncAggregatorSelectionData
from validator.consensus.ssz.blocks import ProducedBlock, block_header
from validator.metrics import (
    ATTESTATION_BATCH_SECONDS,
    BLOCK_SIGNING_SECONDS,
    SIGNATURE_REFUSALS,
    SIGNATURES,
)
from validator.signing.guards import (
    DEFAULT_FAR_FUTURE_MARGIN_EPOCHS,
    check_attestation_epochs,
    check_block_slot,
    wall_clock_epoch,
)
from validator.signing.keys import KeyHold, SigningKeys
from validator.signing.remote import RemoteSigner, RemoteSigningError, verify_batch
from validator.signing.types import (
    AttestationRequest,
    PayloadAttestationRequest,
    Refusal,
    RefusalReason,
    SignedBlock,
    SigningKind,
    SigningRefusedError,
    SigningResult,
    SyncSelectionRequest,
)
from validator.signing.web3signer import (
    AggregationSlot,
    RandaoReveal,
    SigningRequest,
    SignType,
    SyncCommitteeMessageData,
    request_for,
)

log = logging.getLogger("validator.signer")


SlashingRecord = SlashingProtectionRecord
"""The record the signer checks and writes (blocking calls): the file record or the shared
PostgreSQL one, behind slashing_protection's one protocol."""


# The record's reason for a refusal, as the signer reports it.
_RECORD_REFUSALS = {
    RecordRefusal.NOT_REGISTERED: Refusal(
        RefusalReason.NOT_REGISTERED, "the slashing-protection record has no entry for this key"
    ),
    RecordRefusal.WRITE_FAILED: Refusal(
        RefusalReason.RECORD_WRITE_FAILED, "the slashing-protection record could not be written"
    ),
    RecordRefusal.SLASHABLE: Refusal(
        RefusalReason.SLASHABLE, "the slashing-protection record refuses it"
    ),
}


def _refused_by_record(verdict: Verdict) -> Refusal | None:
    return None if verdict.reason is None else _RECORD_REFUSALS[verdict.reason]


RemoteRequest = Callable[[bytes], SigningRequest]
"""signing root -> the Web3Signer request for it (built only when a remote key signs)."""


async def _no_signatures() -> dict[bytes, list[bytes]]:
    return {}


def _sign_grouped(groups: Mapping[bytes, Sequence[int]]) -> dict[bytes, list[bytes]]:
    """One ``sign_many`` per distinct signing root (the message is hashed to G2 once)."""
    return {root: crypto_backend.sign_many(list(sks), root) for root, sks in groups.items()}


@dataclass(frozen=True)
class _JudgedData:
    """One AttestationData's checks and signing root, shared by every key attesting to it."""

    data: View
    slot: int
    source: int
    target: int
    signing_root: bytes
    refusal: Refusal | None


class Signer:
    """The async signing service (see the module docstring).

    ``record`` is the open slashing-protection record (the file record or the shared one);
    ``clock`` gives Unix seconds (the far-future guard's wall clock).
    """

    def __init__(
        self,
        chain: ChainSpec,
        record: SlashingRecord,
        *,
        far_future_margin_epochs: int = DEFAULT_FAR_FUTURE_MARGIN_EPOCHS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if far_future_margin_epochs < 0:
            raise ValueError("far_future_margin_epochs must be 0 or more")
        self.chain = chain
        self.far_future_margin_epochs = far_future_margin_epochs
        self._record = record
        self._clock = clock
        self._keys = SigningKeys()
        self._key_listeners: list[Callable[[], None]] = []

    # ------------------------------------------------------------------ keys

    async def add_keys(self, keys: Mapping[bytes, int]) -> None:
        """Hold these decrypted keys (pubkey -> secret); KeyMismatchError if one is not its key's.

        Adding a key does not register it in the slashing-protection record:
        without an entry there, its blocks and attestations are refused.
        """
        await self._keys.add(keys)
        self._keys_changed()

    async def add_remote_keys(self, keys: Mapping[bytes, RemoteSigner]) -> None:
        """Hold keys that a remote signer signs for (pubkey -> its signer).

        They pass every check and the record exactly as local keys do; only the signature
        is asked of the remote signer (``validator.signing.remote``) and verified.
        """
        await self._keys.add_remote(keys)
        self._keys_changed()

    def is_remote(self, pubkey: bytes) -> bool:
        return self._keys.is_remote(pubkey)

    async def remove_keys(self, pubkeys: Iterable[bytes]) -> list[bytes]:
        """Stop signing with these keys; returns the removed ones once nothing signs with them."""
        removed = await self._keys.remove(pubkeys)
        self._keys_changed()
        return removed

    def on_keys_changed(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` (in the event loop) each time keys are added or removed."""
        self._key_listeners.append(listener)

    def _keys_changed(self) -> None:
        for listener in self._key_listeners:
            listener()

    def pubkeys(self) -> list[bytes]:
        return self._keys.pubkeys()

    def has_key(self, pubkey: bytes) -> bool:
        return pubkey in self._keys

    # ------------------------------------------------------------------ blocks

    async def check_block(self, pubkey: bytes, slot: int) -> Refusal | None:
        """Would a block at ``slot`` be refused? Records nothing; None when it would not.

        The duty loop calls this before asking a beacon node for a block at all.
        A refusal here is logged and counted like a refused signature.
        """
        refusal = self._block_precheck(pubkey, slot)
        if refusal is None:
            try:
                verdict = await run_to_completion(self._record.block_verdict, pubkey, slot)
                refusal = _refused_by_record(verdict)
            except SlashingProtectionError as error:
                refusal = Refusal(RefusalReason.RECORD_UNAVAILABLE, str(error))
        if refusal is not None:
            self._refused(SigningKind.BLOCK, [pubkey], refusal, f"slot {slot}")
        return refusal

    async def block_allowed(self, pubkey: bytes, slot: int) -> bool:
        """``check_block`` as a yes/no."""
        return await self.check_block(pubkey, slot) is None

    async def sign_block(self, pubkey: bytes, produced: ProducedBlock) -> SignedBlock:
        """Check, record, then sign a (blinded) block; SigningRefusedError when refused."""
        kind = SigningKind.BLINDED_BLOCK if produced.blinded else SigningKind.BLOCK
        if produced.preset is not self.chain.preset:
            # A caller's mistake (blocks are read with the chain's preset), not the node's.
            raise TypeError(
                f"a {produced.preset.name}-preset block, but the chain runs the "
                f"{self.chain.preset.name} preset"
            )
        signature, root = await self._sign_block(kind, pubkey, produced.block, produced.fork)
        return SignedBlock(
            signature=signature, signing_root=root, signed=produced.signed(signature)
        )

    async def sign_block_header(self, pubkey: bytes, header: View, fork: ForkName) -> bytes:
        """``sign_block`` for a block known by its header (and fork) only: a remote
        signer's request. The same checks and record; the header's root is the block's."""
        signature, _ = await self._sign_block(SigningKind.BLOCK, pubkey, header, fork)
        return signature

    async def _sign_block(
        self, kind: SigningKind, pubkey: bytes, block: View, fork: ForkName
    ) -> tuple[bytes, bytes]:
        started = time.perf_counter()
        slot = int(block.slot)
        async with self._keys.hold([pubkey]) as hold:
            refusal = self._block_precheck(pubkey, slot, hold)
            root = b""
            if refusal is None:
                refusal = self._block_fork_check(fork, slot)
            if refusal is None:
                root = block_signing_root(self.chain, block)
                refusal = await self._record_block(pubkey, slot)
            if refusal is not None:
                self._refused(kind, [pubkey], refusal, f"slot {slot}")
                raise SigningRefusedError(kind, pubkey, refusal)
            signature = await self._sign_held(
                kind,
                hold,
                pubkey,
                root,
                lambda root: request_for(
                    SignType.BLOCK_V2, self.chain, block_header(block), root, version=fork
                ),
                f"slot {slot}",
            )
        BLOCK_SIGNING_SECONDS.observe(time.perf_counter() - started)
        return signature, root

    def _block_precheck(
        self, pubkey: bytes, slot: int, hold: KeyHold | None = None
    ) -> Refusal | None:
        known = hold.holds(pubkey) if hold is not None else self.has_key(pubkey)
        if not known:
            return Refusal(RefusalReason.UNKNOWN_KEY, "the signer does not hold this key")
        refusal = check_block_slot(self.chain, slot, self._clock(), self.far_future_margin_epochs)
        if refusal is not None:
            return refusal
        try:
            self.chain.fork_at(self.chain.epoch_at_slot(slot))
        except UnsupportedForkError as error:
            return Refusal(RefusalReason.UNSUPPORTED_FORK, str(error))
        return None

    def _block_fork_check(self, fork: ForkName, slot: int) -> Refusal | None:
        expected = self.chain.fork_name_at(self.chain.epoch_at_slot(slot))
        if fork is not expected:
            return Refusal(
                RefusalReason.WRONG_FORK,
                f"a {fork.value} block for slot {slot}, where the chain is in {expected.value}",
            )
        return None

    async def _record_block(self, pubkey: bytes, slot: int) -> Refusal | None:
        try:
            verdict = await run_to_completion(self._record.record_block_verdict, pubkey, slot)
            return _refused_by_record(verdict)
        except SlashingProtectionError as error:
            return Refusal(RefusalReason.RECORD_UNAVAILABLE, str(error))

    # ------------------------------------------------------------------ attestations

    async def sign_attestations(
        self, requests: Sequence[AttestationRequest]
    ) -> list[SigningResult]:
        """Sign a batch of attestations (normally one slot's, for all keys); one result each.

        Every item is checked, the allowed ones are judged and recorded in one
        ``record_attestations`` call (one durable write), and only the recorded
        ones are signed, with one ``sign_many`` per distinct AttestationData.
        """
        kind = SigningKind.ATTESTATION
        started = time.perf_counter()
        now = self._clock()
        results: list[SigningResult | None] = [None] * len(requests)
        # A slot's keys mostly attest to one AttestationData: judge each distinct one once.
        judged: dict[bytes, _JudgedData] = {}
        async with self._keys.hold(request.pubkey for request in requests) as hold:
            candidates: list[tuple[int, _JudgedData]] = []
            for index, request in enumerate(requests):
                data_root = bytes(request.data.hash_tree_root())
                verdict = judged.get(data_root)
                if verdict is None:
                    verdict = judged[data_root] = self._judge_attestation_data(request.data, now)
                refusal = verdict.refusal
                if not hold.holds(request.pubkey):
                    refusal = Refusal(
                        RefusalReason.UNKNOWN_KEY, "the signer does not hold this key"
                    )
                if refusal is None:
                    candidates.append((index, verdict))
                else:
                    results[index] = SigningResult(request.pubkey, refusal=refusal)
            recorded = await self._record_attestations(requests, candidates, results)
            data_of = {verdict.signing_root: verdict.data for _, verdict in recorded}
            signed = await self._sign_batch_held(
                kind,
                hold,
                [(requests[index].pubkey, verdict.signing_root) for index, verdict in recorded],
                lambda root: request_for(SignType.ATTESTATION, self.chain, data_of[root], root),
            )
            for (index, _), result in zip(recorded, signed, strict=True):
                results[index] = result
        final = [result for result in results if result is not None]
        assert len(final) == len(requests)
        slots = sorted({verdict.slot for verdict in judged.values()})
        self._log_batch_refusals(kind, final, "slot " + ", ".join(map(str, slots)))
        ATTESTATION_BATCH_SECONDS.observe(time.perf_counter() - started)
        return final

    def _judge_attestation_data(self, data: View, now: float) -> _JudgedData:
        """The checks that depend on the AttestationData alone, and its signing root."""
        slot, source, target = int(data.slot), int(data.source.epoch), int(data.target.epoch)
        refusal = check_attestation_epochs(
            self.chain, source, target, now, self.far_future_margin_epochs
        )
        signing_root = b""
        if refusal is None:
            try:
                signing_root = attestation_signing_root(self.chain, data)
            except UnsupportedForkError as error:
                refusal = Refusal(RefusalReason.UNSUPPORTED_FORK, str(error))
        return _JudgedData(data, slot, source, target, signing_root, refusal)

    async def _record_attestations(
        self,
        requests: Sequence[AttestationRequest],
        candidates: list[tuple[int, _JudgedData]],
        results: list[SigningResult | None],
    ) -> list[tuple[int, _JudgedData]]:
        """Record the candidates in one call; fill refusals into ``results``; the recorded."""
        if not candidates:
            return []
        items = [
            (requests[index].pubkey, verdict.source, verdict.target)
            for index, verdict in candidates
        ]
        try:
            verdicts = await run_to_completion(self._record.record_attestations_verdicts, items)
        except SlashingProtectionError as error:
            unavailable = Refusal(RefusalReason.RECORD_UNAVAILABLE, str(error))
            for index, _ in candidates:
                results[index] = SigningResult(requests[index].pubkey, refusal=unavailable)
            return []
        recorded = []
        for candidate, verdict in zip(candidates, verdicts, strict=True):
            refusal = _refused_by_record(verdict)
            if refusal is None:
                recorded.append(candidate)
            else:
                index = candidate[0]
                results[index] = SigningResult(requests[index].pubkey, refusal=refusal)
        return recorded

    # ------------------------------------------------------------------ not slashable, one key

    async def sign_randao_reveal(self, pubkey: bytes, epoch: int) -> bytes:
        return await self._sign_one(
            SigningKind.RANDAO_REVEAL,
            pubkey,
            lambda: randao_reveal_signing_root(self.chain, epoch),
            self._remote(SignType.RANDAO_REVEAL, RandaoReveal(epoch=epoch)),
        )

    async def sign_selection_proof(self, pubkey: bytes, slot: int) -> bytes:
        """The attestation aggregator selection proof for ``slot``."""
        return await self._sign_one(
            SigningKind.SELECTION_PROOF,
            pubkey,
            lambda: selection_proof_signing_root(self.chain, slot),
            self._remote(SignType.AGGREGATION_SLOT, AggregationSlot(slot=slot)),
        )

    async def sign_sync_committee_message(
        self, pubkey: bytes, slot: int, beacon_block_root: bytes
    ) -> bytes:
        return await self._sign_one(
            SigningKind.SYNC_COMMITTEE_MESSAGE,
            pubkey,
            lambda: sync_committee_message_signing_root(self.chain, slot, beacon_block_root),
            self._remote(
                SignType.SYNC_COMMITTEE_MESSAGE,
                SyncCommitteeMessageData(beacon_block_root=beacon_block_root, slot=slot),
            ),
        )

    async def sign_sync_committee_selection_proof(
        self, pubkey: bytes, slot: int, subcommittee_index: int
    ) -> bytes:
        return await self._sign_one(
            SigningKind.SYNC_COMMITTEE_SELECTION_PROOF,
            pubkey,
            lambda: sync_committee_selection_proof_signing_root(
                self.chain, slot, subcommittee_index
            ),
            self._remote(
                SignType.SYNC_COMMITTEE_SELECTION_PROOF,
                SyncAggregatorSelectionData(slot=slot, subcommittee_index=subcommittee_index),
            ),
        )

    async def sign_aggregate_and_proof(self, pubkey: bytes, aggregate_and_proof: View) -> View:
        """An ``electra.AggregateAndProof`` of the chain's preset (``gloas.AggregateAndProof``
        in a Gloas slot); returns its ``SignedAggregateAndProof``."""
        slot = int(aggregate_and_proof.aggregate.data.slot)
        fork_containers = gloas if self.chain.is_gloas_slot(slot) else electra
        containers = fork_containers.containers(self.chain.preset)
        _require_preset_type(aggregate_and_proof, containers.AggregateAndProof, self.chain)
        signature = await self._sign_one(
            SigningKind.AGGREGATE_AND_PROOF,
            pubkey,
            lambda: aggregate_and_proof_signing_root(self.chain, aggregate_and_proof),
            lambda root: request_for(
                SignType.AGGREGATE_AND_PROOF_V2,
                self.chain,
                aggregate_and_proof,
                root,
                version=self.chain.fork_name_at(
                    self.chain.epoch_at_slot(int(aggregate_and_proof.aggregate.data.slot))
                ),
            ),
        )
        return containers.SignedAggregateAndProof(message=aggregate_and_proof, signature=signature)

    async def sign_contribution_and_proof(
        self, pubkey: bytes, contribution_and_proof: View
    ) -> View:
        """A ``ContributionAndProof`` of the chain's preset; returns its signed form."""
        containers = altair.containers(self.chain.preset)
        _require_preset_type(contribution_and_proof, containers.ContributionAndProof, self.chain)
        signature = await self._sign_one(
            SigningKind.CONTRIBUTION_AND_PROOF,
            pubkey,
            lambda: contribution_and_proof_signing_root(self.chain, contribution_and_proof),
            self._remote(SignType.SYNC_COMMITTEE_CONTRIBUTION_AND_PROOF, contribution_and_proof),
        )
        return containers.SignedContributionAndProof(
            message=contribution_and_proof, signature=signature
        )

    async def sign_voluntary_exit(self, pubkey: bytes, voluntary_exit: View) -> SignedVoluntaryExit:
        """Signed under EIP-7044's rule, with the wall clock's epoch as the current one."""
        current_epoch = max(0, wall_clock_epoch(self.chain, self._clock()))
        signature = await self._sign_one(
            SigningKind.VOLUNTARY_EXIT,
            pubkey,
            lambda: voluntary_exit_signing_root(
                self.chain, voluntary_exit, current_epoch=current_epoch
            ),
            lambda root: request_for(
                SignType.VOLUNTARY_EXIT,
                self.chain,
                voluntary_exit,
                root,
                exit_current_epoch=current_epoch,
            ),
        )
        return SignedVoluntaryExit(message=voluntary_exit, signature=signature)

    async def sign_validator_registration(
        self, pubkey: bytes, registration: View
    ) -> SignedValidatorRegistrationV1:
        signature = await self._sign_one(
            SigningKind.VALIDATOR_REGISTRATION,
            pubkey,
            lambda: validator_registration_signing_root(self.chain, registration),
            self._remote(SignType.VALIDATOR_REGISTRATION, registration),
        )
        return SignedValidatorRegistrationV1(message=registration, signature=signature)

    # ------------------------------------------------------------------ Gloas (ePBS), not slashable

    async def sign_payload_attestations(
        self, requests: Sequence[PayloadAttestationRequest]
    ) -> list[SigningResult]:
        """PTC votes (PayloadAttestationData under DOMAIN_PTC_ATTESTER), one sign_many per data."""
        kind = SigningKind.PAYLOAD_ATTESTATION
        by_root: dict[bytes, View] = {}
        jobs = []
        for request in requests:
            refusal = self._gloas_only(int(request.data.slot))
            if refusal is not None:
                results = [SigningResult(r.pubkey, refusal=refusal) for r in requests]
                self._log_batch_refusals(kind, results)
                return results
            root = payload_attestation_signing_root(self.chain, request.data)
            by_root[root] = request.data
            jobs.append((request.pubkey, root))
        return await self._sign_batch(
            kind,
            jobs,
            lambda root: request_for(
                SignType.PAYLOAD_ATTESTATION_MESSAGE,
                self.chain,
                by_root[root],
                root,
                version=self._fork_of_slot(int(by_root[root].slot)),
            ),
        )

    async def sign_execution_payload_envelope(
        self, pubkey: bytes, envelope: View, slot: int
    ) -> View:
        """A self-built block's ExecutionPayloadEnvelope (DOMAIN_BEACON_BUILDER, the block's
        fork); returns the SignedExecutionPayloadEnvelope."""
        containers = gloas.containers(self.chain.preset)
        _require_preset_type(envelope, containers.ExecutionPayloadEnvelope, self.chain)
        self._refuse_outside_gloas(SigningKind.EXECUTION_PAYLOAD_ENVELOPE, pubkey, slot)
        signature = await self._sign_one(
            SigningKind.EXECUTION_PAYLOAD_ENVELOPE,
            pubkey,
            lambda: execution_payload_envelope_signing_root(self.chain, envelope, slot),
            lambda root: request_for(
                SignType.EXECUTION_PAYLOAD_ENVELOPE,
                self.chain,
                envelope,
                root,
                version=self._fork_of_slot(slot),
            ),
        )
        return containers.SignedExecutionPayloadEnvelope(message=envelope, signature=signature)

    async def sign_proposer_preferences(
        self, pubkey: bytes, preferences: View
    ) -> gloas.SignedProposerPreferences:
        """ProposerPreferences under the fork of the proposal's epoch (signed one epoch ahead)."""
        proposal_slot = int(preferences.proposal_slot)
        self._refuse_outside_gloas(SigningKind.PROPOSER_PREFERENCES, pubkey, proposal_slot)
        signature = await self._sign_one(
            SigningKind.PROPOSER_PREFERENCES,
            pubkey,
            lambda: proposer_preferences_signing_root(self.chain, preferences),
            lambda root: request_for(
                SignType.PROPOSER_PREFERENCES,
                self.chain,
                preferences,
                root,
                version=self._fork_of_slot(proposal_slot),
            ),
        )
        return gloas.SignedProposerPreferences(message=preferences, signature=signature)

    def _fork_of_slot(self, slot: int) -> ForkName:
        return self.chain.fork_name_at(self.chain.epoch_at_slot(slot))

    def _gloas_only(self, slot: int) -> Refusal | None:
        """A Gloas message for a slot before the chain's Gloas fork has no domain there."""
        if self.chain.is_gloas_slot(slot):
            return None
        return Refusal(
            RefusalReason.WRONG_FORK,
            f"slot {slot} is before the chain's Gloas fork (epoch {self.chain.gloas_fork_epoch})",
        )

    def _refuse_outside_gloas(self, kind: SigningKind, pubkey: bytes, slot: int) -> None:
        refusal = self._gloas_only(slot)
        if refusal is not None:
            self._refused(kind, [pubkey], refusal, f"slot {slot}")
            raise SigningRefusedError(kind, pubkey, refusal)

    # ------------------------------------------------------------------ not slashable, batches

    async def sign_selection_proofs(
        self, slot: int, pubkeys: Sequence[bytes]
    ) -> list[SigningResult]:
        """Every key's aggregator selection proof for ``slot`` (one shared root)."""
        kind = SigningKind.SELECTION_PROOF
        try:
            root = selection_proof_signing_root(self.chain, slot)
        except UnsupportedForkError as error:
            return self._refuse_unsupported_fork(kind, pubkeys, error)
        return await self._sign_batch(
            kind,
            [(pubkey, root) for pubkey in pubkeys],
            self._remote(SignType.AGGREGATION_SLOT, AggregationSlot(slot=slot)),
        )

    async def sign_sync_committee_messages(
        self, slot: int, beacon_block_root: bytes, pubkeys: Sequence[bytes]
    ) -> list[SigningResult]:
        """Every sync committee member's message for ``slot`` (one shared root)."""
        kind = SigningKind.SYNC_COMMITTEE_MESSAGE
        try:
            root = sync_committee_message_signing_root(self.chain, slot, beacon_block_root)
        except UnsupportedForkError as error:
            return self._refuse_unsupported_fork(kind, pubkeys, error)
        return await self._sign_batch(
            kind,
            [(pubkey, root) for pubkey in pubkeys],
            self._remote(
                SignType.SYNC_COMMITTEE_MESSAGE,
                SyncCommitteeMessageData(beacon_block_root=beacon_block_root, slot=slot),
            ),
        )

    async def sign_sync_committee_selection_proofs(
        self, requests: Sequence[SyncSelectionRequest]
    ) -> list[SigningResult]:
        kind = SigningKind.SYNC_COMMITTEE_SELECTION_PROOF
        roots: dict[tuple[int, int], bytes] = {}
        selections: dict[bytes, tuple[int, int]] = {}
        jobs = []
        try:
            for request in requests:
                key = (request.slot, request.subcommittee_index)
                if key not in roots:
                    roots[key] = sync_committee_selection_proof_signing_root(self.chain, *key)
                    selections[roots[key]] = key
                jobs.append((request.pubkey, roots[key]))
        except UnsupportedForkError as error:
            return self._refuse_unsupported_fork(
                kind, [request.pubkey for request in requests], error
            )

        def remote(root: bytes) -> SigningRequest:
            slot, subcommittee_index = selections[root]
            selection = SyncAggregatorSelectionData(
                slot=slot, subcommittee_index=subcommittee_index
            )
            return request_for(SignType.SYNC_COMMITTEE_SELECTION_PROOF, self.chain, selection, root)

        return await self._sign_batch(kind, jobs, remote)

    async def sign_validator_registrations(
        self, registrations: Sequence[View]
    ) -> list[SigningResult]:
        """ValidatorRegistrationV1 messages, each signed by the key it names."""
        by_root: dict[bytes, View] = {}
        jobs = []
        for registration in registrations:
            root = validator_registration_signing_root(self.chain, registration)
            by_root[root] = registration
            jobs.append((bytes(registration.pubkey), root))
        return await self._sign_batch(
            SigningKind.VALIDATOR_REGISTRATION,
            jobs,
            lambda root: request_for(
                SignType.VALIDATOR_REGISTRATION, self.chain, by_root[root], root
            ),
        )

    # ------------------------------------------------------------------ signing

    def _remote(self, sign_type: SignType, message: View) -> RemoteRequest:
        """The remote request for ``message`` at a root (its fork_info the chain's)."""
        return lambda root: request_for(sign_type, self.chain, message, root)

    async def _sign_one(
        self,
        kind: SigningKind,
        pubkey: bytes,
        signing_root: Callable[[], bytes],
        remote: RemoteRequest,
    ) -> bytes:
        async with self._keys.hold([pubkey]) as hold:
            refusal = None
            if not hold.holds(pubkey):
                refusal = Refusal(RefusalReason.UNKNOWN_KEY, "the signer does not hold this key")
            else:
                try:
                    root = signing_root()
                except UnsupportedForkError as error:
                    refusal = Refusal(RefusalReason.UNSUPPORTED_FORK, str(error))
            if refusal is not None:
                self._refused(kind, [pubkey], refusal)
                raise SigningRefusedError(kind, pubkey, refusal)
            return await self._sign_held(kind, hold, pubkey, root, remote)

    async def _sign_held(
        self,
        kind: SigningKind,
        hold: KeyHold,
        pubkey: bytes,
        root: bytes,
        remote: RemoteRequest,
        what: str = "",
    ) -> bytes:
        """Sign ``root`` with one held key, if it is still in the ring (a remote key: ask
        its signer with ``remote(root)`` and verify the answer)."""
        secret = (await hold.secrets([pubkey])).get(pubkey)
        if secret is None:
            refusal = Refusal(RefusalReason.KEY_REMOVED, "the key was removed before signing")
            self._refused(kind, [pubkey], refusal, what)
            raise SigningRefusedError(kind, pubkey, refusal)
        if isinstance(secret, RemoteSigner):
            try:
                signature = await secret.sign(pubkey, remote(root))
            except RemoteSigningError as error:
                self._refused(kind, [pubkey], error.refusal, what)
                raise SigningRefusedError(kind, pubkey, error.refusal) from None
        else:
            signature = await run_to_completion(crypto_backend.sign, secret, root)
        SIGNATURES.labels(kind.value).inc()
        return signature

    async def _sign_batch(
        self, kind: SigningKind, jobs: Sequence[tuple[bytes, bytes]], remote: RemoteRequest
    ) -> list[SigningResult]:
        """Sign (pubkey, signing root) jobs that need no record; one result per job."""
        async with self._keys.hold(pubkey for pubkey, _ in jobs) as hold:
            results: list[SigningResult | None] = [None] * len(jobs)
            known = []
            for index, (pubkey, _) in enumerate(jobs):
                if hold.holds(pubkey):
                    known.append(index)
                else:
                    results[index] = SigningResult(
                        pubkey,
                        refusal=Refusal(
                            RefusalReason.UNKNOWN_KEY, "the signer does not hold this key"
                        ),
                    )
            signed = await self._sign_batch_held(
                kind, hold, [jobs[index] for index in known], remote
            )
            for index, result in zip(known, signed, strict=True):
                results[index] = result
        final = [result for result in results if result is not None]
        self._log_batch_refusals(kind, final)
        return final

    async def _sign_batch_held(
        self,
        kind: SigningKind,
        hold: KeyHold,
        jobs: Sequence[tuple[bytes, bytes]],
        remote: RemoteRequest,
    ) -> list[SigningResult]:
        """Sign held (pubkey, root) jobs grouped by root; keys removed meanwhile are refused.

        Local keys sign in one ``sign_many`` per root while the remote keys' requests run
        at the same time (each remote signer caps its own requests in flight).
        """
        if not jobs:
            return []
        secrets = await hold.secrets(pubkey for pubkey, _ in jobs)
        groups: dict[bytes, list[int]] = defaultdict(list)
        members: dict[bytes, list[int]] = defaultdict(list)
        remote_jobs: list[tuple[int, RemoteSigner]] = []
        for index, (pubkey, root) in enumerate(jobs):
            secret = secrets.get(pubkey)
            if isinstance(secret, RemoteSigner):
                remote_jobs.append((index, secret))
            elif secret is not None:
                groups[root].append(secret)
                members[root].append(index)
        remote_results: dict[int, SigningResult] = {}
        if remote_jobs:
            bodies: dict[bytes, SigningRequest] = {}
            answers: list[tuple[int, RemoteSigner, bytes]] = []

            async def ask(index: int, signer: RemoteSigner) -> None:
                pubkey, root = jobs[index]
                if root not in bodies:
                    bodies[root] = remote(root)
                try:
                    answers.append(
                        (index, signer, await signer.sign(pubkey, bodies[root], verify=False))
                    )
                except RemoteSigningError as error:
                    remote_results[index] = SigningResult(pubkey, refusal=error.refusal)

            local = asyncio.ensure_future(
                run_to_completion(_sign_grouped, groups) if groups else _no_signatures()
            )
            await asyncio.gather(*(ask(index, signer) for index, signer in remote_jobs))
            # Every answer checked against its key and root before use, in one batch check.
            valid = await run_to_completion(
                verify_batch, [(*jobs[index], signature) for index, _, signature in answers]
            )
            for (index, signer, signature), ok in zip(answers, valid, strict=True):
                pubkey = jobs[index][0]
                if ok:
                    signer.accepted()
                    remote_results[index] = SigningResult(pubkey, signature=signature)
                else:
                    remote_results[index] = SigningResult(pubkey, refusal=signer.rejected().refusal)
            signatures = await local
        else:
            signatures = await run_to_completion(_sign_grouped, groups) if groups else {}
        results: list[SigningResult] = [
            SigningResult(
                pubkey,
                refusal=Refusal(RefusalReason.KEY_REMOVED, "the key was removed before signing"),
            )
            for pubkey, _ in jobs
        ]
        for root, indices in members.items():
            for index, signature in zip(indices, signatures[root], strict=True):
                results[index] = SigningResult(jobs[index][0], signature=signature)
        for index, result in remote_results.items():
            results[index] = result
        made = sum(len(indices) for indices in members.values()) + sum(
            1 for result in remote_results.values() if result.signed
        )
        if made:
            SIGNATURES.labels(kind.value).inc(made)
        return results

    # ------------------------------------------------------------------ refusals

    def _refuse_unsupported_fork(
        self, kind: SigningKind, pubkeys: Sequence[bytes], error: UnsupportedForkError
    ) -> list[SigningResult]:
        """A batch at an epoch of a fork this client does not know: every key refused, counted."""
        refusal = Refusal(RefusalReason.UNSUPPORTED_FORK, str(error))
        results = [SigningResult(pubkey, refusal=refusal) for pubkey in pubkeys]
        self._log_batch_refusals(kind, results)
        return results

    def _refused(
        self, kind: SigningKind, pubkeys: Sequence[bytes], refusal: Refusal, what: str = ""
    ) -> None:
        SIGNATURE_REFUSALS.labels(kind.value, refusal.reason.value).inc(len(pubkeys))
        subject = f" ({what})" if what else ""
        log.warning(
            "refused to sign %s%s with %s: %s",
            kind.value,
            subject,
            ", ".join(f"0x{pubkey.hex()[:12]}" for pubkey in pubkeys[:3])
            + (f" and {len(pubkeys) - 3} more" if len(pubkeys) > 3 else ""),
            refusal,
        )

    def _log_batch_refusals(
        self, kind: SigningKind, results: Sequence[SigningResult], what: str = ""
    ) -> None:
        """Count every refusal of a batch and log once per distinct reason and detail."""
        by_refusal: dict[Refusal, list[bytes]] = defaultdict(list)
        for result in results:
            if result.refusal is not None:
                by_refusal[result.refusal].append(result.pubkey)
        for refusal, pubkeys in by_refusal.items():
            self._refused(kind, pubkeys, refusal, what)


def _require_preset_type(message: View, expected: type, chain: ChainSpec) -> None:
    """Refuse (as the caller's mistake) an object built with another preset's container: its
    root is not the one this chain verifies."""
    if type(message) is not expected:
        raise TypeError(
            f"expected the {chain.preset.name} preset's {expected.__name__}, "
            f"got {type(message).__module__}.{type(message).__qualname__}"
        )
