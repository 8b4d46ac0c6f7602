"""Phase0 containers a validator signs or that blocks carry (unchanged up to Fulu).

The ones whose shape the preset fixes are built per preset by :func:`containers`;
the module's names of those are the mainnet preset's.
"""

from functools import cache
from types import SimpleNamespace

from remerkleable.bitfields import Bitlist
from remerkleable.complex import Container, List, Vector

from validator.consensus.ssz.preset import MAINNET, Preset, container_namespace
from validator.consensus.ssz.primitives import (
    BLSPubkey,
    BLSSignature,
    CommitteeIndex,
    Domain,
    Epoch,
    Gwei,
    Root,
    Slot,
    ValidatorIndex,
    Version,
    uint64,
)


class Checkpoint(Container):
    epoch: Epoch
    root: Root


class AttestationData(Container):
    slot: Slot
    index: CommitteeIndex
    beacon_block_root: Root
    source: Checkpoint
    target: Checkpoint


class ForkData(Container):
    current_version: Version
    genesis_validators_root: Root


class SigningData(Container):
    object_root: Root
    domain: Domain


class BeaconBlockHeader(Container):
    slot: Slot
    proposer_index: ValidatorIndex
    parent_root: Root
    state_root: Root
    body_root: Root


class SignedBeaconBlockHeader(Container):
    message: BeaconBlockHeader
    signature: BLSSignature


class ProposerSlashing(Container):
    signed_header_1: SignedBeaconBlockHeader
    signed_header_2: SignedBeaconBlockHeader


class Eth1Data(Container):
    deposit_root: Root
    deposit_count: uint64
    block_hash: Root


class DepositData(Container):
    pubkey: BLSPubkey
    withdrawal_credentials: Root
    amount: Gwei
    signature: BLSSignature


class DepositMessage(Container):
    pubkey: BLSPubkey
    withdrawal_credentials: Root
    amount: Gwei


class VoluntaryExit(Container):
    epoch: Epoch
    validator_index: ValidatorIndex


class SignedVoluntaryExit(Container):
    message: VoluntaryExit
    signature: BLSSignature


@cache
def containers(preset: Preset) -> SimpleNamespace:
    """The phase0 containers whose shape ``preset`` fixes, built once per preset."""

    class IndexedAttestation(Container):
        attesting_indices: List[ValidatorIndex, preset.MAX_VALIDATORS_PER_COMMITTEE]
        data: AttestationData
        signature: BLSSignature

    class AttesterSlashing(Container):
        attestation_1: IndexedAttestation
        attestation_2: IndexedAttestation

    class Attestation(Container):
        aggregation_bits: Bitlist[preset.MAX_VALIDATORS_PER_COMMITTEE]
        data: AttestationData
        signature: BLSSignature

    class Deposit(Container):
        proof: Vector[Root, preset.DEPOSIT_CONTRACT_TREE_DEPTH + 1]
        data: DepositData

    class AggregateAndProof(Container):
        """The phase0..deneb form; Electra's lives in ``validator.consensus.ssz.electra``."""

        aggregator_index: ValidatorIndex
        aggregate: Attestation
        selection_proof: BLSSignature

    class SignedAggregateAndProof(Container):
        message: AggregateAndProof
        signature: BLSSignature

    return container_namespace(__name__, locals())


_MAINNET = containers(MAINNET)
IndexedAttestation = _MAINNET.IndexedAttestation
AttesterSlashing = _MAINNET.AttesterSlashing
Attestation = _MAINNET.Attestation
Deposit = _MAINNET.Deposit
AggregateAndProof = _MAINNET.AggregateAndProof
SignedAggregateAndProof = _MAINNET.SignedAggregateAndProof
