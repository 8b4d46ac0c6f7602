"""Deneb execution payloads, blocks and block contents, built per preset by
:func:`containers` (the module's names are the mainnet preset's)."""

from functools import cache
from types import SimpleNamespace

from remerkleable.byte_arrays import ByteList, Bytes32, ByteVector
from remerkleable.complex import Container, List

from validator.consensus.ssz import altair, phase0
from validator.consensus.ssz.capella import SignedBLSToExecutionChange, Withdrawal
from validator.consensus.ssz.phase0 import Eth1Data, ProposerSlashing, SignedVoluntaryExit
from validator.consensus.ssz.preset import MAINNET, Preset, container_namespace
from validator.consensus.ssz.primitives import (
    BLSSignature,
    ExecutionAddress,
    Hash32,
    KZGCommitment,
    KZGProof,
    Root,
    Slot,
    ValidatorIndex,
    blob_type,
    transaction_type,
    uint64,
    uint256,
)


@cache
def containers(preset: Preset) -> SimpleNamespace:
    """The deneb containers whose shape ``preset`` fixes, built once per preset."""
    bls_changes = preset.MAX_BLS_TO_EXECUTION_CHANGES
    Transaction = transaction_type(preset)
    Blob = blob_type(preset)
    earlier = phase0.containers(preset)
    Attestation, AttesterSlashing, Deposit = (
        earlier.Attestation,
        earlier.AttesterSlashing,
        earlier.Deposit,
    )
    SyncAggregate = altair.containers(preset).SyncAggregate

    class ExecutionPayload(Container):
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
        transactions: List[Transaction, preset.MAX_TRANSACTIONS_PER_PAYLOAD]
        withdrawals: List[Withdrawal, preset.MAX_WITHDRAWALS_PER_PAYLOAD]
        blob_gas_used: uint64
        excess_blob_gas: uint64

    class ExecutionPayloadHeader(Container):
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
        transactions_root: Root
        withdrawals_root: Root
        blob_gas_used: uint64
        excess_blob_gas: uint64

    class BeaconBlockBody(Container):
        randao_reveal: BLSSignature
        eth1_data: Eth1Data
        graffiti: Bytes32
        proposer_slashings: List[ProposerSlashing, preset.MAX_PROPOSER_SLASHINGS]
        attester_slashings: List[AttesterSlashing, preset.MAX_ATTESTER_SLASHINGS]
        attestations: List[Attestation, preset.MAX_ATTESTATIONS]
        deposits: List[Deposit, preset.MAX_DEPOSITS]
        voluntary_exits: List[SignedVoluntaryExit, preset.MAX_VOLUNTARY_EXITS]
        sync_aggregate: SyncAggregate
        execution_payload: ExecutionPayload
        bls_to_execution_changes: List[SignedBLSToExecutionChange, bls_changes]
        blob_kzg_commitments: List[KZGCommitment, preset.MAX_BLOB_COMMITMENTS_PER_BLOCK]

    class BlindedBeaconBlockBody(Container):
        randao_reveal: BLSSignature
        eth1_data: Eth1Data
        graffiti: Bytes32
        proposer_slashings: List[ProposerSlashing, preset.MAX_PROPOSER_SLASHINGS]
        attester_slashings: List[AttesterSlashing, preset.MAX_ATTESTER_SLASHINGS]
        attestations: List[Attestation, preset.MAX_ATTESTATIONS]
        deposits: List[Deposit, preset.MAX_DEPOSITS]
        voluntary_exits: List[SignedVoluntaryExit, preset.MAX_VOLUNTARY_EXITS]
        sync_aggregate: SyncAggregate
        execution_payload_header: ExecutionPayloadHeader
        bls_to_execution_changes: List[SignedBLSToExecutionChange, bls_changes]
        blob_kzg_commitments: List[KZGCommitment, preset.MAX_BLOB_COMMITMENTS_PER_BLOCK]

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
        """What ``produceBlockV3`` returns for an unblinded Deneb block."""

        block: BeaconBlock
        kzg_proofs: List[KZGProof, preset.MAX_BLOB_COMMITMENTS_PER_BLOCK]
        blobs: List[Blob, preset.MAX_BLOB_COMMITMENTS_PER_BLOCK]

    class SignedBlockContents(Container):
        signed_block: SignedBeaconBlock
        kzg_proofs: List[KZGProof, preset.MAX_BLOB_COMMITMENTS_PER_BLOCK]
        blobs: List[Blob, preset.MAX_BLOB_COMMITMENTS_PER_BLOCK]

    return container_namespace(__name__, locals())


_MAINNET = containers(MAINNET)
ExecutionPayload = _MAINNET.ExecutionPayload
ExecutionPayloadHeader = _MAINNET.ExecutionPayloadHeader
BeaconBlockBody = _MAINNET.BeaconBlockBody
BlindedBeaconBlockBody = _MAINNET.BlindedBeaconBlockBody
BeaconBlock = _MAINNET.BeaconBlock
BlindedBeaconBlock = _MAINNET.BlindedBeaconBlock
SignedBeaconBlock = _MAINNET.SignedBeaconBlock
SignedBlindedBeaconBlock = _MAINNET.SignedBlindedBeaconBlock
BlockContents = _MAINNET.BlockContents
SignedBlockContents = _MAINNET.SignedBlockContents
