"""Checks on slashable messages that run before the slashing-protection record sees them.

The record only ever raises its watermarks, so a block or attestation it
accepts for a far-future slot or epoch would stop the key from signing anything
until the chain catches up: weeks, if a faulty or hostile beacon node hands out
such a message. The far-future guard refuses those against the wall clock,
which the beacon node does not control. An attestation whose source is above
its target is never valid and would likewise poison the source watermark; so is
one whose source equals its target (except both 0 at genesis): once recorded, the
target watermark would refuse every honest attestation up to that epoch.
"""

from __future__ import annotations

from validator.consensus.spec import ChainSpec
from validator.signing.types import Refusal, RefusalReason

DEFAULT_FAR_FUTURE_MARGIN_EPOCHS = 1


def wall_clock_slot(chain: ChainSpec, now: float) -> int:
    """The slot the clock ``now`` (Unix seconds) is in, negative before genesis.

    Equal to ``chain.current_slot(now)`` from genesis on; before it, the floor
    division keeps counting backwards, so nothing far from genesis looks near.
    """
    elapsed_ms = int(now * 1000) - chain.genesis_time * 1000
    return elapsed_ms // chain.slot_duration_ms


def wall_clock_epoch(chain: ChainSpec, now: float) -> int:
    return wall_clock_slot(chain, now) // chain.slots_per_epoch


def check_block_slot(chain: ChainSpec, slot: int, now: float, margin_epochs: int) -> Refusal | None:
    """Refuse a block more than ``margin_epochs`` epochs (in slots) beyond the clock's slot."""
    current = wall_clock_slot(chain, now)
    latest = current + margin_epochs * chain.slots_per_epoch
    if slot > latest:
        return Refusal(
            RefusalReason.FAR_FUTURE,
            f"block slot {slot} is more than {margin_epochs} epoch(s) beyond the wall clock's "
            f"slot {current} (latest allowed {latest})",
        )
    return None


def check_attestation_epochs(
    chain: ChainSpec, source: int, target: int, now: float, margin_epochs: int
) -> Refusal | None:
    """Refuse source not below target (but 0 == 0), and a target too far beyond the clock."""
    if source > target:
        return Refusal(
            RefusalReason.SOURCE_ABOVE_TARGET,
            f"source epoch {source} is above target epoch {target}",
        )
    if source == target and target != 0:
        return Refusal(
            RefusalReason.SOURCE_EQUALS_TARGET,
            f"source epoch {source} equals target epoch {target} (only both 0 is valid)",
        )
    current = wall_clock_epoch(chain, now)
    latest = current + margin_epochs
    if target > latest:
        return Refusal(
            RefusalReason.FAR_FUTURE,
            f"target epoch {target} is more than {margin_epochs} epoch(s) beyond the wall "
            f"clock's epoch {current} (latest allowed {latest})",
        )
    return None
