"""Signature domains, as the consensus specs define them, for each message a validator signs.

A domain binds a signature to one message kind (the domain type), one fork
(the fork version) and one chain (the genesis validators root), so that a
signature made for one of them is worthless for any other.
"""

from __future__ import annotations

import functools
import hashlib

from remerkleable.core import View

from validator.consensus.forks import ForkName
from validator.consensus.spec import PROTOCOL_DOMAIN_TYPES, ChainSpec
from validator.consensus.ssz.phase0 import ForkData

DOMAIN_BEACON_PROPOSER = PROTOCOL_DOMAIN_TYPES["DOMAIN_BEACON_PROPOSER"]
DOMAIN_BEACON_ATTESTER = PROTOCOL_DOMAIN_TYPES["DOMAIN_BEACON_ATTESTER"]
DOMAIN_RANDAO = PROTOCOL_DOMAIN_TYPES["DOMAIN_RANDAO"]
DOMAIN_DEPOSIT = PROTOCOL_DOMAIN_TYPES["DOMAIN_DEPOSIT"]
DOMAIN_VOLUNTARY_EXIT = PROTOCOL_DOMAIN_TYPES["DOMAIN_VOLUNTARY_EXIT"]
DOMAIN_SELECTION_PROOF = PROTOCOL_DOMAIN_TYPES["DOMAIN_SELECTION_PROOF"]
DOMAIN_AGGREGATE_AND_PROOF = PROTOCOL_DOMAIN_TYPES["DOMAIN_AGGREGATE_AND_PROOF"]
DOMAIN_SYNC_COMMITTEE = PROTOCOL_DOMAIN_TYPES["DOMAIN_SYNC_COMMITTEE"]
DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF = PROTOCOL_DOMAIN_TYPES[
    "DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF"
]
DOMAIN_CONTRIBUTION_AND_PROOF = PROTOCOL_DOMAIN_TYPES["DOMAIN_CONTRIBUTION_AND_PROOF"]
DOMAIN_APPLICATION_BUILDER = PROTOCOL_DOMAIN_TYPES["DOMAIN_APPLICATION_BUILDER"]
DOMAIN_BEACON_BUILDER = PROTOCOL_DOMAIN_TYPES["DOMAIN_BEACON_BUILDER"]
DOMAIN_PTC_ATTESTER = PROTOCOL_DOMAIN_TYPES["DOMAIN_PTC_ATTESTER"]
DOMAIN_PROPOSER_PREFERENCES = PROTOCOL_DOMAIN_TYPES["DOMAIN_PROPOSER_PREFERENCES"]

ZERO_ROOT = bytes(32)


def compute_fork_data_root(current_version: bytes, genesis_validators_root: bytes) -> bytes:
    """hash_tree_root(ForkData(current_version, genesis_validators_root))."""
    _check_length("current_version", current_version, 4)
    _check_length("genesis_validators_root", genesis_validators_root, 32)
    return _fork_data_root(bytes(current_version), bytes(genesis_validators_root))


# A chain has a handful of (version, root) pairs, and building the SSZ container costs more
# than a signature's hashing: every signing root of a remote signer's request needs one.
@functools.lru_cache(maxsize=256)
def _fork_data_root(current_version: bytes, genesis_validators_root: bytes) -> bytes:
    fork_data = ForkData(
        current_version=current_version, genesis_validators_root=genesis_validators_root
    )
    return bytes(fork_data.hash_tree_root())


def compute_domain(
    domain_type: bytes, fork_version: bytes, genesis_validators_root: bytes = ZERO_ROOT
) -> bytes:
    """The domain type followed by the first 28 bytes of the fork data root."""
    _check_length("domain_type", domain_type, 4)
    return domain_type + compute_fork_data_root(fork_version, genesis_validators_root)[:28]


def compute_signing_root(ssz_object: View, domain: bytes) -> bytes:
    """hash_tree_root(SigningData(hash_tree_root(ssz_object), domain)): what is signed."""
    return compute_signing_root_from_object_root(bytes(ssz_object.hash_tree_root()), domain)


def compute_signing_root_from_object_root(object_root: bytes, domain: bytes) -> bytes:
    """The signing root for an object whose hash_tree_root is already known."""
    _check_length("object_root", object_root, 32)
    _check_length("domain", domain, 32)
    # hash_tree_root(SigningData(object_root, domain)): a container of two 32-byte fields is
    # the hash of its two chunks. Written out, because building the container costs more
    # than the hash (every signature, and every remote signer request, needs one).
    return hashlib.sha256(bytes(object_root) + bytes(domain)).digest()


def get_domain(chain: ChainSpec, domain_type: bytes, epoch: int) -> bytes:
    """The domain for ``domain_type`` under the fork in force at ``epoch`` on ``chain``."""
    return compute_domain(domain_type, chain.fork_version_at(epoch), chain.genesis_validators_root)


# --- one helper per message kind ------------------------------------------


def beacon_proposer_domain(chain: ChainSpec, slot: int) -> bytes:
    """Blocks and blinded blocks: the fork at the block's epoch."""
    return get_domain(chain, DOMAIN_BEACON_PROPOSER, chain.epoch_at_slot(slot))


def beacon_attester_domain(chain: ChainSpec, target_epoch: int) -> bytes:
    """Attestations: the fork at the target epoch (the spec's ``data.target.epoch``)."""
    return get_domain(chain, DOMAIN_BEACON_ATTESTER, target_epoch)


def randao_domain(chain: ChainSpec, epoch: int) -> bytes:
    """The RANDAO reveal for ``epoch``."""
    return get_domain(chain, DOMAIN_RANDAO, epoch)


def selection_proof_domain(chain: ChainSpec, slot: int) -> bytes:
    """The attestation aggregator selection proof over ``slot``."""
    return get_domain(chain, DOMAIN_SELECTION_PROOF, chain.epoch_at_slot(slot))


def aggregate_and_proof_domain(chain: ChainSpec, slot: int) -> bytes:
    """AggregateAndProof: the fork at the epoch of ``aggregate.data.slot``."""
    return get_domain(chain, DOMAIN_AGGREGATE_AND_PROOF, chain.epoch_at_slot(slot))


def sync_committee_domain(chain: ChainSpec, slot: int) -> bytes:
    """The sync committee message (a block root) for ``slot``."""
    return get_domain(chain, DOMAIN_SYNC_COMMITTEE, chain.epoch_at_slot(slot))


def sync_committee_selection_proof_domain(chain: ChainSpec, slot: int) -> bytes:
    """The sync aggregator selection proof over SyncAggregatorSelectionData at ``slot``."""
    return get_domain(chain, DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF, chain.epoch_at_slot(slot))


def contribution_and_proof_domain(chain: ChainSpec, slot: int) -> bytes:
    """ContributionAndProof: the fork at the epoch of ``contribution.slot``."""
    return get_domain(chain, DOMAIN_CONTRIBUTION_AND_PROOF, chain.epoch_at_slot(slot))


def voluntary_exit_domain(
    chain: ChainSpec, exit_epoch: int, *, current_epoch: int | None = None
) -> bytes:
    """Voluntary exits: the spec's ``get_domain`` in the state that includes the exit.

    The chain checks an exit with the fork of the state that includes it, which is
    at or after both ``exit_epoch`` and now. From Deneb on that check always uses
    CAPELLA_FORK_VERSION (EIP-7044), so exits signed once stay valid across later
    forks. Before Deneb it is ``get_domain(state, DOMAIN_VOLUNTARY_EXIT, exit.epoch)``:
    ``state.fork.previous_version`` when the exit's epoch is before the included
    fork's first epoch, else ``state.fork.current_version``; never an older fork's.
    """
    fork_version = voluntary_exit_fork_version(chain, exit_epoch, current_epoch=current_epoch)
    return compute_domain(DOMAIN_VOLUNTARY_EXIT, fork_version, chain.genesis_validators_root)


def voluntary_exit_fork_version(
    chain: ChainSpec, exit_epoch: int, *, current_epoch: int | None = None
) -> bytes:
    """The fork version of ``voluntary_exit_domain`` (a remote signer is told it as fork_info)."""
    inclusion_epoch = exit_epoch if current_epoch is None else max(exit_epoch, current_epoch)
    state_fork = chain.fork_at(inclusion_epoch)
    if state_fork.name.at_least(ForkName.DENEB):
        return chain.fork_version(ForkName.CAPELLA)
    if exit_epoch < state_fork.epoch:
        # state.fork.previous_version: the upgrade to state_fork set it to the version of the
        # fork just before (phase0 has none before it, and no epoch precedes its first).
        return chain.forks[state_fork.name.order - 1].version
    return state_fork.version


def application_builder_domain(chain: ChainSpec) -> bytes:
    """Builder registrations: the genesis fork version and a zero root, valid on every fork."""
    return compute_domain(DOMAIN_APPLICATION_BUILDER, chain.genesis_fork_version, ZERO_ROOT)


def ptc_attester_domain(chain: ChainSpec, slot: int) -> bytes:
    """PayloadAttestationData: the fork at the epoch of ``data.slot``."""
    return get_domain(chain, DOMAIN_PTC_ATTESTER, chain.epoch_at_slot(slot))


def beacon_builder_domain(chain: ChainSpec, slot: int) -> bytes:
    """ExecutionPayloadEnvelope (and bids): the fork at the epoch of the block's ``slot``."""
    return get_domain(chain, DOMAIN_BEACON_BUILDER, chain.epoch_at_slot(slot))


def proposer_preferences_domain(chain: ChainSpec, proposal_slot: int) -> bytes:
    """ProposerPreferences: the fork of the proposal's epoch, not of the epoch it is sent in."""
    return get_domain(chain, DOMAIN_PROPOSER_PREFERENCES, chain.epoch_at_slot(proposal_slot))


def _check_length(name: str, value: bytes, length: int) -> None:
    if not isinstance(value, (bytes, bytearray)) or len(value) != length:
        size = len(value) if isinstance(value, (bytes, bytearray)) else type(value).__name__
        raise ValueError(f"{name} must be {length} bytes, got {size}")
