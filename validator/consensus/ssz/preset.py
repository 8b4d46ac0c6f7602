"""Mainnet preset values that fix the shape of the SSZ containers.

The containers in this package are built for the mainnet preset (the one every
public network and the Beacon API's maxItems use). A node that reports any of
these values differently runs another preset, and the roots computed here would
not be the ones its chain verifies, so ``validator.consensus.spec`` refuses it.
Values from consensus-specs ``presets/mainnet/*.yaml`` (v1.6.x).

Each value belongs to the fork whose containers first use it (the preset file it
comes from); later forks' containers use it too. A chain that does not schedule
that fork builds none of those containers, so the value is only checked there.
"""

from validator.consensus.forks import ForkName

# phase0
MAX_COMMITTEES_PER_SLOT = 64
MAX_VALIDATORS_PER_COMMITTEE = 2048
DEPOSIT_CONTRACT_TREE_DEPTH = 32
MAX_PROPOSER_SLASHINGS = 16
MAX_ATTESTER_SLASHINGS = 2
MAX_ATTESTATIONS = 128
MAX_DEPOSITS = 16
MAX_VOLUNTARY_EXITS = 16
# altair
SYNC_COMMITTEE_SIZE = 512
SYNC_COMMITTEE_SUBNET_COUNT = 4
# bellatrix
MAX_BYTES_PER_TRANSACTION = 2**30
MAX_TRANSACTIONS_PER_PAYLOAD = 2**20
BYTES_PER_LOGS_BLOOM = 256
MAX_EXTRA_DATA_BYTES = 32
# capella
MAX_BLS_TO_EXECUTION_CHANGES = 16
MAX_WITHDRAWALS_PER_PAYLOAD = 16
# deneb
MAX_BLOB_COMMITMENTS_PER_BLOCK = 4096
FIELD_ELEMENTS_PER_BLOB = 4096
BYTES_PER_FIELD_ELEMENT = 32
# electra
MAX_ATTESTER_SLASHINGS_ELECTRA = 1
MAX_ATTESTATIONS_ELECTRA = 8
MAX_DEPOSIT_REQUESTS_PER_PAYLOAD = 8192
MAX_WITHDRAWAL_REQUESTS_PER_PAYLOAD = 16
MAX_CONSOLIDATION_REQUESTS_PER_PAYLOAD = 2
# fulu
FIELD_ELEMENTS_PER_EXT_BLOB = 8192
CELLS_PER_EXT_BLOB = 128

SHAPE_PRESET: dict[str, int] = {
    name: value
    for name, value in dict(globals()).items()
    if name.isupper() and isinstance(value, int)
}
"""Every value above by its config name, for comparing with ``/eth/v1/config/spec``."""

_FIRST_OF_EACH_FORK: dict[str, ForkName] = {
    "MAX_COMMITTEES_PER_SLOT": ForkName.PHASE0,
    "SYNC_COMMITTEE_SIZE": ForkName.ALTAIR,
    "MAX_BYTES_PER_TRANSACTION": ForkName.BELLATRIX,
    "MAX_BLS_TO_EXECUTION_CHANGES": ForkName.CAPELLA,
    "MAX_BLOB_COMMITMENTS_PER_BLOCK": ForkName.DENEB,
    "MAX_ATTESTER_SLASHINGS_ELECTRA": ForkName.ELECTRA,
    "FIELD_ELEMENTS_PER_EXT_BLOB": ForkName.FULU,
}


def _forks_of_values() -> dict[str, ForkName]:
    forks: dict[str, ForkName] = {}
    fork = ForkName.PHASE0
    for name in SHAPE_PRESET:  # in the order of this file, grouped by fork
        fork = _FIRST_OF_EACH_FORK.get(name, fork)
        forks[name] = fork
    return forks


SHAPE_PRESET_FORK: dict[str, ForkName] = _forks_of_values()
"""The fork whose containers first use each value of SHAPE_PRESET."""
