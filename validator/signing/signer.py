"""The signer: the one path from a message to a signature in the validator client.

Every message kind is signed here, so its domain and signing root are computed
in one place (``validator.consensus.signing_roots``), and this is the only caller of
``crypto_backend.sign`` and ``crypto_backend.sign_many`` (through the local keys'
signing method). Blocks and attestations are slashable; for them the order is fixed:

1. the signer holds the key (else ``unknown_key``, or ``key_removed`` for one removed
   while this process runs);
2. checks that need no record: the block's fork, the far-future guard,
   source not above target, and a signing root the chain's forks allow;
3. the slashing-protection record judges and durably records the message
   (one write for a whole attestation batch);
4. the key is checked again under the key lock, and only then signed.

A message refused or not recorded at any step is not signed. The steps live beside
this facade: ``blocks`` and ``attestations`` (the slashable paths), ``held_signing``
(the last step for every kind), ``methods`` (local and remote keys as two signing
methods), ``refusals`` (how a refusal is counted and logged). Refusals travel as values
(``SigningResult``); the single-key methods raise ``SigningRefusedError`` at the end.
Signing and record calls run in threads (they block); docs/signing.md describes the rules.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence

from remerkleable.core import View

from slashing_protection import SlashingProtectionRecord
from validator.consensus.forks import ForkName
from validator.consensus.signing_roots import (
    aggregate_and_proof_signing_root,
    contribution_and_proof_signing_root,
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
from validator.consensus.ssz.blocks import ProducedBlock
from validator.signing.attestations import AttestationSigning
from validator.signing.blocks import BlockSigning
from validator.signing.epbs import EpbsSigning
from validator.signing.guards import DEFAULT_FAR_FUTURE_MARGIN_EPOCHS, wall_clock_epoch
from validator.signing.held_signing import HeldKeySigning, SigningRootOf
from validator.signing.keys import SigningKeys
from validator.signing.methods import RemoteRequest
from validator.signing.refusals import report_batch_refusals, unsupported_fork
from validator.signing.remote import RemoteSigner
from validator.signing.types import (
    AttestationRequest,
    PayloadAttestationRequest,
    Refusal,
    SignedBlock,
    SigningKind,
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

SlashingRecord = SlashingProtectionRecord
"""The record the signer checks and writes (blocking calls): the file record or the shared
PostgreSQL one, behind slashing_protection's one protocol."""


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
        self._clock = clock
        self._keys = SigningKeys()
        self._signing = HeldKeySigning(self._keys)
        self._blocks = BlockSigning(
            chain,
            record,
            self._signing,
            far_future_margin_epochs=far_future_margin_epochs,
            clock=clock,
        )
        self._attestations = AttestationSigning(
            chain,
            record,
            self._signing,
            far_future_margin_epochs=far_future_margin_epochs,
            clock=clock,
        )
        self._epbs = EpbsSigning(chain, self._signing)
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

    async def precheck_block(self, pubkey: bytes, slot: int) -> Refusal | None:
        """Would a block at ``slot`` be refused? Records nothing; None when it would not.

        The duty loop calls this before asking a beacon node for a block at all (the
        record's own question is ``check_block``). A refusal here is logged and counted
        like a refused signature.
        """
        return await self._blocks.check(pubkey, slot)

    async def sign_block(self, pubkey: bytes, produced: ProducedBlock) -> SignedBlock:
        """Check, record, then sign a (blinded) block; SigningRefusedError when refused."""
        kind = SigningKind.BLINDED_BLOCK if produced.blinded else SigningKind.BLOCK
        if produced.preset is not self.chain.preset:
            # A caller's mistake (blocks are read with the chain's preset), not the node's.
            raise TypeError(
                f"a {produced.preset.name}-preset block, but the chain runs the "
                f"{self.chain.preset.name} preset"
            )
        result, root = await self._blocks.sign(kind, pubkey, produced.block, produced.fork)
        signature = result.signature_or_raise(kind)
        return SignedBlock(
            signature=signature, signing_root=root, signed=produced.signed(signature)
        )

    async def sign_block_header(self, pubkey: bytes, header: View, fork: ForkName) -> bytes:
        """``sign_block`` for a block known by its header (and fork) only: a remote
        signer's request. The same checks and record; the header's root is the block's."""
        result, _ = await self._blocks.sign(SigningKind.BLOCK, pubkey, header, fork)
        return result.signature_or_raise(SigningKind.BLOCK)

    # ------------------------------------------------------------------ attestations

    async def sign_attestations(
        self, requests: Sequence[AttestationRequest]
    ) -> list[SigningResult]:
        """Sign a batch of attestations (normally one slot's, for all keys); one result each
        (``validator.signing.attestations``: checked, recorded in one write, then signed)."""
        return await self._attestations.sign(requests)

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
        """PTC votes (``PayloadAttestationData``), one result each."""
        return await self._epbs.sign_payload_attestations(requests)

    async def sign_execution_payload_envelope(
        self, pubkey: bytes, envelope: View, slot: int
    ) -> View:
        """A self-built block's envelope; returns the ``SignedExecutionPayloadEnvelope``."""
        return (await self._epbs.sign_execution_payload_envelope(pubkey, envelope, slot)).signed

    async def sign_proposer_preferences(self, pubkey: bytes, preferences: View) -> View:
        """``ProposerPreferences``; returns the ``SignedProposerPreferences``."""
        return (await self._epbs.sign_proposer_preferences(pubkey, preferences)).signed

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
        signing_root: SigningRootOf,
        remote: RemoteRequest,
    ) -> bytes:
        result = await self._signing.sign_one(kind, pubkey, signing_root, remote)
        return result.signature_or_raise(kind)

    async def _sign_batch(
        self, kind: SigningKind, jobs: Sequence[tuple[bytes, bytes]], remote: RemoteRequest
    ) -> list[SigningResult]:
        return await self._signing.sign_batch(kind, jobs, remote)

    def _refuse_unsupported_fork(
        self, kind: SigningKind, pubkeys: Sequence[bytes], error: UnsupportedForkError
    ) -> list[SigningResult]:
        """A batch at an epoch of a fork this client does not know: every key refused, counted."""
        refusal = unsupported_fork(error)
        results = [refusal.result(pubkey) for pubkey in pubkeys]
        report_batch_refusals(kind, results)
        return results


def _require_preset_type(message: View, expected: type, chain: ChainSpec) -> None:
    """Refuse (as the caller's mistake) an object built with another preset's container: its
    root is not the one this chain verifies."""
    if type(message) is not expected:
        raise TypeError(
            f"expected the {chain.preset.name} preset's {expected.__name__}, "
            f"got {type(message).__module__}.{type(message).__qualname__}"
        )
