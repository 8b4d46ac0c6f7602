"""Committees, proposers, sync committees and aggregator selection of the devnet."""

from __future__ import annotations

from hashlib import sha256

import pytest

from validator.consensus.ssz.preset import MINIMAL
from validator.devnet.chain.shuffling import (
    committee_count_per_slot,
    compute_attester_committees,
    compute_proposer,
    compute_sync_committee,
    derive_seed,
    is_aggregator,
    is_sync_committee_aggregator,
    shuffle,
)

SEED = sha256(b"test seed").digest()


@pytest.mark.parametrize(
    ("active", "slots_per_epoch", "expected"),
    [(16, 8, 1), (1024, 8, 1), (2048, 8, 2), (10_000, 8, 9), (10_000, 32, 2), (10**7, 8, 64)],
)
def test_committee_count_follows_the_spec_formula(
    active: int, slots_per_epoch: int, expected: int
) -> None:
    assert committee_count_per_slot(active, slots_per_epoch) == expected


@pytest.mark.parametrize(("count", "slots_per_epoch"), [(4, 8), (16, 4), (3000, 8)])
def test_every_active_validator_attests_exactly_once_per_epoch(
    count: int, slots_per_epoch: int
) -> None:
    active = list(range(0, 2 * count, 2))  # gaps: indices need not be contiguous
    committees = compute_attester_committees(SEED, 5, slots_per_epoch, active)
    seen = []
    for slot in range(5 * slots_per_epoch, 6 * slots_per_epoch):
        for index in range(committees.committees_per_slot):
            committee = committees.committee(slot, index)
            assert committee is not None
            for position, member in enumerate(committee):
                assignment = committees.assignment(member)
                assert assignment is not None
                assert (assignment.slot, assignment.committee_index) == (slot, index)
                assert assignment.validator_committee_index == position
                assert assignment.committee_length == len(committee)
            seen.extend(committee)
    assert sorted(seen) == active
    assert committees.committee(6 * slots_per_epoch, 0) is None
    assert committees.committee(5 * slots_per_epoch, committees.committees_per_slot) is None


def test_shuffles_are_deterministic_and_depend_on_the_seed() -> None:
    indices = list(range(100))
    assert shuffle(SEED, indices) == shuffle(SEED, indices)
    other = derive_seed(b"x", bytes(32), 1, bytes(32))
    assert shuffle(other, indices) != shuffle(SEED, indices)
    assert sorted(shuffle(SEED, indices)) == indices
    assert derive_seed(b"x", bytes(32), 1, bytes(32)) != derive_seed(b"x", bytes(32), 1, b"\1" * 32)


def test_proposer_is_an_active_validator_and_deterministic() -> None:
    active = [3, 7, 11]
    proposers = [compute_proposer(SEED, slot, active) for slot in range(50)]
    assert set(proposers) <= set(active)
    assert len(set(proposers)) == 3
    assert proposers == [compute_proposer(SEED, slot, active) for slot in range(50)]


def test_sync_committee_has_512_seats_with_repeats_when_validators_are_few() -> None:
    small = compute_sync_committee(SEED, list(range(16)))
    assert len(small) == 512
    assert all(small.count(index) == 32 for index in range(16))
    large = compute_sync_committee(SEED, list(range(10_000)))
    assert len(set(large)) == 512


def test_aggregator_selection_uses_the_spec_modulo() -> None:
    proofs = [sha256(bytes([i])).digest() * 3 for i in range(200)]
    # A committee of at most 16 members: everyone aggregates.
    assert all(is_aggregator(16, proof, 16) for proof in proofs)
    selected = sum(is_aggregator(160, proof, 16) for proof in proofs)
    assert 5 < selected < 45  # modulo 10: about one in ten
    expected = [int.from_bytes(sha256(proof).digest()[:8], "little") % 8 == 0 for proof in proofs]
    assert [is_sync_committee_aggregator(proof, 16) for proof in proofs] == expected


@pytest.mark.parametrize(
    ("active", "slots_per_epoch", "expected"), [(16, 8, 1), (64, 8, 2), (128, 8, 4), (10**6, 8, 4)]
)
def test_minimal_committee_count_uses_the_minimal_preset(
    active: int, slots_per_epoch: int, expected: int
) -> None:
    # TARGET_COMMITTEE_SIZE 4 and MAX_COMMITTEES_PER_SLOT 4 (presets/minimal/phase0.yaml).
    assert committee_count_per_slot(active, slots_per_epoch, MINIMAL) == expected


def test_minimal_sync_aggregators_are_chosen_among_8_seats() -> None:
    proofs = [sha256(bytes([i])).digest() * 3 for i in range(50)]
    # SYNC_COMMITTEE_SIZE 32 / 4 subnets / 16 targets: modulo max(1, 0), everyone aggregates.
    assert all(is_sync_committee_aggregator(proof, 16, MINIMAL) for proof in proofs)
    expected = [int.from_bytes(sha256(proof).digest()[:8], "little") % 4 == 0 for proof in proofs]
    assert [is_sync_committee_aggregator(proof, 2, MINIMAL) for proof in proofs] == expected
