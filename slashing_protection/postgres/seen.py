"""What this process has committed or read of each key in the shared record: the alarm.

A row found below the highest watermark this process has committed or read for its key
means the database lost history (a replica promoted after losing committed transactions,
a restored old backup): that key is refused and the alarm counted, since its history is
no longer to be trusted. Watermarks here only ever rise.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from itertools import compress, repeat
from operator import lt

from slashing_protection.postgres.batch import LockedRows
from slashing_protection.postgres.metrics import ROLLBACK_ALARMS
from slashing_protection.rule import NEVER

log = logging.getLogger("slashing_protection")


class SeenWatermarks:
    """Per key, the highest slot, source and target seen (NEVER for none)."""

    def __init__(self) -> None:
        self.slot: dict[bytes, int] = {}
        self.source: dict[bytes, int] = {}
        self.target: dict[bytes, int] = {}

    def __contains__(self, pubkey: object) -> bool:
        return pubkey in self.slot

    def of(self, pubkey: bytes) -> tuple[int, int, int] | None:
        """What was seen of a key, or None for a key never seen."""
        if pubkey not in self.slot:
            return None
        return self.slot[pubkey], self.source[pubkey], self.target[pubkey]

    def raise_to(self, pubkey: bytes, slot: int, source: int, target: int) -> None:
        """Take in values seen for a key (never lowers one)."""
        for seen, value in ((self.slot, slot), (self.source, source), (self.target, target)):
            if seen.get(pubkey, NEVER) <= value:
                seen[pubkey] = value

    def raise_attestations(
        self, pubkeys: list[bytes], sources: list[int], targets: list[int]
    ) -> None:
        """Take in a committed batch's new sources and targets (all above what was seen)."""
        self.source.update(zip(pubkeys, sources, strict=True))
        self.target.update(zip(pubkeys, targets, strict=True))

    def is_below(self, pubkey: bytes, slot: int, source: int, target: int) -> bool:
        """Whether a row's values lie below what was seen of its key (rolled back)."""
        return (
            slot < self.slot.get(pubkey, NEVER)
            or source < self.source.get(pubkey, NEVER)
            or target < self.target.get(pubkey, NEVER)
        )

    def batch_rows(
        self, pubkeys: list[bytes], sources: list[int], targets: list[int]
    ) -> list[tuple[int, int, int, int, int]]:
        """Each item's (source, target) with its key's seen (slot, source, target), as the
        one-statement batch compares them inside the database."""
        return list(
            zip(
                sources,
                targets,
                map(self.slot.get, pubkeys, repeat(NEVER)),
                map(self.source.get, pubkeys, repeat(NEVER)),
                map(self.target.get, pubkeys, repeat(NEVER)),
                strict=True,
            )
        )

    def rolled_back(self, locked: LockedRows, where: str) -> set[bytes]:
        """Keys whose rows hold less than was seen: each counted and logged as the alarm."""
        keys = list(locked.slot)
        lowered: set[bytes] = set()
        for column, seen in (
            (locked.slot, self.slot),
            (locked.source, self.source),
            (locked.target, self.target),
        ):
            if any(map(lt, column.values(), map(seen.get, keys, repeat(NEVER)))):
                flags = list(map(lt, column.values(), map(seen.get, keys, repeat(NEVER))))
                lowered.update(compress(keys, flags))
        for pubkey in lowered:
            ROLLBACK_ALARMS.inc()
            log.error(
                "ALARM: the slashing-protection database %s holds a lower watermark for "
                "0x%s than this process has committed or seen before (a failover to a "
                "replica that lost transactions, or a restored backup?); refusing the key",
                where,
                pubkey.hex(),
            )
        return lowered

    def remember(self, locked: LockedRows, lowered: Iterable[bytes]) -> None:
        """Take in the values read under lock (all at or above what was seen), but for
        the `lowered` keys."""
        refused = set(lowered)
        if refused:
            keep = [key for key in locked.slot if key not in refused]
            self.slot.update((key, locked.slot[key]) for key in keep)
            self.source.update((key, locked.source[key]) for key in keep)
            self.target.update((key, locked.target[key]) for key in keep)
        else:
            self.slot.update(locked.slot)
            self.source.update(locked.source)
            self.target.update(locked.target)
