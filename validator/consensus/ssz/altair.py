"""Altair sync-committee containers (unchanged up to Fulu).

The ones whose shape the preset fixes are built per preset by :func:`containers`;
the module's names of those are the mainnet preset's.
"""

from functools import cache
from types import SimpleNamespace

from remerkleable.bitfields import Bitvector
from remerkleable.complex import Container

from validator.consensus.ssz.preset import MAINNET, Preset, container_namespace
from validator.consensus.ssz.primitives import BLSSignature, Root, Slot, ValidatorIndex, uint64


class SyncCommitteeMessage(Container):
    slot: Slot
    beacon_block_root: Root
    validator_index: ValidatorIndex
    signature: BLSSignature


class SyncAggregatorSelectionData(Container):
    slot: Slot
    subcommittee_index: uint64


@cache
def containers(preset: Preset) -> SimpleNamespace:
    """The altair containers whose shape ``preset`` fixes, built once per preset."""
    subcommittee_size = preset.SYNC_COMMITTEE_SIZE // preset.SYNC_COMMITTEE_SUBNET_COUNT

    class SyncAggregate(Container):
        sync_committee_bits: Bitvector[preset.SYNC_COMMITTEE_SIZE]
        sync_committee_signature: BLSSignature

    class SyncCommitteeContribution(Container):
        slot: Slot
        beacon_block_root: Root
        subcommittee_index: uint64
        aggregation_bits: Bitvector[subcommittee_size]
        signature: BLSSignature

    class ContributionAndProof(Container):
        aggregator_index: ValidatorIndex
        contribution: SyncCommitteeContribution
        selection_proof: BLSSignature

    class SignedContributionAndProof(Container):
        message: ContributionAndProof
        signature: BLSSignature

    return container_namespace(__name__, locals())


_MAINNET = containers(MAINNET)
SyncAggregate = _MAINNET.SyncAggregate
SyncCommitteeContribution = _MAINNET.SyncCommitteeContribution
ContributionAndProof = _MAINNET.ContributionAndProof
SignedContributionAndProof = _MAINNET.SignedContributionAndProof
