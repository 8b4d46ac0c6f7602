"""What the duty loop did lately, for the status page: per validator index the last slot
each duty kind was published, and per slot how many duties ended how.

Every duty outcome passes ``validator.duties.context.report``, which notes it here as it
counts it in ``validator_duties_total``; like the metrics, the journal is one per
process. It keeps a bounded window of slots, so a long run holds no more than that.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Iterable

from validator.duties.metrics import DutyKind, DutyResult

#: Slots of per-slot outcome counts kept (the page charts the last epochs of them).
KEPT_SLOTS = 512


class DutyJournal:
    def __init__(self, kept_slots: int = KEPT_SLOTS) -> None:
        self._kept_slots = kept_slots
        self._last_published: dict[int, dict[DutyKind, int]] = {}
        self._per_slot: OrderedDict[int, Counter[DutyResult]] = OrderedDict()

    def note(self, slot: int, kind: DutyKind, outcomes: Iterable[tuple[int, DutyResult]]) -> None:
        counts = self._per_slot.get(slot)
        if counts is None:
            counts = self._per_slot[slot] = Counter()
            while len(self._per_slot) > self._kept_slots:
                self._per_slot.popitem(last=False)
        for index, result in outcomes:
            counts[result] += 1
            if result is DutyResult.PUBLISHED:
                last = self._last_published.setdefault(index, {})
                last[kind] = max(slot, last.get(kind, slot))

    def last_published(self, index: int, kind: DutyKind) -> int | None:
        """The latest slot a duty of this kind of this validator was published for."""
        return self._last_published.get(index, {}).get(kind)

    def outcomes_by_slot(self) -> dict[int, Counter[DutyResult]]:
        return {slot: Counter(counts) for slot, counts in self._per_slot.items()}


JOURNAL = DutyJournal()
