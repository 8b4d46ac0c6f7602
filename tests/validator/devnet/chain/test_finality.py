"""The simplified FFG: justification at two thirds, finalization by the two-epoch rule."""

from __future__ import annotations

from validator.devnet.chain.finality import GENESIS_CHECKPOINT, Checkpoint, FinalityTracker

VALIDATORS = 9


def boundary(epoch: int) -> bytes:
    return bytes([epoch]) * 32


def vote_epoch(
    tracker: FinalityTracker, epoch: int, voters: range, root: bytes | None = None
) -> None:
    source = tracker.source_for(epoch)
    for validator in voters:
        tracker.record_vote(validator, source, Checkpoint(epoch, root or boundary(epoch)))


def start_epoch(tracker: FinalityTracker, epoch: int) -> bool:
    return tracker.process_epoch_start(epoch, boundary, lambda _: VALIDATORS)


def test_two_thirds_justify_and_consecutive_justification_finalizes() -> None:
    tracker = FinalityTracker()
    start_epoch(tracker, 0)
    vote_epoch(tracker, 0, range(9))
    start_epoch(tracker, 1)
    vote_epoch(tracker, 1, range(6))  # exactly two thirds
    start_epoch(tracker, 2)
    assert tracker.current_justified == Checkpoint(1, boundary(1))
    assert tracker.finalized == GENESIS_CHECKPOINT
    assert tracker.source_for(2) == Checkpoint(1, boundary(1))
    vote_epoch(tracker, 2, range(9))
    assert start_epoch(tracker, 3) is True
    assert tracker.current_justified == Checkpoint(2, boundary(2))
    assert tracker.previous_justified == Checkpoint(1, boundary(1))
    assert tracker.finalized == Checkpoint(1, boundary(1))


def test_fewer_than_two_thirds_or_wrong_votes_do_not_justify() -> None:
    tracker = FinalityTracker()
    start_epoch(tracker, 1)
    vote_epoch(tracker, 1, range(5))
    vote_epoch(tracker, 1, range(5, 9), root=b"\xee" * 32)  # another target root
    start_epoch(tracker, 2)
    assert tracker.current_justified == GENESIS_CHECKPOINT
    for validator in range(9):  # a source other than the justified checkpoint
        assert not tracker.record_vote(
            validator, Checkpoint(1, boundary(1)), Checkpoint(2, boundary(2))
        )
    start_epoch(tracker, 3)
    assert tracker.current_justified == GENESIS_CHECKPOINT


def test_late_votes_justify_the_previous_epoch_and_a_gap_blocks_finality() -> None:
    tracker = FinalityTracker()
    start_epoch(tracker, 1)
    vote_epoch(tracker, 1, range(9))
    start_epoch(tracker, 2)  # epoch 1 justified
    start_epoch(tracker, 3)  # nobody voted in epoch 2
    vote_epoch(tracker, 3, range(9))
    start_epoch(tracker, 4)  # 3 justified from source 1, epoch 2 was not: no finality
    assert tracker.current_justified.epoch == 3
    assert tracker.finalized == GENESIS_CHECKPOINT
    vote_epoch(tracker, 4, range(3))
    start_epoch(tracker, 5)
    vote_epoch(tracker, 4, range(3, 9))  # arriving during epoch 5 still count for 4
    start_epoch(tracker, 6)
    assert 4 in tracker.justified_epochs
    assert tracker.finalized == Checkpoint(3, boundary(3))


def test_round_trip_through_json() -> None:
    tracker = FinalityTracker()
    start_epoch(tracker, 1)
    vote_epoch(tracker, 1, range(7))
    restored = FinalityTracker.from_json(tracker.to_json())
    assert restored == tracker
