"""What the signer is asked and what it answers: message kinds, refusals, per-key results."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from remerkleable.core import View


class SigningKind(StrEnum):
    """A message kind, as the ``kind`` label of the signer's metrics spells it."""

    BLOCK = "block"
    BLINDED_BLOCK = "blinded_block"
    ATTESTATION = "attestation"
    AGGREGATE_AND_PROOF = "aggregate_and_proof"
    SELECTION_PROOF = "selection_proof"
    RANDAO_REVEAL = "randao_reveal"
    SYNC_COMMITTEE_MESSAGE = "sync_committee_message"
    SYNC_COMMITTEE_SELECTION_PROOF = "sync_committee_selection_proof"
    CONTRIBUTION_AND_PROOF = "contribution_and_proof"
    VOLUNTARY_EXIT = "voluntary_exit"
    VALIDATOR_REGISTRATION = "validator_registration"
    # Gloas (ePBS): not slashable, signed without a record entry.
    PAYLOAD_ATTESTATION = "payload_attestation"
    EXECUTION_PAYLOAD_ENVELOPE = "execution_payload_envelope"
    PROPOSER_PREFERENCES = "proposer_preferences"


class RefusalReason(StrEnum):
    """Why nothing was signed, as the ``reason`` label of the refusal metric spells it."""

    UNKNOWN_KEY = "unknown_key"
    """The signer does not hold this key."""
    KEY_REMOVED = "key_removed"
    """The key was removed while the request was in flight."""
    NOT_REGISTERED = "not_registered"
    """The slashing-protection record has no entry for the key."""
    SLASHABLE = "slashable"
    """The record refuses it: signing could be slashable (or is below a watermark)."""
    RECORD_WRITE_FAILED = "record_write_failed"
    """The record allowed it but could not be written durably."""
    RECORD_UNAVAILABLE = "record_unavailable"
    """The record raised (for example because it is closed)."""
    FAR_FUTURE = "far_future"
    """The slot or target epoch lies too far beyond the wall clock."""
    SOURCE_ABOVE_TARGET = "source_above_target"
    """An attestation whose source epoch is above its target epoch."""
    SOURCE_EQUALS_TARGET = "source_equals_target"
    """An attestation whose source epoch equals its target epoch (other than 0 at genesis)."""
    WRONG_FORK = "wrong_fork"
    """A block built for another fork than the chain's at the block's epoch."""
    UNSUPPORTED_FORK = "unsupported_fork"
    """The epoch lies in a fork this client does not know how to sign for."""
    REMOTE_SIGNER_UNAVAILABLE = "remote_signer_unavailable"
    """A remote key's signer could not be reached (or answered 5xx) in time."""
    REMOTE_SIGNER_REFUSED = "remote_signer_refused"
    """A remote key's signer refused (its own slashing protection, an unknown key...)."""
    REMOTE_SIGNATURE_INVALID = "remote_signature_invalid"
    """A remote key's signer answered a signature that does not verify: never used."""


@dataclass(frozen=True)
class Refusal:
    """Why one key's message was not signed. Every step of the signer answers refusals as
    values (in a `SigningResult`); only the single-key methods raise one, as
    `SigningRefusedError`, at the end."""

    reason: RefusalReason
    detail: str

    def __str__(self) -> str:
        return f"{self.reason.value}: {self.detail}"

    def result(self, pubkey: bytes) -> SigningResult:
        """This refusal as ``pubkey``'s answer."""
        return SigningResult(pubkey, refusal=self)


KEY_NOT_HELD = Refusal(RefusalReason.UNKNOWN_KEY, "the signer does not hold this key")
KEY_REMOVED = Refusal(RefusalReason.KEY_REMOVED, "the key was removed before signing")


class SigningRefusedError(Exception):
    """A single-key request was refused; nothing was signed."""

    def __init__(self, kind: SigningKind, pubkey: bytes, refusal: Refusal) -> None:
        super().__init__(f"refused to sign {kind.value} with 0x{pubkey.hex()}: {refusal}")
        self.kind = kind
        self.pubkey = pubkey
        self.refusal = refusal

    @property
    def reason(self) -> RefusalReason:
        return self.refusal.reason


@dataclass(frozen=True)
class SigningResult:
    """One key's answer in a batch: a signature, or the refusal (never both)."""

    pubkey: bytes
    signature: bytes | None = None
    refusal: Refusal | None = None

    @property
    def signed(self) -> bool:
        return self.signature is not None

    def signature_or_raise(self, kind: SigningKind) -> bytes:
        """The signature, or the refusal raised as `SigningRefusedError` (the single-key
        methods' answer)."""
        if self.signature is None:
            assert self.refusal is not None
            raise SigningRefusedError(kind, self.pubkey, self.refusal)
        return self.signature


@dataclass(frozen=True)
class AttestationRequest:
    """One key's attestation: the AttestationData the beacon node produced for its duty."""

    pubkey: bytes
    data: View


@dataclass(frozen=True)
class PayloadAttestationRequest:
    """One PTC seat holder's vote: the PayloadAttestationData the node produced for its slot."""

    pubkey: bytes
    validator_index: int
    data: View


@dataclass(frozen=True)
class SyncSelectionRequest:
    """One key's sync committee selection proof for one subcommittee at ``slot``."""

    pubkey: bytes
    slot: int
    subcommittee_index: int


@dataclass(frozen=True)
class SignedBlock:
    """A signed block: the signature and what the publish endpoint takes."""

    signature: bytes
    signing_root: bytes
    signed: View
    """SignedBeaconBlock, SignedBlindedBeaconBlock or SignedBlockContents (Deneb on)."""
