"""SSZ aliases named as in the consensus specs."""

from remerkleable.basic import uint8, uint64, uint256
from remerkleable.byte_arrays import Bytes4, Bytes32, Bytes48, Bytes96, ByteVector

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
# Transaction and Blob take their lengths from the preset: see bellatrix.py and deneb.py.

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
    "uint8",
    "uint64",
    "uint256",
]
