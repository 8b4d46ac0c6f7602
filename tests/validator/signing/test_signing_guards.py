"""The far-future guard's arithmetic and the source/target rule, at their boundaries."""

from __future__ import annotations

import pytest

from tests.validator.signing.support import GENESIS_TIME, SLOT_SECONDS, make_chain
from validator.consensus.spec import ChainSpec
from validator.signing.guards import (
    check_attestation_epochs,
    check_block_slot,
    wall_clock_epoch,
    wall_clock_slot,
)
from validator.signing.types import RefusalReason

CHAIN = make_chain()


@pytest.mark.parametrize("seconds", [0, 0.001, 1.999, 2, 2.5, 17, 3600.25, 10**7])
def test_wall_clock_slot_is_the_chains_current_slot(seconds: float) -> None:
    now = GENESIS_TIME + seconds
    assert wall_clock_slot(CHAIN, now) == CHAIN.current_slot(now)
    assert wall_clock_epoch(CHAIN, now) == CHAIN.current_epoch(now)


def test_before_genesis_the_clock_counts_backwards() -> None:
    assert wall_clock_slot(CHAIN, GENESIS_TIME - 0.001) == -1
    assert wall_clock_slot(CHAIN, GENESIS_TIME - 100 * SLOT_SECONDS) == -100
    assert wall_clock_epoch(CHAIN, GENESIS_TIME - 0.001) == -1
    # With a one-epoch margin, a block at slot 0 is allowed from one epoch before genesis.
    assert check_block_slot(CHAIN, 0, GENESIS_TIME - 8 * SLOT_SECONDS, 1) is None
    assert check_block_slot(CHAIN, 0, GENESIS_TIME - 9 * SLOT_SECONDS, 1) is not None


def at_slot(slot: int, chain: ChainSpec = CHAIN) -> float:
    return chain.genesis_time + slot * SLOT_SECONDS + 0.3


@pytest.mark.parametrize(
    ("clock_slot", "block_slot", "margin", "refused"),
    [
        (40, 48, 1, False),
        (40, 49, 1, True),
        (40, 40, 0, False),
        (40, 41, 0, True),
        (40, 56, 2, False),
        (40, 57, 2, True),
        (40, 0, 1, False),  # the past is the record's business, not the guard's
    ],
)
def test_block_margin(clock_slot: int, block_slot: int, margin: int, refused: bool) -> None:
    refusal = check_block_slot(CHAIN, block_slot, at_slot(clock_slot), margin)
    assert (refusal is not None) == refused
    if refusal is not None:
        assert refusal.reason is RefusalReason.FAR_FUTURE
        assert str(block_slot) in refusal.detail


@pytest.mark.parametrize(
    ("clock_slot", "source", "target", "margin", "reason"),
    [
        (40, 4, 6, 1, None),  # epoch 5 + 1
        (40, 4, 7, 1, RefusalReason.FAR_FUTURE),
        (47, 4, 6, 1, None),  # still epoch 5
        (48, 4, 7, 1, None),  # epoch 6
        (40, 5, 5, 0, RefusalReason.SOURCE_EQUALS_TARGET),
        (40, 5, 6, 0, RefusalReason.FAR_FUTURE),
        (40, 5, 4, 1, RefusalReason.SOURCE_ABOVE_TARGET),
        (40, 9, 8, 1, RefusalReason.SOURCE_ABOVE_TARGET),  # both rules; named first
        (40, 0, 0, 1, None),
    ],
)
def test_attestation_rules(
    clock_slot: int, source: int, target: int, margin: int, reason: RefusalReason | None
) -> None:
    refusal = check_attestation_epochs(CHAIN, source, target, at_slot(clock_slot), margin)
    assert (None if refusal is None else refusal.reason) is reason


def test_the_margin_scales_with_the_epoch_length() -> None:
    long_epochs = make_chain(slots_per_epoch=32)
    now = at_slot(100, long_epochs)
    assert check_block_slot(long_epochs, 132, now, 1) is None
    assert check_block_slot(long_epochs, 133, now, 1) is not None
