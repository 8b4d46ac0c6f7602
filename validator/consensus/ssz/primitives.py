"""SSZ aliases named as in the consensus specs."""

from typing import Any

from remerkleable.basic import uint8, uint64, uint256
from remerkleable.byte_arrays import ByteList, Bytes4, Bytes32, Bytes48, Bytes96, ByteVector

from validator.consensus.ssz.preset import Preset

Slot = uint64
Epoch = uint64
CommitteeIndex = uint64
ValidatorIndex = uint64
WithdrawalIndex = uint64
Gwei = uint64
Root = Bytes32
Hash32 = Bytes32
Version = Bytes4
DomainType = Bytes4
Domain = Bytes32
BLSPubkey = Bytes48
BLSSignature = Bytes96
ExecutionAddress = ByteVector[20]
KZGCommitment = Bytes48
KZGProof = Bytes48


def transaction_type(preset: Preset) -> Any:
    """``Transaction``: its length limit is a preset value."""
    return ByteList[preset.MAX_BYTES_PER_TRANSACTION]


def blob_type(preset: Preset) -> Any:
    """``Blob``: its length comes from preset values."""
    return ByteVector[preset.BYTES_PER_FIELD_ELEMENT * preset.FIELD_ELEMENTS_PER_BLOB]


__all__ = [
    "BLSPubkey",
    "BLSSignature",
    "CommitteeIndex",
    "Domain",
    "DomainType",
    "Epoch",
    "ExecutionAddress",
    "Gwei",
    "Hash32",
    "KZGCommitment",
    "KZGProof",
    "Root",
    "Slot",
    "ValidatorIndex",
    "Version",
    "WithdrawalIndex",
    "blob_type",
    "transaction_type",
    "uint8",
    "uint64",
    "uint256",
]
