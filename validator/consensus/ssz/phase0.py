"""Phase0 containers a validator signs or that blocks carry (unchanged up to Fulu)."""

from remerkleable.bitfields import Bitlist
from remerkleable.complex import Container, List, Vector

from validator.consensus.ssz.preset import DEPOSIT_CONTRACT_TREE_DEPTH, MAX_VALIDATORS_PER_COMMITTEE
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


class IndexedAttestation(Container):
    attesting_indices: List[ValidatorIndex, MAX_VALIDATORS_PER_COMMITTEE]
    data: AttestationData
    signature: BLSSignature


class AttesterSlashing(Container):
    attestation_1: IndexedAttestation
    attestation_2: IndexedAttestation


class Attestation(Container):
    aggregation_bits: Bitlist[MAX_VALIDATORS_PER_COMMITTEE]
    data: AttestationData
    signature: BLSSignature


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


class Deposit(Container):
    proof: Vector[Root, DEPOSIT_CONTRACT_TREE_DEPTH + 1]
    data: DepositData


class VoluntaryExit(Container):
    epoch: Epoch
    validator_index: ValidatorIndex


class SignedVoluntaryExit(Container):
    message: VoluntaryExit
    signature: BLSSignature


class AggregateAndProof(Container):
    """The phase0..deneb form; Electra's lives in ``validator.consensus.ssz.electra``."""

    aggregator_index: ValidatorIndex
    aggregate: Attestation
    selection_proof: BLSSignature


class SignedAggregateAndProof(Container):
    message: AggregateAndProof
    signature: BLSSignature
