"""Gloas: enshrined proposer-builder separation (EIP-7732) on progressive containers (EIP-7688).

The block no longer carries the execution payload: it commits to a bid, and the
payload travels in a separately signed ``ExecutionPayloadEnvelope``. A payload
timeliness committee attests to the payload's arrival; proposers publish their
preferences ahead of their slots.

EIP-7688 turns the block body, attestations, execution payloads, envelopes and
bids into progressive containers and their lists into progressive lists, whose
roots differ from the bounded forms of earlier forks. remerkleable's
``progressive`` module implements both (EIP-7495, EIP-7916); the test suite
proves every root here against the pinned consensus-specs pyspec.

Containers whose shape the preset fixes are built per preset by :func:`containers`;
the module's names of those are the mainnet preset's.
"""

from functools import cache
from types import SimpleNamespace
from typing import Any

from remerkleable.basic import boolean, uint8
from remerkleable.bitfields import Bitvector
from remerkleable.byte_arrays import ByteList, Bytes32, ByteVector
from remerkleable.complex import Container, List
from remerkleable.progressive import ProgressiveBitlist, ProgressiveContainer, ProgressiveList

from validator.consensus.ssz import altair, phase0
from validator.consensus.ssz.capella import SignedBLSToExecutionChange, Withdrawal
from validator.consensus.ssz.electra import (
    ConsolidationRequest,
    DepositRequest,
    WithdrawalRequest,
)
from validator.consensus.ssz.fulu import max_cell_proofs_per_block
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
    ExecutionAddress,
    Gwei,
    Hash32,
    KZGCommitment,
    KZGProof,
    Root,
    Slot,
    ValidatorIndex,
    blob_type,
    uint64,
    uint256,
)

BuilderIndex = uint64

BUILDER_INDEX_SELF_BUILD = 2**64 - 1
"""``bid.builder_index`` of a block whose proposer builds its own payload."""

G2_POINT_AT_INFINITY = b"\xc0" + bytes(95)
"""The signature of a self-built bid (the spec's ``bls.G2_POINT_AT_INFINITY``)."""


def _active_fields(width: int) -> list[int]:
    """The spec's ``active_fields(width=N)``: every one of the first N fields is present."""
    return [1] * width


class PayloadAttestationData(Container):
    beacon_block_root: Root
    slot: Slot
    payload_present: boolean
    blob_data_available: boolean


class PayloadAttestationMessage(Container):
    validator_index: ValidatorIndex
    data: PayloadAttestationData
    signature: BLSSignature


class ProposerPreferences(Container):
    dependent_root: Root
    proposal_slot: Slot
    validator_index: ValidatorIndex
    fee_recipient: ExecutionAddress
    target_gas_limit: uint64


class SignedProposerPreferences(Container):
    message: ProposerPreferences
    signature: BLSSignature


class BuilderDepositRequest(Container):
    pubkey: BLSPubkey
    withdrawal_credentials: Bytes32
    amount: Gwei
    signature: BLSSignature


class BuilderExitRequest(Container):
    source_address: ExecutionAddress
    pubkey: BLSPubkey


class ExecutionRequests(ProgressiveContainer(active_fields=_active_fields(5))):  # type: ignore[misc]
    deposits: ProgressiveList[DepositRequest]
    withdrawals: ProgressiveList[WithdrawalRequest]
    consolidations: ProgressiveList[ConsolidationRequest]
    builder_deposits: ProgressiveList[BuilderDepositRequest]
    builder_exits: ProgressiveList[BuilderExitRequest]


class ExecutionPayloadBid(ProgressiveContainer(active_fields=_active_fields(12))):  # type: ignore[misc]
    parent_block_hash: Hash32
    parent_block_root: Root
    block_hash: Hash32
    prev_randao: Bytes32
    fee_recipient: ExecutionAddress
    gas_limit: uint64
    builder_index: BuilderIndex
    slot: Slot
    value: Gwei
    execution_payment: Gwei
    blob_kzg_commitments: ProgressiveList[KZGCommitment]
    execution_requests_root: Root


class SignedExecutionPayloadBid(Container):
    message: ExecutionPayloadBid
    signature: BLSSignature


ByteProgressiveList: Any = ProgressiveList[uint8]
"""``Transaction`` and ``BlockAccessList``: byte strings of no fixed bound."""


@cache
def containers(preset: Preset) -> SimpleNamespace:
    """The Gloas containers whose shape ``preset`` fixes, built once per preset."""
    SyncAggregate = altair.containers(preset).SyncAggregate
    Deposit = phase0.containers(preset).Deposit
    Blob = blob_type(preset)
    cell_proofs = max_cell_proofs_per_block(preset)

    class Attestation(ProgressiveContainer(active_fields=_active_fields(4))):  # type: ignore[misc]
        aggregation_bits: ProgressiveBitlist
        data: AttestationData
        signature: BLSSignature
        committee_bits: Bitvector[preset.MAX_COMMITTEES_PER_SLOT]

    class IndexedAttestation(ProgressiveContainer(active_fields=_active_fields(3))):  # type: ignore[misc]
        attesting_indices: ProgressiveList[ValidatorIndex]
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

    class PayloadAttestation(ProgressiveContainer(active_fields=_active_fields(3))):  # type: ignore[misc]
        aggregation_bits: Bitvector[preset.PTC_SIZE]
        data: PayloadAttestationData
        signature: BLSSignature

    class IndexedPayloadAttestation(ProgressiveContainer(active_fields=_active_fields(3))):  # type: ignore[misc]
        attesting_indices: List[ValidatorIndex, preset.PTC_SIZE]
        data: PayloadAttestationData
        signature: BLSSignature

    class ExecutionPayload(ProgressiveContainer(active_fields=_active_fields(19))):  # type: ignore[misc]
        parent_hash: Hash32
        fee_recipient: ExecutionAddress
        state_root: Bytes32
        receipts_root: Bytes32
        logs_bloom: ByteVector[preset.BYTES_PER_LOGS_BLOOM]
        prev_randao: Bytes32
        block_number: uint64
        gas_limit: uint64
        gas_used: uint64
        timestamp: uint64
        extra_data: ByteList[preset.MAX_EXTRA_DATA_BYTES]
        base_fee_per_gas: uint256
        block_hash: Hash32
        transactions: ProgressiveList[ByteProgressiveList]
        withdrawals: ProgressiveList[Withdrawal]
        blob_gas_used: uint64
        excess_blob_gas: uint64
        block_access_list: ByteProgressiveList
        slot_number: uint64

    class ExecutionPayloadEnvelope(ProgressiveContainer(active_fields=_active_fields(5))):  # type: ignore[misc]
        payload: ExecutionPayload
        execution_requests: ExecutionRequests
        builder_index: BuilderIndex
        beacon_block_root: Root
        parent_beacon_block_root: Root

    class SignedExecutionPayloadEnvelope(Container):
        message: ExecutionPayloadEnvelope
        signature: BLSSignature

    class BeaconBlockBody(ProgressiveContainer(active_fields=_active_fields(13))):  # type: ignore[misc]
        randao_reveal: BLSSignature
        eth1_data: Eth1Data
        graffiti: Bytes32
        proposer_slashings: ProgressiveList[ProposerSlashing]
        attester_slashings: ProgressiveList[AttesterSlashing]
        attestations: ProgressiveList[Attestation]
        deposits: ProgressiveList[Deposit]
        voluntary_exits: ProgressiveList[SignedVoluntaryExit]
        sync_aggregate: SyncAggregate
        bls_to_execution_changes: ProgressiveList[SignedBLSToExecutionChange]
        signed_execution_payload_bid: SignedExecutionPayloadBid
        payload_attestations: ProgressiveList[PayloadAttestation]
        parent_execution_requests: ExecutionRequests

    class BeaconBlock(Container):
        slot: Slot
        proposer_index: ValidatorIndex
        parent_root: Root
        state_root: Root
        body: BeaconBlockBody

    class SignedBeaconBlock(Container):
        message: BeaconBlock
        signature: BLSSignature

    class BlockContents(Container):
        """What ``produceBlockV4`` returns for a self-built block with ``include_payload``."""

        block: BeaconBlock
        execution_payload_envelope: ExecutionPayloadEnvelope
        kzg_proofs: List[KZGProof, cell_proofs]
        blobs: List[Blob, preset.MAX_BLOB_COMMITMENTS_PER_BLOCK]

    class SignedExecutionPayloadEnvelopeContents(Container):
        """The envelope published with its blobs (``Eth-Blob-Data-Included: true``)."""

        signed_execution_payload_envelope: SignedExecutionPayloadEnvelope
        kzg_proofs: List[KZGProof, cell_proofs]
        blobs: List[Blob, preset.MAX_BLOB_COMMITMENTS_PER_BLOCK]

    return container_namespace(__name__, locals())


_MAINNET = containers(MAINNET)
Attestation = _MAINNET.Attestation
IndexedAttestation = _MAINNET.IndexedAttestation
AttesterSlashing = _MAINNET.AttesterSlashing
AggregateAndProof = _MAINNET.AggregateAndProof
SignedAggregateAndProof = _MAINNET.SignedAggregateAndProof
PayloadAttestation = _MAINNET.PayloadAttestation
IndexedPayloadAttestation = _MAINNET.IndexedPayloadAttestation
ExecutionPayload = _MAINNET.ExecutionPayload
ExecutionPayloadEnvelope = _MAINNET.ExecutionPayloadEnvelope
SignedExecutionPayloadEnvelope = _MAINNET.SignedExecutionPayloadEnvelope
BeaconBlockBody = _MAINNET.BeaconBlockBody
BeaconBlock = _MAINNET.BeaconBlock
SignedBeaconBlock = _MAINNET.SignedBeaconBlock
BlockContents = _MAINNET.BlockContents
SignedExecutionPayloadEnvelopeContents = _MAINNET.SignedExecutionPayloadEnvelopeContents
