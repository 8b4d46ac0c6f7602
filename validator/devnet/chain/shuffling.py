"""Who does what: the devnet's committees, proposers and sync committees.

The devnet's own deterministic shuffle (not the specs' swap-or-not): active
validators sorted by ``sha256(seed || index)``. A seed mixes the genesis
validators root, the duty kind, the epoch (or sync period) and, for attester
and proposer duties, the dependent root the Beacon API reports with them, so
that duties change exactly when their dependent root changes, as on a real
chain after a re-org.

The committee layout, the committee count per slot and the aggregator
selection are the specs' formulas (phase0 ``get_committee_count_per_slot``,
``compute_committee``, ``is_aggregator``; altair
``is_sync_committee_aggregator``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from hashlib import sha256

from validator.consensus.ssz.preset import MAINNET, Preset

ATTESTER_SEED = b"devnet-attester"
PROPOSER_SEED = b"devnet-proposer"
SYNC_COMMITTEE_SEED = b"devnet-sync-committee"
PTC_SEED = b"devnet-ptc"

MAX_EFFECTIVE_BALANCE_ELECTRA = 2048 * 10**9
DEVNET_EFFECTIVE_BALANCE = 32 * 10**9
"""Every devnet validator's effective balance (no rewards or penalties are simulated)."""


def derive_seed(purpose: bytes, genesis_validators_root: bytes, number: int, root: bytes) -> bytes:
    return sha256(purpose + genesis_validators_root + number.to_bytes(8, "little") + root).digest()


def shuffle(seed: bytes, indices: Sequence[int]) -> list[int]:
    """``indices`` in the order of ``sha256(seed || index)``: deterministic, unbiased enough."""
    return sorted(indices, key=lambda index: sha256(seed + index.to_bytes(8, "little")).digest())


def committee_count_per_slot(
    active_count: int, slots_per_epoch: int, preset: Preset = MAINNET
) -> int:
    """get_committee_count_per_slot."""
    per_slot = active_count // slots_per_epoch // preset.TARGET_COMMITTEE_SIZE
    return max(1, min(preset.MAX_COMMITTEES_PER_SLOT, per_slot))


@dataclass(frozen=True)
class AttesterAssignment:
    """One validator's attester duty in an epoch (the fields of the API's AttesterDuty)."""

    validator_index: int
    slot: int
    committee_index: int
    committee_length: int
    committees_at_slot: int
    validator_committee_index: int


class EpochCommittees:
    """The attester committees of one epoch: every active validator in exactly one."""

    def __init__(
        self,
        epoch: int,
        slots_per_epoch: int,
        shuffled_indices: Sequence[int],
        preset: Preset = MAINNET,
    ) -> None:
        self.epoch = epoch
        self.slots_per_epoch = slots_per_epoch
        count = len(shuffled_indices)
        self.committees_per_slot = committee_count_per_slot(count, slots_per_epoch, preset)
        total = self.committees_per_slot * slots_per_epoch
        self._committees = [
            tuple(shuffled_indices[count * k // total : count * (k + 1) // total])
            for k in range(total)
        ]
        self._assignments: dict[int, AttesterAssignment] = {}
        first_slot = epoch * slots_per_epoch
        for k, members in enumerate(self._committees):
            slot = first_slot + k // self.committees_per_slot
            committee_index = k % self.committees_per_slot
            for position, validator in enumerate(members):
                self._assignments[validator] = AttesterAssignment(
                    validator_index=validator,
                    slot=slot,
                    committee_index=committee_index,
                    committee_length=len(members),
                    committees_at_slot=self.committees_per_slot,
                    validator_committee_index=position,
                )

    def committee(self, slot: int, committee_index: int) -> tuple[int, ...] | None:
        """The members of committee ``committee_index`` at ``slot``, None when there is none."""
        slot_in_epoch = slot - self.epoch * self.slots_per_epoch
        if not 0 <= slot_in_epoch < self.slots_per_epoch:
            return None
        if not 0 <= committee_index < self.committees_per_slot:
            return None
        return self._committees[slot_in_epoch * self.committees_per_slot + committee_index]

    def assignment(self, validator_index: int) -> AttesterAssignment | None:
        return self._assignments.get(validator_index)

    def assignments(self) -> list[AttesterAssignment]:
        return list(self._assignments.values())


def compute_attester_committees(
    seed: bytes,
    epoch: int,
    slots_per_epoch: int,
    active_indices: Sequence[int],
    preset: Preset = MAINNET,
) -> EpochCommittees:
    return EpochCommittees(epoch, slots_per_epoch, shuffle(seed, active_indices), preset)


def compute_proposer(seed: bytes, slot: int, active_indices: Sequence[int]) -> int:
    """The proposer of ``slot``: a uniform draw over the active validators."""
    digest = sha256(seed + slot.to_bytes(8, "little")).digest()
    return active_indices[int.from_bytes(digest[:8], "little") % len(active_indices)]


def compute_balance_weighted_selection(
    indices: Sequence[int], effective_balances: Sequence[int], seed: bytes, size: int
) -> list[int]:
    """gloas beacon-chain.md ``compute_balance_weighted_selection`` with ``shuffle_indices``
    false (as ``compute_ptc`` calls it): walk ``indices`` in order, keep each with a chance
    of its effective balance over MAX_EFFECTIVE_BALANCE_ELECTRA, until ``size`` are kept
    (duplicates allowed)."""
    max_random_value = 2**16 - 1
    total = len(indices)
    if total == 0:
        raise ValueError("no candidates")
    selected: list[int] = []
    position = 0
    random_bytes = b""
    while len(selected) < size:
        offset = position % 16 * 2
        if offset == 0:
            random_bytes = sha256(seed + (position // 16).to_bytes(8, "little")).digest()
        candidate = position % total
        weight = effective_balances[candidate] * max_random_value
        random_value = int.from_bytes(random_bytes[offset : offset + 2], "little")
        if weight >= MAX_EFFECTIVE_BALANCE_ELECTRA * random_value:
            selected.append(indices[candidate])
        position += 1
    return selected


def compute_ptc(
    epoch_seed: bytes, slot: int, slot_committees: Sequence[Sequence[int]], size: int
) -> tuple[int, ...]:
    """gloas ``compute_ptc``: the slot's committees concatenated in order, then PTC_SIZE
    balance-weighted draws, seeded by ``sha256(seed || slot)`` (the devnet's epoch seed in
    place of ``get_seed(state, epoch, DOMAIN_PTC_ATTESTER)``)."""
    indices = [member for committee in slot_committees for member in committee]
    seed = sha256(epoch_seed + slot.to_bytes(8, "little")).digest()
    balances = [DEVNET_EFFECTIVE_BALANCE] * len(indices)
    return tuple(compute_balance_weighted_selection(indices, balances, seed, size))


def compute_sync_committee(
    seed: bytes, active_indices: Sequence[int], size: int = MAINNET.SYNC_COMMITTEE_SIZE
) -> tuple[int, ...]:
    """SYNC_COMMITTEE_SIZE members; with fewer validators than seats, each sits several times."""
    order = shuffle(seed, active_indices)
    return tuple(order[position % len(order)] for position in range(size))


def selection_value(selection_proof: bytes) -> int:
    """bytes_to_uint64(hash(selection_proof)[0:8])."""
    return int.from_bytes(sha256(selection_proof).digest()[:8], "little")


def is_aggregator(
    committee_length: int, selection_proof: bytes, target_aggregators_per_committee: int
) -> bool:
    """phase0 is_aggregator."""
    modulo = max(1, committee_length // target_aggregators_per_committee)
    return selection_value(selection_proof) % modulo == 0


def is_sync_committee_aggregator(
    selection_proof: bytes,
    target_aggregators_per_sync_subcommittee: int,
    preset: Preset = MAINNET,
) -> bool:
    """altair is_sync_committee_aggregator."""
    modulo = max(
        1,
        preset.SYNC_COMMITTEE_SIZE
        // preset.SYNC_COMMITTEE_SUBNET_COUNT
        // target_aggregators_per_sync_subcommittee,
    )
    return selection_value(selection_proof) % modulo == 0
