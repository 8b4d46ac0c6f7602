"""Fulu: the Electra block and operations unchanged; block contents carry cell proofs (EIP-7594)."""

from remerkleable.complex import Container, List

from validator.consensus.ssz.electra import (
    AggregateAndProof,
    Attestation,
    AttesterSlashing,
    BeaconBlock,
    BeaconBlockBody,
    BlindedBeaconBlock,
    BlindedBeaconBlockBody,
    ExecutionRequests,
    IndexedAttestation,
    SignedAggregateAndProof,
    SignedBeaconBlock,
    SignedBlindedBeaconBlock,
    SingleAttestation,
)
from validator.consensus.ssz.preset import (
    FIELD_ELEMENTS_PER_EXT_BLOB,
    MAX_BLOB_COMMITMENTS_PER_BLOCK,
)
from validator.consensus.ssz.primitives import Blob, KZGProof

# The Beacon API's Fulu KZGProofs limit: one proof per cell of every extended blob.
MAX_CELL_PROOFS_PER_BLOCK = FIELD_ELEMENTS_PER_EXT_BLOB * MAX_BLOB_COMMITMENTS_PER_BLOCK


class BlockContents(Container):
    """What ``produceBlockV3`` returns for an unblinded Fulu block."""

    block: BeaconBlock
    kzg_proofs: List[KZGProof, MAX_CELL_PROOFS_PER_BLOCK]
    blobs: List[Blob, MAX_BLOB_COMMITMENTS_PER_BLOCK]


class SignedBlockContents(Container):
    signed_block: SignedBeaconBlock
    kzg_proofs: List[KZGProof, MAX_CELL_PROOFS_PER_BLOCK]
    blobs: List[Blob, MAX_BLOB_COMMITMENTS_PER_BLOCK]


__all__ = [
    "AggregateAndProof",
    "Attestation",
    "AttesterSlashing",
    "BeaconBlock",
    "BeaconBlockBody",
    "BlindedBeaconBlock",
    "BlindedBeaconBlockBody",
    "BlockContents",
    "ExecutionRequests",
    "IndexedAttestation",
    "SignedAggregateAndProof",
    "SignedBeaconBlock",
    "SignedBlindedBeaconBlock",
    "SignedBlockContents",
    "SingleAttestation",
]
