"""What the devnet counts: messages received, bad signatures, slashable messages, missed duties.

Counters exist twice: for this run (what ``summary()`` reports at the top
level) and cumulated over every run on the state directory (persisted, in
``summary()["cumulative"]``).

A duty counts as *missed* when its deadline passes without the chain having
accepted the message:

- attestation: one per active validator per epoch, due by the end of the
  first slot of the next epoch (an attestation for any slot of the epoch
  counts, so re-shuffled duties after a re-org are judged fairly);
- proposal: one per slot from slot 1, due by the end of the slot;
- sync committee message: one per sync committee member per slot, due by the
  end of the next slot.

Only duties whose slot is at or after ``count_from_slot`` are judged, and only
deadlines that pass while the chain runs: slots before the client could have
started, or while the devnet was stopped, are not the client's fault.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from validator.devnet.chain.shuffling import EpochCommittees

RUN_COUNTERS = (
    "blocks_proposed",
    "blinded_blocks_received",
    "builder_blocks_offered",
    "repeated_block_requests",
    "attestations_received",
    "attestations_included",
    "aggregates_received",
    "sync_messages_received",
    "contributions_received",
    "voluntary_exits_received",
    "registrations_received",
    "invalid_signatures",
    "slashable_messages",
    "slashable_double_votes",
    "slashable_surround_votes",
    "slashable_double_proposals",
    "beacon_committee_subscriptions",
    "sync_committee_subscriptions",
    "proposer_preparations",
    "rejected_messages",
    "duplicate_messages",
    "duplicate_attestations",
    "duplicate_blocks",
    "stale_proposer_requests",
    "missed_attestations",
    "missed_proposals",
    "missed_sync_messages",
    "attestation_duties",
    "attestations_before_two_thirds",
    "strict_violations",
    # Gloas (ePBS)
    "payload_attestations_expected",
    "payload_attestations_received",
    "late_payload_attestations",
    "missed_payload_attestations",
    "envelopes_expected",
    "envelopes_received",
    "missed_envelopes",
    "proposer_preferences_received",
    "stale_proposer_preferences",
)


class Ledger:
    def __init__(
        self,
        slots_per_epoch: int,
        count_from_slot: int,
        cumulative: Mapping[str, int] | None = None,
    ) -> None:
        self.slots_per_epoch = slots_per_epoch
        self.count_from_slot = count_from_slot
        self.run: Counter[str] = Counter()
        self._cumulative_before: Counter[str] = Counter(dict(cumulative or {}))
        self.fault_events: Counter[str] = Counter()
        self._attested: dict[int, dict[int, float]] = {}
        """target epoch -> validator -> seconds after its slot start when first accepted."""
        self._proposed_slots: set[int] = set()
        self._sync_received: dict[int, set[int]] = {}
        self._judged_slot = count_from_slot - 1
        """Every deadline up to the end of this slot has been judged."""

    def count(self, name: str, amount: int = 1) -> None:
        self.run[name] += amount

    def cumulative(self) -> dict[str, int]:
        total = self._cumulative_before.copy()
        total.update(self.run)
        return {name: total.get(name, 0) for name in sorted(set(RUN_COUNTERS) | set(total))}

    def counters(self) -> dict[str, int]:
        return {name: self.run.get(name, 0) for name in RUN_COUNTERS}

    def start_counting_from(self, slot: int) -> None:
        """Judge duties from ``slot`` on (the client is up); never moves backwards."""
        if slot > self.count_from_slot:
            self.count_from_slot = slot
            self._judged_slot = max(self._judged_slot, slot - 1)

    # --- what arrived ---------------------------------------------------------

    def attestation_accepted(self, validator: int, target_epoch: int, delay: float) -> None:
        by_validator = self._attested.setdefault(target_epoch, {})
        if validator not in by_validator:
            by_validator[validator] = delay

    def attested_in(self, target_epoch: int) -> set[int]:
        """Validators with an accepted attestation for ``target_epoch``."""
        return set(self._attested.get(target_epoch, {}))

    def block_accepted(self, slot: int) -> None:
        self._proposed_slots.add(slot)

    def sync_message_accepted(self, slot: int, validator: int) -> None:
        self._sync_received.setdefault(slot, set()).add(validator)

    # --- judging deadlines ----------------------------------------------------

    def judge_until(
        self,
        slot: int,
        seconds_per_slot: float,
        committees_of_epoch: Callable[[int], EpochCommittees],
        sync_members_at_slot: Callable[[int], Iterable[int]],
    ) -> None:
        """Judge every deadline that ended with the end of ``slot``."""
        for ended in range(self._judged_slot + 1, slot + 1):
            if ended >= max(1, self.count_from_slot):
                if ended not in self._proposed_slots:
                    self.count("missed_proposals")
            sync_slot = ended - 1
            if sync_slot >= self.count_from_slot:
                received = self._sync_received.get(sync_slot, set())
                expected = set(sync_members_at_slot(sync_slot))
                self.count("missed_sync_messages", len(expected - received))
            if ended % self.slots_per_epoch == 0 and ended > 0:
                self._judge_attestations(
                    ended // self.slots_per_epoch - 1,
                    seconds_per_slot,
                    committees_of_epoch,
                )
            self._judged_slot = ended
        self._forget_before(slot)

    def _judge_attestations(
        self,
        epoch: int,
        seconds_per_slot: float,
        committees_of_epoch: Callable[[int], EpochCommittees],
    ) -> None:
        attested = self._attested.get(epoch, {})
        for assignment in committees_of_epoch(epoch).assignments():
            if assignment.slot < self.count_from_slot:
                continue
            self.count("attestation_duties")
            delay = attested.get(assignment.validator_index)
            if delay is None:
                self.count("missed_attestations")
            elif delay < seconds_per_slot * 2 / 3:
                self.count("attestations_before_two_thirds")

    def _forget_before(self, slot: int) -> None:
        epoch = slot // self.slots_per_epoch
        for old in [e for e in self._attested if e < epoch - 2]:
            del self._attested[old]
        for old in [s for s in self._sync_received if s < slot - 2]:
            del self._sync_received[old]
        self._proposed_slots = {s for s in self._proposed_slots if s >= slot - 2}

    # --- reporting ------------------------------------------------------------

    @property
    def missed_duties(self) -> int:
        return (
            self.run["missed_attestations"]
            + self.run["missed_proposals"]
            + self.run["missed_sync_messages"]
            + self.run["missed_payload_attestations"]
            + self.run["missed_envelopes"]
        )

    def summary(self) -> dict[str, Any]:
        counters: dict[str, Any] = dict(self.counters())
        counters["missed_duties"] = self.missed_duties
        counters["missed_duties_detail"] = {
            "attestations": self.run["missed_attestations"],
            "proposals": self.run["missed_proposals"],
            "sync_messages": self.run["missed_sync_messages"],
            "payload_attestations": self.run["missed_payload_attestations"],
            "envelopes": self.run["missed_envelopes"],
        }
        duties = self.run["attestation_duties"]
        counters["attestations_before_two_thirds_share"] = (
            self.run["attestations_before_two_thirds"] / duties if duties else None
        )
        counters["fault_events"] = dict(sorted(self.fault_events.items()))
        cumulative: dict[str, Any] = dict(self.cumulative())
        cumulative["missed_duties"] = (
            cumulative.get("missed_attestations", 0)
            + cumulative.get("missed_proposals", 0)
            + cumulative.get("missed_sync_messages", 0)
            + cumulative.get("missed_payload_attestations", 0)
            + cumulative.get("missed_envelopes", 0)
        )
        counters["cumulative"] = cumulative
        return counters
