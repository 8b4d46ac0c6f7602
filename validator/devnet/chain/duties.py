"""Duties on the devnet's current chain: attester committees, proposers, sync committees.

Attester and proposer duties are computed from the dependent root the Beacon
API reports with them (see ``shuffling``), on the canonical chain as it is
now; a re-org that changes a dependent root changes the duties. One exception
keeps the simulation sane: a slot that has started keeps the proposer it had
(``pin_proposer``), so a re-org never hands an ongoing slot to someone else
unless a fault mode asks for exactly that.
"""

from __future__ import annotations

from typing import Any

from validator.consensus.ssz.preset import MAINNET, Preset
from validator.devnet.chain.blocktree import BlockTree
from validator.devnet.chain.registry import ValidatorLifecycle
from validator.devnet.chain.shuffling import (
    ATTESTER_SEED,
    PROPOSER_SEED,
    PTC_SEED,
    SYNC_COMMITTEE_SEED,
    EpochCommittees,
    compute_attester_committees,
    compute_proposer,
    compute_ptc,
    compute_sync_committee,
    derive_seed,
)

_CACHE_EPOCHS = 8


class DutySchedule:
    def __init__(
        self,
        genesis_validators_root: bytes,
        validator_count: int,
        slots_per_epoch: int,
        epochs_per_sync_committee_period: int,
        lifecycle: ValidatorLifecycle,
        tree: BlockTree,
        preset: Preset = MAINNET,
    ) -> None:
        self.genesis_validators_root = genesis_validators_root
        self.preset = preset
        self.sync_subcommittee_size = (
            preset.SYNC_COMMITTEE_SIZE // preset.SYNC_COMMITTEE_SUBNET_COUNT
        )
        self.validator_count = validator_count
        self.slots_per_epoch = slots_per_epoch
        self.epochs_per_sync_committee_period = epochs_per_sync_committee_period
        self.lifecycle = lifecycle
        self.tree = tree
        self._committees: dict[tuple[int, bytes], EpochCommittees] = {}
        self._proposers: dict[tuple[int, bytes], tuple[int | None, ...]] = {}
        self._sync_committees: dict[int, tuple[int, ...]] = {}
        self._sync_positions: dict[int, dict[int, list[int]]] = {}
        self._active: dict[int, list[int]] = {}
        self.proposer_pins: dict[int, int] = {}
        self._ptcs: dict[tuple[int, bytes], tuple[int, ...]] = {}

    def active_indices(self, epoch: int) -> list[int]:
        active = self._active.get(epoch)
        if active is None:
            active = self.lifecycle.active_indices(self.validator_count, epoch)
            self._active[epoch] = active
            self._trim(self._active, epoch)
        return active

    def forget_active_sets(self) -> None:
        """Call after an exit is accepted: future active sets may shrink."""
        self._active.clear()

    # --- attesters ------------------------------------------------------------

    def attester_committees(self, epoch: int) -> tuple[bytes, EpochCommittees]:
        dependent_root = self.tree.attester_dependent_root(epoch)
        return dependent_root, self.attester_committees_for(epoch, dependent_root)

    def attester_committees_for(self, epoch: int, dependent_root: bytes) -> EpochCommittees:
        """The committees of ``epoch`` should its attester dependent root be ``dependent_root``."""
        key = (epoch, dependent_root)
        committees = self._committees.get(key)
        if committees is None:
            seed = derive_seed(ATTESTER_SEED, self.genesis_validators_root, epoch, dependent_root)
            committees = compute_attester_committees(
                seed, epoch, self.slots_per_epoch, self.active_indices(epoch), self.preset
            )
            self._committees[key] = committees
            self._trim(self._committees, epoch)
        return committees

    def committees_at(self, slot: int) -> EpochCommittees:
        """The committees at ``slot`` on the canonical chain."""
        return self.attester_committees(slot // self.slots_per_epoch)[1]

    def committees_for_vote(self, slot: int, beacon_block_root: bytes) -> EpochCommittees:
        """The committees an attestation to ``beacon_block_root`` at ``slot`` was made in.

        They are those of the chain the attestation votes for: after a re-org, an
        attestation made on the old fork is judged with the old fork's shuffling.
        """
        epoch = slot // self.slots_per_epoch
        dependent_slot = (epoch - 1) * self.slots_per_epoch - 1
        dependent_root = (
            self.tree.genesis.root
            if dependent_slot < 0
            else self.tree.ancestor_root_at_slot(beacon_block_root, dependent_slot)
        )
        if dependent_root is None:
            return self.committees_at(slot)
        return self.attester_committees_for(epoch, dependent_root)

    # --- payload timeliness committee (Gloas) ----------------------------------

    def ptc(self, slot: int) -> tuple[int, ...]:
        """The PTC of ``slot`` (PTC_SIZE seats, duplicates possible) on the canonical chain:
        drawn from the slot's committees, so it changes with the attester dependent root."""
        epoch = slot // self.slots_per_epoch
        dependent_root, committees = self.attester_committees(epoch)
        key = (slot, dependent_root)
        found = self._ptcs.get(key)
        if found is None:
            seed = derive_seed(PTC_SEED, self.genesis_validators_root, epoch, dependent_root)
            slot_committees = []
            index = 0
            while (committee := committees.committee(slot, index)) is not None:
                slot_committees.append(committee)
                index += 1
            found = compute_ptc(seed, slot, slot_committees, self.preset.PTC_SIZE)
            self._ptcs[key] = found
            for old in [k for k in self._ptcs if k[0] < slot - 4 * self.slots_per_epoch]:
                del self._ptcs[old]
        return found

    # --- proposers --------------------------------------------------------------

    def proposers(self, epoch: int) -> tuple[bytes, tuple[int | None, ...]]:
        """The dependent root and the proposer of every slot of ``epoch`` (None at slot 0)."""
        dependent_root = self.tree.proposer_dependent_root(epoch)
        key = (epoch, dependent_root)
        proposers = self._proposers.get(key)
        if proposers is None:
            seed = derive_seed(PROPOSER_SEED, self.genesis_validators_root, epoch, dependent_root)
            active = self.active_indices(epoch)
            first = epoch * self.slots_per_epoch
            proposers = tuple(
                None if slot == 0 else compute_proposer(seed, slot, active)
                for slot in range(first, first + self.slots_per_epoch)
            )
            self._proposers[key] = proposers
            self._trim(self._proposers, epoch)
        first = epoch * self.slots_per_epoch
        pinned = tuple(
            self.proposer_pins.get(first + offset, proposer)
            for offset, proposer in enumerate(proposers)
        )
        return dependent_root, pinned

    def proposer(self, slot: int) -> int | None:
        epoch = slot // self.slots_per_epoch
        return self.proposers(epoch)[1][slot - epoch * self.slots_per_epoch]

    def pin_proposer(self, slot: int, validator_index: int) -> None:
        self.proposer_pins[slot] = validator_index
        for old in [s for s in self.proposer_pins if s < slot - 4 * self.slots_per_epoch]:
            del self.proposer_pins[old]

    # --- sync committee ---------------------------------------------------------

    def sync_period(self, epoch: int) -> int:
        return epoch // self.epochs_per_sync_committee_period

    def sync_committee(self, period: int) -> tuple[int, ...]:
        committee = self._sync_committees.get(period)
        if committee is None:
            seed = derive_seed(SYNC_COMMITTEE_SEED, self.genesis_validators_root, period, b"")
            start_epoch = period * self.epochs_per_sync_committee_period
            committee = compute_sync_committee(
                seed, self.active_indices(start_epoch), self.preset.SYNC_COMMITTEE_SIZE
            )
            self._sync_committees[period] = committee
            positions: dict[int, list[int]] = {}
            for position, member in enumerate(committee):
                positions.setdefault(member, []).append(position)
            self._sync_positions[period] = positions
            for old in [p for p in self._sync_committees if abs(p - period) > 2]:
                del self._sync_committees[old]
                del self._sync_positions[old]
        return committee

    def sync_committee_for_message_slot(self, slot: int) -> tuple[int, ...]:
        """The committee whose members sign sync committee messages at ``slot``.

        That is the committee of the period of ``slot + 1`` (altair
        ``compute_subnets_for_sync_committee``): the last slot of a period is
        already signed by the next period's committee, because its aggregate
        goes into the first block of that period.
        """
        return self.sync_committee(self.sync_period((slot + 1) // self.slots_per_epoch))

    def sync_positions(self, period: int, validator_index: int) -> list[int]:
        """Every seat ``validator_index`` holds in the period's sync committee."""
        self.sync_committee(period)
        return self._sync_positions[period].get(validator_index, [])

    def _trim(self, cache: dict[Any, Any], epoch: int) -> None:
        if len(cache) <= 4 * _CACHE_EPOCHS:
            return
        for key in list(cache):
            key_epoch = key[0] if isinstance(key, tuple) else key
            if abs(key_epoch - epoch) > _CACHE_EPOCHS:
                del cache[key]
