"""The presets this client builds SSZ containers for: mainnet and minimal.

A preset fixes the shape of the containers (list limits, bitfield lengths) and
a few numbers of the chain's arithmetic. Every public network runs mainnet;
local development chains often run minimal (Lodestar's dev mode, many test
setups). Values from consensus-specs ``presets/{mainnet,minimal}/*.yaml`` at
v1.6.0 (gloas: 1.7.0b4), where minimal differs in MAX_COMMITTEES_PER_SLOT, SYNC_COMMITTEE_SIZE
and MAX_WITHDRAWALS_PER_PAYLOAD and PTC_SIZE among the shape values (and, since v1.6.0-beta.0,
no longer in MAX_BLOB_COMMITMENTS_PER_BLOCK, which was 32 before).

A node that reports a shape value differently from its preset runs another
preset, and the roots computed here would not be the ones its chain verifies, so
``validator.consensus.spec`` refuses it. Each shape value belongs to the fork
whose containers first use it (the preset file it comes from); later forks'
containers use it too. A chain that does not schedule that fork builds none of
those containers, so the value is only checked there.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from types import SimpleNamespace

from validator.consensus.forks import ForkName


@dataclass(frozen=True, eq=False)
class Preset:
    """One preset's values, named as in the consensus specs.

    Containers are built once per preset and cached by it; presets compare (and hash)
    by identity, which keeps that lookup as cheap as a dict access on every message.
    """

    name: str
    # phase0
    MAX_COMMITTEES_PER_SLOT: int
    MAX_VALIDATORS_PER_COMMITTEE: int
    DEPOSIT_CONTRACT_TREE_DEPTH: int  # a constant of the specs, the same in every preset
    MAX_PROPOSER_SLASHINGS: int
    MAX_ATTESTER_SLASHINGS: int
    MAX_ATTESTATIONS: int
    MAX_DEPOSITS: int
    MAX_VOLUNTARY_EXITS: int
    # altair
    SYNC_COMMITTEE_SIZE: int
    SYNC_COMMITTEE_SUBNET_COUNT: int  # a constant (altair validator.md), the same everywhere
    # bellatrix
    MAX_BYTES_PER_TRANSACTION: int
    MAX_TRANSACTIONS_PER_PAYLOAD: int
    BYTES_PER_LOGS_BLOOM: int
    MAX_EXTRA_DATA_BYTES: int
    # capella
    MAX_BLS_TO_EXECUTION_CHANGES: int
    MAX_WITHDRAWALS_PER_PAYLOAD: int
    # deneb
    MAX_BLOB_COMMITMENTS_PER_BLOCK: int
    FIELD_ELEMENTS_PER_BLOB: int
    BYTES_PER_FIELD_ELEMENT: int  # a constant (polynomial-commitments.md)
    # electra
    MAX_ATTESTER_SLASHINGS_ELECTRA: int
    MAX_ATTESTATIONS_ELECTRA: int
    MAX_DEPOSIT_REQUESTS_PER_PAYLOAD: int
    MAX_WITHDRAWAL_REQUESTS_PER_PAYLOAD: int
    MAX_CONSOLIDATION_REQUESTS_PER_PAYLOAD: int
    # fulu
    FIELD_ELEMENTS_PER_EXT_BLOB: int
    CELLS_PER_EXT_BLOB: int
    # gloas
    PTC_SIZE: int
    # Not shapes: the chain's arithmetic. The client takes these as the node serves them
    # (the simulated chain shortens mainnet's epochs); the simulated chain serves them.
    SLOTS_PER_EPOCH: int
    EPOCHS_PER_SYNC_COMMITTEE_PERIOD: int
    TARGET_COMMITTEE_SIZE: int

    def shape_values(self) -> dict[str, int]:
        """Every value that shapes a container, by its config name."""
        return {name: getattr(self, name) for name in SHAPE_VALUE_NAMES}


MAINNET = Preset(
    name="mainnet",
    MAX_COMMITTEES_PER_SLOT=64,
    MAX_VALIDATORS_PER_COMMITTEE=2048,
    DEPOSIT_CONTRACT_TREE_DEPTH=32,
    MAX_PROPOSER_SLASHINGS=16,
    MAX_ATTESTER_SLASHINGS=2,
    MAX_ATTESTATIONS=128,
    MAX_DEPOSITS=16,
    MAX_VOLUNTARY_EXITS=16,
    SYNC_COMMITTEE_SIZE=512,
    SYNC_COMMITTEE_SUBNET_COUNT=4,
    MAX_BYTES_PER_TRANSACTION=2**30,
    MAX_TRANSACTIONS_PER_PAYLOAD=2**20,
    BYTES_PER_LOGS_BLOOM=256,
    MAX_EXTRA_DATA_BYTES=32,
    MAX_BLS_TO_EXECUTION_CHANGES=16,
    MAX_WITHDRAWALS_PER_PAYLOAD=16,
    MAX_BLOB_COMMITMENTS_PER_BLOCK=4096,
    FIELD_ELEMENTS_PER_BLOB=4096,
    BYTES_PER_FIELD_ELEMENT=32,
    MAX_ATTESTER_SLASHINGS_ELECTRA=1,
    MAX_ATTESTATIONS_ELECTRA=8,
    MAX_DEPOSIT_REQUESTS_PER_PAYLOAD=8192,
    MAX_WITHDRAWAL_REQUESTS_PER_PAYLOAD=16,
    MAX_CONSOLIDATION_REQUESTS_PER_PAYLOAD=2,
    FIELD_ELEMENTS_PER_EXT_BLOB=8192,
    CELLS_PER_EXT_BLOB=128,
    PTC_SIZE=512,
    SLOTS_PER_EPOCH=32,
    EPOCHS_PER_SYNC_COMMITTEE_PERIOD=256,
    TARGET_COMMITTEE_SIZE=128,
)

# Written as its differences from mainnet, so each one is visible; every other value of
# presets/minimal/*.yaml (v1.6.0) equals mainnet's.
MINIMAL = replace(
    MAINNET,
    name="minimal",
    MAX_COMMITTEES_PER_SLOT=4,
    SYNC_COMMITTEE_SIZE=32,
    MAX_WITHDRAWALS_PER_PAYLOAD=4,
    SLOTS_PER_EPOCH=8,
    EPOCHS_PER_SYNC_COMMITTEE_PERIOD=8,
    TARGET_COMMITTEE_SIZE=4,
    PTC_SIZE=16,
)

PRESETS: dict[str, Preset] = {preset.name: preset for preset in (MAINNET, MINIMAL)}
"""Every preset this client has containers for, by its PRESET_BASE name."""

_NOT_SHAPES = {
    "name",
    "SLOTS_PER_EPOCH",
    "EPOCHS_PER_SYNC_COMMITTEE_PERIOD",
    "TARGET_COMMITTEE_SIZE",
}

SHAPE_VALUE_NAMES: tuple[str, ...] = tuple(
    field.name for field in fields(Preset) if field.name not in _NOT_SHAPES
)
"""The config names of the values that shape containers, in the order above (by fork)."""

_FIRST_OF_EACH_FORK: dict[str, ForkName] = {
    "MAX_COMMITTEES_PER_SLOT": ForkName.PHASE0,
    "SYNC_COMMITTEE_SIZE": ForkName.ALTAIR,
    "MAX_BYTES_PER_TRANSACTION": ForkName.BELLATRIX,
    "MAX_BLS_TO_EXECUTION_CHANGES": ForkName.CAPELLA,
    "MAX_BLOB_COMMITMENTS_PER_BLOCK": ForkName.DENEB,
    "MAX_ATTESTER_SLASHINGS_ELECTRA": ForkName.ELECTRA,
    "FIELD_ELEMENTS_PER_EXT_BLOB": ForkName.FULU,
    "PTC_SIZE": ForkName.GLOAS,
}


def _forks_of_values() -> dict[str, ForkName]:
    forks: dict[str, ForkName] = {}
    fork = ForkName.PHASE0
    for name in SHAPE_VALUE_NAMES:  # in the order of the fields, grouped by fork
        fork = _FIRST_OF_EACH_FORK.get(name, fork)
        forks[name] = fork
    return forks


SHAPE_VALUE_FORK: dict[str, ForkName] = _forks_of_values()
"""The fork whose containers first use each shape value."""


def container_namespace(module: str, scope: dict[str, object]) -> SimpleNamespace:
    """The container classes a builder function of ``module`` defined, from its ``locals()``
    (not the ones it borrowed from other forks' builders)."""
    return SimpleNamespace(
        **{
            name: kind
            for name, kind in scope.items()
            if isinstance(kind, type)
            and kind.__module__ == module
            and "<locals>" in kind.__qualname__
        }
    )
