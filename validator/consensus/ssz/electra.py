"""Electra containers: EIP-7549 attestations, execution requests, blocks (Fulu reuses them).

The ones whose shape the preset fixes are built per preset by :func:`containers`;
the module's names of those are the mainnet preset's.
"""

from functools import cache
from types import SimpleNamespace

from remerkleable.bitfields import Bitlist, Bitvector
from remerkleable.byte_arrays import Bytes32
from remerkleable.complex import Container, List

from validator.consensus.ssz import altair, deneb, phase0
from validator.consensus.ssz.capella import SignedBLSToExecutionChange
from validator.consensus.ssz.phase0 import (
    AttestationData,
    Eth1Data,
    ProposerSlashing,
    SignedVoluntaryExit,
)
from validator.consensus.ssz.preset import MAINNET, Preset, container_namespace
from validator.consensus.ssz.primitives import (
    BLSPubkey,
    BLSSignature,
    CommitteeIndex,
    ExecutionAddress,
    Gwei,
    KZGCommitment,
    KZGProof,
    Root,
    Slot,
    ValidatorIndex,
    blob_type,
    uint64,
)


class SingleAttestation(Container):
    committee_index: CommitteeIndex
    attester_index: ValidatorIndex
    data: AttestationData
    signature: BLSSignature


class DepositRequest(Container):
    pubkey: BLSPubkey
    withdrawal_credentials: Bytes32
    amount: Gwei
    signature: BLSSignature
    index: uint64


class WithdrawalRequest(Container):
    source_address: ExecutionAddress
    validator_pubkey: BLSPubkey
    amount: Gwei


class ConsolidationRequest(Container):
    source_address: ExecutionAddress
    source_pubkey: BLSPubkey
    target_pubkey: BLSPubkey


@cache
def containers(preset: Preset) -> SimpleNamespace:
    """The electra containers whose shape ``preset`` fixes, built once per preset."""
    bls_changes = preset.MAX_BLS_TO_EXECUTION_CHANGES
    Blob = blob_type(preset)
    Deposit = phase0.containers(preset).Deposit
    SyncAggregate = altair.containers(preset).SyncAggregate
    payloads = deneb.containers(preset)
    ExecutionPayload, ExecutionPayloadHeader = (
        payloads.ExecutionPayload,
        payloads.ExecutionPayloadHeader,
    )

    attesters_per_slot = preset.MAX_VALIDATORS_PER_COMMITTEE * preset.MAX_COMMITTEES_PER_SLOT

    class Attestation(Container):
        aggregation_bits: Bitlist[attesters_per_slot]
        data: AttestationData
        signature: BLSSignature
        committee_bits: Bitvector[preset.MAX_COMMITTEES_PER_SLOT]

    class IndexedAttestation(Container):
        attesting_indices: List[ValidatorIndex, attesters_per_slot]
        data: AttestationData
        signature: BLSSignature

    class AttesterSlashing(Container):
        attestation_1: IndexedAttestation
        attestation_2: IndexedAttestation

    class AggregateAndProof(Container):
        aggregator_index: ValidatorIndex
        aggregate: Attestation
        selection_proof: BLSSignature

    class SignedAggregateAndProof(Container):
        message: AggregateAndProof
        signature: BLSSignature

    class ExecutionRequests(Container):
        deposits: List[DepositRequest, preset.MAX_DEPOSIT_REQUESTS_PER_PAYLOAD]
        withdrawals: List[WithdrawalRequest, preset.MAX_WITHDRAWAL_REQUESTS_PER_PAYLOAD]
        consolidations: List[
            ConsolidationRequest, preset.MAX_CONSOLIDATION_REQUESTS_PER_PAYLOAD
        ]

    class BeaconBlockBody(Container):
        randao_reveal: BLSSignature
        eth1_data: Eth1Data
        graffiti: Bytes32
        proposer_slashings: List[ProposerSlashing, preset.MAX_PROPOSER_SLASHINGS]
        attester_slashings: List[AttesterSlashing, preset.MAX_ATTESTER_SLASHINGS_ELECTRA]
        attestations: List[Attestation, preset.MAX_ATTESTATIONS_ELECTRA]
        deposits: List[Deposit, preset.MAX_DEPOSITS]
        voluntary_exits: List[SignedVoluntaryExit, preset.MAX_VOLUNTARY_EXITS]
        sync_aggregate: SyncAggregate
        execution_payload: ExecutionPayload
        bls_to_execution_changes: List[SignedBLSToExecutionChange, bls_changes]
        blob_kzg_commitments: List[KZGCommitment, preset.MAX_BLOB_COMMITMENTS_PER_BLOCK]
        execution_requests: ExecutionRequests

    class BlindedBeaconBlockBody(Container):
        randao_reveal: BLSSignature
        eth1_data: Eth1Data
        graffiti: Bytes32
        proposer_slashings: List[ProposerSlashing, preset.MAX_PROPOSER_SLASHINGS]
        attester_slashings: List[AttesterSlashing, preset.MAX_ATTESTER_SLASHINGS_ELECTRA]
        attestations: List[Attestation, preset.MAX_ATTESTATIONS_ELECTRA]
        deposits: List[Deposit, preset.MAX_DEPOSITS]
        voluntary_exits: List[SignedVoluntaryExit, preset.MAX_VOLUNTARY_EXITS]
        sync_aggregate: SyncAggregate
        execution_payload_header: ExecutionPayloadHeader
        bls_to_execution_changes: List[SignedBLSToExecutionChange, bls_changes]
        blob_kzg_commitments: List[KZGCommitment, preset.MAX_BLOB_COMMITMENTS_PER_BLOCK]
        execution_requests: ExecutionRequests

    class BeaconBlock(Container):
        slot: Slot
        proposer_index: ValidatorIndex
        parent_root: Root
        state_root: Root
        body: BeaconBlockBody

    class BlindedBeaconBlock(Container):
        slot: Slot
        proposer_index: ValidatorIndex
        parent_root: Root
        state_root: Root
        body: BlindedBeaconBlockBody

    class SignedBeaconBlock(Container):
        message: BeaconBlock
        signature: BLSSignature

    class SignedBlindedBeaconBlock(Container):
        message: BlindedBeaconBlock
        signature: BLSSignature

    class BlockContents(Container):
        """What ``produceBlockV3`` returns for an unblinded Electra block."""

        block: BeaconBlock
        kzg_proofs: List[KZGProof, preset.MAX_BLOB_COMMITMENTS_PER_BLOCK]
        blobs: List[Blob, preset.MAX_BLOB_COMMITMENTS_PER_BLOCK]

    class SignedBlockContents(Container):
        signed_block: SignedBeaconBlock
        kzg_proofs: List[KZGProof, preset.MAX_BLOB_COMMITMENTS_PER_BLOCK]
        blobs: List[Blob, preset.MAX_BLOB_COMMITMENTS_PER_BLOCK]

    return container_namespace(__name__, locals())


_MAINNET = containers(MAINNET)
Attestation = _MAINNET.Attestation
IndexedAttestation = _MAINNET.IndexedAttestation
AttesterSlashing = _MAINNET.AttesterSlashing
AggregateAndProof = _MAINNET.AggregateAndProof
SignedAggregateAndProof = _MAINNET.SignedAggregateAndProof
ExecutionRequests = _MAINNET.ExecutionRequests
BeaconBlockBody = _MAINNET.BeaconBlockBody
BlindedBeaconBlockBody = _MAINNET.BlindedBeaconBlockBody
BeaconBlock = _MAINNET.BeaconBlock
BlindedBeaconBlock = _MAINNET.BlindedBeaconBlock
SignedBeaconBlock = _MAINNET.SignedBeaconBlock
SignedBlindedBeaconBlock = _MAINNET.SignedBlindedBeaconBlock
BlockContents = _MAINNET.BlockContents
SignedBlockContents = _MAINNET.SignedBlockContents
