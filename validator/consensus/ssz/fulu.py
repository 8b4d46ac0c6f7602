"""Fulu: the Electra block and operations unchanged; block contents carry cell proofs (EIP-7594).

The block contents are built per preset by :func:`containers`; the module's names
are the mainnet preset's.
"""

from functools import cache
from types import SimpleNamespace

from remerkleable.complex import Container, List

from validator.consensus.ssz import electra
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
from validator.consensus.ssz.preset import MAINNET, Preset, container_namespace
from validator.consensus.ssz.primitives import KZGProof, blob_type


def max_cell_proofs_per_block(preset: Preset) -> int:
    """The Beacon API's Fulu KZGProofs limit: one proof per cell of every extended blob."""
    return preset.FIELD_ELEMENTS_PER_EXT_BLOB * preset.MAX_BLOB_COMMITMENTS_PER_BLOCK


@cache
def containers(preset: Preset) -> SimpleNamespace:
    """Fulu's containers for ``preset``: Electra's, with Fulu's block contents."""
    Blob = blob_type(preset)
    blocks = electra.containers(preset)
    BeaconBlock, SignedBeaconBlock = blocks.BeaconBlock, blocks.SignedBeaconBlock
    cell_proofs = max_cell_proofs_per_block(preset)

    class BlockContents(Container):
        """What ``produceBlockV3`` returns for an unblinded Fulu block."""

        block: BeaconBlock
        kzg_proofs: List[KZGProof, cell_proofs]
        blobs: List[Blob, preset.MAX_BLOB_COMMITMENTS_PER_BLOCK]

    class SignedBlockContents(Container):
        signed_block: SignedBeaconBlock
        kzg_proofs: List[KZGProof, cell_proofs]
        blobs: List[Blob, preset.MAX_BLOB_COMMITMENTS_PER_BLOCK]

    # Every Electra container is Fulu's too; only the block contents are new.
    return SimpleNamespace(**{**vars(blocks), **vars(container_namespace(__name__, locals()))})


_MAINNET = containers(MAINNET)
BlockContents = _MAINNET.BlockContents
SignedBlockContents = _MAINNET.SignedBlockContents

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
    "containers",
    "max_cell_proofs_per_block",
]
