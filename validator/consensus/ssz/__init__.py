"""SSZ containers for everything a validator signs, with Beacon API codecs.

Fork-independent containers are importable from here; fork-specific ones from
their fork's module (``validator.consensus.ssz.electra.BeaconBlock``,
``validator.consensus.ssz.fulu.BlockContents``), or through
:func:`validator.consensus.ssz.blocks.block_types`. ``AggregateAndProof`` here is the
Electra form (EIP-7549), the one signed from Electra on.

Containers whose shape a preset fixes (list limits, bitfield lengths) exist per
preset: ``electra.containers(MINIMAL).AggregateAndProof``, ``block_types(fork,
preset)`` (presets in :mod:`validator.consensus.ssz.preset`). The names importable
from the modules are the mainnet preset's; a chain's preset is ``ChainSpec.preset``.

Containers take their fields as keyword arguments of plain Python values and
default every field to zero, so building one is a single call::

    AttestationData(slot=33, index=0, beacon_block_root=head,
                    source=Checkpoint(epoch=0, root=r0), target=Checkpoint(epoch=1, root=r1))
"""

from validator.consensus.ssz import (
    altair,
    bellatrix,
    builder,
    capella,
    deneb,
    electra,
    fulu,
    gloas,
    phase0,
)
from validator.consensus.ssz.altair import (
    ContributionAndProof,
    SignedContributionAndProof,
    SyncAggregate,
    SyncAggregatorSelectionData,
    SyncCommitteeContribution,
    SyncCommitteeMessage,
)
from validator.consensus.ssz.builder import SignedValidatorRegistrationV1, ValidatorRegistrationV1
from validator.consensus.ssz.codec import (
    SszInputError,
    from_json,
    from_ssz,
    hash_tree_root,
    to_json,
    to_ssz,
)
from validator.consensus.ssz.electra import (
    AggregateAndProof,
    SignedAggregateAndProof,
    SingleAttestation,
)
from validator.consensus.ssz.phase0 import (
    AttestationData,
    BeaconBlockHeader,
    Checkpoint,
    ForkData,
    SignedBeaconBlockHeader,
    SignedVoluntaryExit,
    SigningData,
    VoluntaryExit,
)
from validator.consensus.ssz.primitives import Epoch, Root, Slot

__all__ = [
    "AggregateAndProof",
    "AttestationData",
    "BeaconBlockHeader",
    "Checkpoint",
    "ContributionAndProof",
    "Epoch",
    "ForkData",
    "Root",
    "SignedAggregateAndProof",
    "SignedBeaconBlockHeader",
    "SignedContributionAndProof",
    "SignedValidatorRegistrationV1",
    "SignedVoluntaryExit",
    "SingleAttestation",
    "SigningData",
    "Slot",
    "SszInputError",
    "SyncAggregate",
    "SyncAggregatorSelectionData",
    "SyncCommitteeContribution",
    "SyncCommitteeMessage",
    "ValidatorRegistrationV1",
    "VoluntaryExit",
    "altair",
    "bellatrix",
    "builder",
    "capella",
    "deneb",
    "electra",
    "fulu",
    "gloas",
    "from_json",
    "from_ssz",
    "hash_tree_root",
    "phase0",
    "to_json",
    "to_ssz",
]
