"""Bellatrix execution payloads and blocks, built per preset by :func:`containers`
(the module's names are the mainnet preset's).

No public network runs Bellatrix any more; these exist because the only
real signed blinded block with a verifying proposer signature among the
known-answer vectors is a Bellatrix one, and it checks the whole proposer
signing path end to end.
"""

from functools import cache
from types import SimpleNamespace

from remerkleable.byte_arrays import ByteList, Bytes32, ByteVector
from remerkleable.complex import Container, List

from validator.consensus.ssz import altair, phase0
from validator.consensus.ssz.phase0 import Eth1Data, ProposerSlashing, SignedVoluntaryExit
from validator.consensus.ssz.preset import MAINNET, Preset, container_namespace
from validator.consensus.ssz.primitives import (
    BLSSignature,
    ExecutionAddress,
    Hash32,
    Root,
    Slot,
    ValidatorIndex,
    transaction_type,
    uint64,
    uint256,
)


@cache
def containers(preset: Preset) -> SimpleNamespace:
    """The bellatrix containers whose shape ``preset`` fixes, built once per preset."""
    Transaction = transaction_type(preset)
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
