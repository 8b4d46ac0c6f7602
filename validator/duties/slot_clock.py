"""Wall-clock time on the chain: when each slot, and each third of a slot, begins."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from validator.consensus.spec import ChainSpec


class SlotClock:
    """Slot arithmetic on the Unix clock ``now`` (seconds) for one chain."""

    def __init__(self, chain: ChainSpec, now: Callable[[], float] = time.time) -> None:
        self.chain = chain
        self._now = now

    def now(self) -> float:
        return self._now()

    @property
    def seconds_per_slot(self) -> float:
        return self.chain.seconds_per_slot

    def slot_start(self, slot: int) -> float:
        return self.chain.slot_start_time(slot)

    def slot_fraction(self, slot: int, numerator: int, denominator: int) -> float:
        """Unix time ``numerator/denominator`` of the way into ``slot``."""
        return self.slot_start(slot) + self.seconds_per_slot * numerator / denominator

    def slot_bps(self, slot: int, bps: int) -> float:
        """Unix time ``bps`` basis points into ``slot`` (the Gloas deadlines' unit)."""
        return self.slot_start(slot) + self.chain.ms_into_slot(bps) / 1000

    def current_slot(self) -> int:
        """The slot the clock is in; ``BeforeGenesisError`` before genesis."""
        return self.chain.current_slot(self._now())

    def wall_slot(self) -> int:
        """The clock's slot, counting on below zero before genesis (never raises)."""
        elapsed_ms = int(self._now() * 1000) - self.chain.genesis_time * 1000
        return elapsed_ms // self.chain.slot_duration_ms

    def seconds_into_slot(self, slot: int) -> float:
        return self._now() - self.slot_start(slot)

    def seconds_until(self, when: float) -> float:
        return when - self._now()

    async def sleep_until(self, when: float) -> None:
        """Sleep until the Unix time ``when`` (at once when it is past)."""
        delay = when - self._now()
        if delay > 0:
            await asyncio.sleep(delay)
