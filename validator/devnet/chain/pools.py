"""Operation pools: the verified single attestations and sync committee messages the chain holds.

Aggregates (``aggregate_attestation``), sync committee contributions
(``sync_committee_contribution``) and the attestations and sync aggregate of
produced blocks are built from these pools, so everything the chain serves
carries only signatures it has verified.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from validator.devnet.judge.message_readers import AttestationDataFields


@dataclass
class PooledAttestations:
    """The single attestations with one AttestationData in one committee."""

    data: AttestationDataFields
    committee_length: int
    signatures: dict[int, bytes] = field(default_factory=dict)
    """Position in the committee -> signature."""


class AttestationPool:
    def __init__(self) -> None:
        self._by_key: dict[tuple[int, int, bytes], PooledAttestations] = {}
        self._included: set[tuple[int, bytes]] = set()

    def add(
        self,
        slot: int,
        committee_index: int,
        data_root: bytes,
        data: AttestationDataFields,
        committee_length: int,
        position: int,
        signature: bytes,
    ) -> bool:
        """Pool one verified attestation; False when that member's was already there."""
        pooled = self._by_key.get((slot, committee_index, data_root))
        if pooled is None:
            pooled = PooledAttestations(data, committee_length)
            self._by_key[(slot, committee_index, data_root)] = pooled
        if position in pooled.signatures:
            return False
        pooled.signatures[position] = signature
        return True

    def get(self, slot: int, committee_index: int, data_root: bytes) -> PooledAttestations | None:
        return self._by_key.get((slot, committee_index, data_root))

    def for_block(self, slot: int) -> list[tuple[bytes, dict[int, PooledAttestations]]]:
        """Per AttestationData root at ``slot`` (not yet in a block): its committees' pools."""
        grouped: dict[bytes, dict[int, PooledAttestations]] = {}
        for (pool_slot, committee_index, data_root), pooled in self._by_key.items():
            if pool_slot == slot and (slot, data_root) not in self._included:
                grouped.setdefault(data_root, {})[committee_index] = pooled
        ranked = sorted(
            grouped.items(),
            key=lambda item: -sum(len(p.signatures) for p in item[1].values()),
        )
        return ranked

    def mark_included(self, slot: int, data_root: bytes) -> None:
        self._included.add((slot, data_root))

    def prune(self, min_slot: int) -> None:
        self._by_key = {key: value for key, value in self._by_key.items() if key[0] >= min_slot}
        self._included = {key for key in self._included if key[0] >= min_slot}


class SyncMessagePool:
    def __init__(self) -> None:
        self._by_key: dict[tuple[int, bytes], dict[int, bytes]] = {}

    def add(self, slot: int, block_root: bytes, validator_index: int, signature: bytes) -> bool:
        """Pool one verified message; False when that validator's was already there."""
        messages = self._by_key.setdefault((slot, block_root), {})
        if validator_index in messages:
            return False
        messages[validator_index] = signature
        return True

    def signatures_by_seat(
        self, slot: int, block_root: bytes, seats: Sequence[int]
    ) -> list[bytes | None]:
        """For each seat (a committee member's index), that member's signature or None."""
        messages = self._by_key.get((slot, block_root), {})
        return [messages.get(member) for member in seats]

    def prune(self, min_slot: int) -> None:
        self._by_key = {key: value for key, value in self._by_key.items() if key[0] >= min_slot}


@dataclass
class PayloadAttestationPool:
    """Verified PTC votes by slot: data root -> (data, validator -> signature)."""

    votes: dict[int, dict[bytes, tuple[Any, dict[int, bytes]]]] = field(default_factory=dict)

    def add(self, slot: int, data_root: bytes, data: Any, validator: int, signature: bytes) -> bool:
        """Keep the first vote of each validator per slot (as gossip does); True when new."""
        by_root = self.votes.setdefault(slot, {})
        if any(validator in voters for _, voters in by_root.values()):
            return False
        by_root.setdefault(data_root, (data, {}))[1][validator] = signature
        return True

    def prune(self, before: int) -> None:
        for slot in [s for s in self.votes if s < before]:
            del self.votes[slot]
