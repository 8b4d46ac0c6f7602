"""The Gloas (ePBS) messages a validator signs: PTC votes, self-built envelopes, preferences.

None is slashable (only blocks and attestations are), so none has a record entry; each is
refused before any signature when its slot lies before the chain's Gloas fork, where its
domain does not exist. Domains and roots come from ``validator.consensus.signing_roots``:

- ``PayloadAttestationData`` under DOMAIN_PTC_ATTESTER, the fork of ``data.slot``;
- ``ExecutionPayloadEnvelope`` under DOMAIN_BEACON_BUILDER, the fork of the block's slot;
- ``ProposerPreferences`` under DOMAIN_PROPOSER_PREFERENCES, the fork of the proposal's
  epoch (preferences go out one epoch ahead, so the last Fulu epoch signs Gloas ones).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from remerkleable.core import View

from validator.consensus.forks import ForkName
from validator.consensus.signing_roots import (
    execution_payload_envelope_signing_root,
    payload_attestation_signing_root,
    proposer_preferences_signing_root,
)
from validator.consensus.spec import ChainSpec
from validator.consensus.ssz import gloas
from validator.signing.held_signing import HeldKeySigning
from validator.signing.refusals import report_batch_refusals, report_refusal
from validator.signing.types import (
    PayloadAttestationRequest,
    Refusal,
    RefusalReason,
    SigningKind,
    SigningRefusedError,
    SigningResult,
)
from validator.signing.web3signer import SignType, request_for


@dataclass(frozen=True)
class SignedMessage:
    """One signed Gloas message: the signature and the signed container it completes."""

    signature: bytes
    signed: View


class EpbsSigning:
    """Signs the Gloas kinds with the signer's held keys."""

    def __init__(self, chain: ChainSpec, signing: HeldKeySigning) -> None:
        self.chain = chain
        self._signing = signing

    async def sign_payload_attestations(
        self, requests: Sequence[PayloadAttestationRequest]
    ) -> list[SigningResult]:
        """Every request's vote; one signing pass per distinct data (a slot's PTC shares one)."""
        kind = SigningKind.PAYLOAD_ATTESTATION
        for request in requests:
            refusal = self._before_gloas(int(request.data.slot))
            if refusal is not None:
                results = [refusal.result(each.pubkey) for each in requests]
                report_batch_refusals(kind, results)
                return results
        by_root: dict[bytes, View] = {}
        jobs = []
        for request in requests:
            root = payload_attestation_signing_root(self.chain, request.data)
            by_root[root] = request.data
            jobs.append((request.pubkey, root))
        return await self._signing.sign_batch(
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
    ) -> SignedMessage:
        """The envelope of the proposer's own payload for its block at ``slot``."""
        kind = SigningKind.EXECUTION_PAYLOAD_ENVELOPE
        containers = gloas.containers(self.chain.preset)
        if type(envelope) is not containers.ExecutionPayloadEnvelope:
            raise TypeError(
                f"expected the {self.chain.preset.name} preset's ExecutionPayloadEnvelope, "
                f"got {type(envelope).__module__}.{type(envelope).__qualname__}"
            )
        self._refuse_before_gloas(kind, pubkey, slot)
        result = await self._signing.sign_one(
            kind,
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
        signature = result.signature_or_raise(kind)
        signed = containers.SignedExecutionPayloadEnvelope(message=envelope, signature=signature)
        return SignedMessage(signature, signed)

    async def sign_proposer_preferences(self, pubkey: bytes, preferences: View) -> SignedMessage:
        kind = SigningKind.PROPOSER_PREFERENCES
        proposal_slot = int(preferences.proposal_slot)
        self._refuse_before_gloas(kind, pubkey, proposal_slot)
        result = await self._signing.sign_one(
            kind,
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
        signature = result.signature_or_raise(kind)
        signed = gloas.SignedProposerPreferences(message=preferences, signature=signature)
        return SignedMessage(signature, signed)

    def _fork_of_slot(self, slot: int) -> ForkName:
        return self.chain.fork_name_at(self.chain.epoch_at_slot(slot))

    def _before_gloas(self, slot: int) -> Refusal | None:
        if self.chain.is_gloas_slot(slot):
            return None
        return Refusal(
            RefusalReason.WRONG_FORK,
            f"slot {slot} is before the chain's Gloas fork (epoch {self.chain.gloas_fork_epoch})",
        )

    def _refuse_before_gloas(self, kind: SigningKind, pubkey: bytes, slot: int) -> None:
        refusal = self._before_gloas(slot)
        if refusal is not None:
            report_refusal(kind, [pubkey], refusal, f"slot {slot}")
            raise SigningRefusedError(kind, pubkey, refusal)
