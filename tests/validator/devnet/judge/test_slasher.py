"""The devnet's slasher: double votes, surround votes, double proposals, persistence."""

from __future__ import annotations

from pathlib import Path

import pytest

from validator.devnet.judge.slasher import Slasher, SlasherStateError, SlashingKind

ROOT_A = b"\xaa" * 32
ROOT_B = b"\xbb" * 32


def kinds(findings: list) -> list[SlashingKind]:  # type: ignore[type-arg]
    return [finding.kind for finding in findings]


def test_same_attestation_again_is_not_slashable(tmp_path: Path) -> None:
    slasher = Slasher.open(tmp_path, 8)
    assert slasher.observe_attestation(1, 2, 3, ROOT_A) == []
    assert slasher.observe_attestation(1, 2, 3, ROOT_A) == []
    assert slasher.attestation_records == 1


def test_double_vote_is_found_per_validator(tmp_path: Path) -> None:
    slasher = Slasher.open(tmp_path, 8)
    slasher.observe_attestation(1, 2, 3, ROOT_A)
    assert slasher.observe_attestation(2, 2, 3, ROOT_B) == []  # another validator
    findings = slasher.observe_attestation(1, 2, 3, ROOT_B)
    assert kinds(findings) == [SlashingKind.DOUBLE_VOTE]
    assert findings[0].validator_index == 1


@pytest.mark.parametrize(
    ("first", "second"),
    [((2, 3), (1, 4)), ((1, 4), (2, 3)), ((0, 10), (5, 6)), ((5, 6), (0, 10))],
)
def test_surround_votes_are_found_both_ways(
    tmp_path: Path, first: tuple[int, int], second: tuple[int, int]
) -> None:
    slasher = Slasher.open(tmp_path, 8)
    slasher.observe_attestation(7, *first, ROOT_A)
    assert kinds(slasher.observe_attestation(7, *second, ROOT_B)) == [SlashingKind.SURROUND_VOTE]


@pytest.mark.parametrize("second", [(3, 4), (2, 4), (1, 3), (0, 2), (3, 3)])
def test_votes_that_only_touch_are_not_surround_votes(
    tmp_path: Path, second: tuple[int, int]
) -> None:
    slasher = Slasher.open(tmp_path, 8)
    slasher.observe_attestation(7, 1, 3, ROOT_A)
    findings = slasher.observe_attestation(7, *second, ROOT_B)
    assert SlashingKind.SURROUND_VOTE not in kinds(findings)


def test_double_proposal_but_not_the_same_block_twice(tmp_path: Path) -> None:
    slasher = Slasher.open(tmp_path, 8)
    assert slasher.observe_block(4, 10, ROOT_A) == []
    assert slasher.observe_block(4, 10, ROOT_A) == []
    assert slasher.observe_block(5, 10, ROOT_B) == []  # another proposer
    assert slasher.observe_block(4, 11, ROOT_B) == []  # another slot
    assert kinds(slasher.observe_block(4, 10, ROOT_B)) == [SlashingKind.DOUBLE_PROPOSAL]


def test_records_persist_and_a_reopened_slasher_remembers(tmp_path: Path) -> None:
    slasher = Slasher.open(tmp_path, 8)
    slasher.observe_attestation(1, 2, 3, ROOT_A)
    slasher.observe_attestation(1, 3, 100_003, ROOT_A)  # a far-future target
    slasher.observe_block(4, 17, ROOT_A)
    Slasher.write_segments(slasher.take_dirty_segments())
    assert slasher.take_dirty_segments() == []
    reopened = Slasher.open(tmp_path, 8)
    assert reopened.attestation_records == 2 and reopened.block_records == 1
    assert kinds(reopened.observe_attestation(1, 2, 3, ROOT_B)) == [SlashingKind.DOUBLE_VOTE]
    # Surrounded by the far-future vote.
    assert kinds(reopened.observe_attestation(1, 4, 5, ROOT_B)) == [SlashingKind.SURROUND_VOTE]
    assert kinds(reopened.observe_block(4, 17, ROOT_B)) == [SlashingKind.DOUBLE_PROPOSAL]
    assert reopened.observe_block(4, 17, ROOT_A) == []


def test_an_unreadable_record_stops_the_slasher(tmp_path: Path) -> None:
    (tmp_path / "attestations-3.json").write_text("{not json")
    with pytest.raises(SlasherStateError, match="attestations-3.json"):
        Slasher.open(tmp_path, 8)
