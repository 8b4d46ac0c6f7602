"""The judge's own signing roots: domains and signing data written here from the specs.

The simulated chain checks every signature the client sends against a signing
root it computes itself, without ``validator.consensus.domains`` or
``validator.consensus.signing_roots``: were the client's code wrong (a domain
type, a fork version, the object hashed), its signatures would not verify here
and the summary's ``invalid_signatures`` would say so. Only the SSZ container
definitions (the wire format both sides must share) and the chain's own
configuration come from elsewhere. See docs/testing.md.
"""

from __future__ import annotations

from hashlib import sha256

from remerkleable.core import View

from validator.consensus.chain_preset import SimulatedChainConfig, simulated_fork_version
from validator.consensus.forks import FORK_ORDER, ForkName

# Domain types (phase0 and altair beacon-chain.md, builder-specs' DOMAIN_APPLICATION_BUILDER).
BEACON_PROPOSER = bytes.fromhex("00000000")
BEACON_ATTESTER = bytes.fromhex("01000000")
RANDAO = bytes.fromhex("02000000")
VOLUNTARY_EXIT = bytes.fromhex("04000000")
SELECTION_PROOF = bytes.fromhex("05000000")
AGGREGATE_AND_PROOF = bytes.fromhex("06000000")
SYNC_COMMITTEE = bytes.fromhex("07000000")
SYNC_COMMITTEE_SELECTION_PROOF = bytes.fromhex("08000000")
CONTRIBUTION_AND_PROOF = bytes.fromhex("09000000")
APPLICATION_BUILDER = bytes.fromhex("00000001")
# Gloas beacon-chain.md.
BEACON_BUILDER = bytes.fromhex("0b000000")
PTC_ATTESTER = bytes.fromhex("0c000000")
PROPOSER_PREFERENCES = bytes.fromhex("0d000000")


def _uint64_root(value: int) -> bytes:
    """hash_tree_root of an SSZ uint64: its 8 little-endian bytes, zero-padded to 32."""
    return value.to_bytes(8, "little").ljust(32, b"\0")


def _pair_root(left: bytes, right: bytes) -> bytes:
    """hash_tree_root of a container of two 32-byte chunks."""
    return sha256(left + right).digest()


def compute_domain(domain_type: bytes, fork_version: bytes, genesis_root: bytes) -> bytes:
    # ForkData(current_version: Bytes4, genesis_validators_root: Root)
    fork_data_root = _pair_root(fork_version.ljust(32, b"\0"), genesis_root)
    return domain_type + fork_data_root[:28]


def signing_root(object_root: bytes, domain: bytes) -> bytes:
    """SigningData(object_root, domain)'s hash_tree_root."""
    return _pair_root(object_root, domain)


class JudgeRoots:
    """Signing roots of every kind the client sends, for one simulated chain."""

    def __init__(self, config: SimulatedChainConfig) -> None:
        self.genesis_validators_root = config.genesis_validators_root
        self.slots_per_epoch = config.slots_per_epoch
        # (first epoch, fork) in order; a fork that starts with its successor drops out.
        self._schedule = [(config.fork_epoch(fork), fork) for fork in FORK_ORDER]

    def fork_at(self, epoch: int) -> ForkName:
        current = ForkName.PHASE0
        for first_epoch, fork in self._schedule:
            if first_epoch <= epoch:
                current = fork
        return current

    def domain(self, domain_type: bytes, epoch: int) -> bytes:
        """get_domain at ``epoch``: the version of the fork in force then."""
        version = simulated_fork_version(self.fork_at(epoch))
        return compute_domain(domain_type, version, self.genesis_validators_root)

    def _epoch(self, slot: int) -> int:
        return slot // self.slots_per_epoch

    def block(self, block_root: bytes, slot: int) -> bytes:
        return signing_root(block_root, self.domain(BEACON_PROPOSER, self._epoch(slot)))

    def attestation(self, data_root: bytes, target_epoch: int) -> bytes:
        return signing_root(data_root, self.domain(BEACON_ATTESTER, target_epoch))

    def randao_reveal(self, epoch: int) -> bytes:
        return signing_root(_uint64_root(epoch), self.domain(RANDAO, epoch))

    def selection_proof(self, slot: int) -> bytes:
        return signing_root(_uint64_root(slot), self.domain(SELECTION_PROOF, self._epoch(slot)))

    def aggregate_and_proof(self, message: View) -> bytes:
        slot = int(message.aggregate.data.slot)
        domain = self.domain(AGGREGATE_AND_PROOF, self._epoch(slot))
        return signing_root(bytes(message.hash_tree_root()), domain)

    def sync_committee_message(self, slot: int, block_root: bytes) -> bytes:
        # The message signs the block root itself (an SSZ Root is its own hash_tree_root).
        return signing_root(block_root, self.domain(SYNC_COMMITTEE, self._epoch(slot)))

    def sync_selection_proof(self, slot: int, subcommittee_index: int) -> bytes:
        # SyncAggregatorSelectionData(slot, subcommittee_index)
        data_root = _pair_root(_uint64_root(slot), _uint64_root(subcommittee_index))
        domain = self.domain(SYNC_COMMITTEE_SELECTION_PROOF, self._epoch(slot))
        return signing_root(data_root, domain)

    def contribution_and_proof(self, message: View) -> bytes:
        slot = int(message.contribution.slot)
        domain = self.domain(CONTRIBUTION_AND_PROOF, self._epoch(slot))
        return signing_root(bytes(message.hash_tree_root()), domain)

    def voluntary_exit(self, message: View, current_epoch: int) -> bytes:
        """process_voluntary_exit in a state at ``current_epoch`` (EIP-7044 from Deneb)."""
        state_fork = self.fork_at(current_epoch)
        if state_fork.at_least(ForkName.DENEB):
            version = simulated_fork_version(ForkName.CAPELLA)
        else:
            # get_domain(state, ..., exit epoch): the state's previous version before its fork.
            index = FORK_ORDER.index(state_fork)
            fork_epoch = self._schedule[index][0]
            earlier = FORK_ORDER[index - 1] if index > 0 else state_fork
            fork = earlier if int(message.epoch) < fork_epoch else state_fork
            version = simulated_fork_version(fork)
        domain = compute_domain(VOLUNTARY_EXIT, version, self.genesis_validators_root)
        return signing_root(bytes(message.hash_tree_root()), domain)

    def payload_attestation(self, data_root: bytes, slot: int) -> bytes:
        """PayloadAttestationData: the fork of ``data.slot``'s epoch."""
        return signing_root(data_root, self.domain(PTC_ATTESTER, self._epoch(slot)))

    def execution_payload_envelope(self, envelope_root: bytes, slot: int) -> bytes:
        """``get_domain(state, DOMAIN_BEACON_BUILDER)`` in the block's state (its slot)."""
        return signing_root(envelope_root, self.domain(BEACON_BUILDER, self._epoch(slot)))

    def proposer_preferences(self, message: View) -> bytes:
        """``compute_fork_version(proposal_epoch)``: the proposal's fork, whenever signed."""
        epoch = self._epoch(int(message.proposal_slot))
        domain = self.domain(PROPOSER_PREFERENCES, epoch)
        return signing_root(bytes(message.hash_tree_root()), domain)

    def validator_registration(self, message: View) -> bytes:
        # Builder domain: genesis fork version, zero genesis_validators_root.
        genesis_version = simulated_fork_version(ForkName.PHASE0)
        domain = compute_domain(APPLICATION_BUILDER, genesis_version, b"\0" * 32)
        return signing_root(bytes(message.hash_tree_root()), domain)
