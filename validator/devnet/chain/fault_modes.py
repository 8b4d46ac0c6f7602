"""The fault modes' names and the hooks the chain and its server call.

Kept apart from :mod:`validator.devnet.chain.faults` (which needs the whole chain to
misbehave on it) so that the chain can hold an injector without importing it.
"""

from __future__ import annotations

from enum import Enum, StrEnum
from typing import Protocol

from validator.consensus.ssz.phase0 import AttestationData


class Fault(StrEnum):
    DOUBLE_VOTE = "double-vote"
    SURROUND_VOTE = "surround-vote"
    FAR_FUTURE = "far-future"
    CONFLICTING_BLOCK = "conflicting-block"
    UNAVAILABLE = "unavailable"
    REORG = "reorg"
    BUILDER_OFFLINE = "builder-offline"
    DUTIES_REORG = "duties-reorg"

    @classmethod
    def parse(cls, name: str) -> Fault:
        try:
            return cls(name)
        except ValueError:
            known = ", ".join(fault.value for fault in cls)
            raise ValueError(f"unknown fault {name!r}; the devnet knows {known}") from None


class Availability(Enum):
    UP = "up"
    REFUSE = "refuse"
    """Answer 503 (or 500) at once."""
    HANG = "hang"
    """Hold the request for two slots, then answer 503 (or 500)."""


class FaultHooks(Protocol):
    """Where a fault mode bends the chain: the clock, production, intake, availability."""

    def on_slot_start(self, slot: int) -> None: ...

    def availability(self, now: float) -> Availability: ...

    def attestation_data(self, slot: int, data: AttestationData) -> AttestationData: ...

    def block_slot(self, slot: int, proposer_index: int) -> int: ...

    def on_client_block(self, slot: int, proposer_index: int) -> None: ...

    def relay_online(self) -> bool: ...
