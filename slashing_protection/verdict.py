"""The record's answer to one message: allowed, or why not and the bound it hit.

Every question a record answers about a block or an attestation (`check_block`,
`check_attestation`, `record_block`, `record_attestations`) answers a `Verdict`. A
slashable one names the part of the minimal rule it broke and the record's watermark it
hit, so that whoever reports the refusal (the signer's log, the Web3Signer 412 body) can
say why without asking the record again.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from slashing_protection.rule import Rule, broken_attestation_rule, broken_block_rule


class RecordRefusal(StrEnum):
    """Why the record refused a message."""

    NOT_REGISTERED = "not_registered"
    """The record has no entry for the key (import its history or register it first)."""
    SLASHABLE = "slashable"
    """The minimal rule refuses it: it could be slashable against what the key signed."""
    WRITE_FAILED = "write_failed"
    """It was allowed, but the durable write failed, so it is not recorded."""


_WATERMARK_NAMES = {
    Rule.BLOCK_SLOT: "highest block slot",
    Rule.ATTESTATION_SOURCE: "highest attestation source epoch",
    Rule.ATTESTATION_TARGET: "highest attestation target epoch",
}
_RULE_TEXT = {
    Rule.BLOCK_SLOT: "a block's slot must be above it",
    Rule.ATTESTATION_SOURCE: "an attestation's source must be at least it",
    Rule.ATTESTATION_TARGET: "an attestation's target must be above it",
}


@dataclass(frozen=True, slots=True)
class Verdict:
    """`allowed` is True exactly when `reason` is None. A `slashable` verdict has `rule`
    (the part of the minimal rule broken) and `watermark` (the record's value it hit)."""

    reason: RecordRefusal | None = None
    rule: Rule | None = None
    watermark: int | None = None

    @property
    def allowed(self) -> bool:
        return self.reason is None

    def __bool__(self) -> bool:
        # A verdict read as a bool would always be true: ask `allowed`.
        raise TypeError("a Verdict is not a bool: use its `allowed`")

    def explain(self) -> str:
        """Why it was refused, in words ("" when it was allowed)."""
        if self.reason is None:
            return ""
        if self.reason is RecordRefusal.NOT_REGISTERED:
            return "the slashing-protection record has no entry for this key"
        if self.reason is RecordRefusal.WRITE_FAILED:
            return "the slashing-protection record could not be written"
        if self.rule is None:
            return (
                "the slashing-protection record refuses it: its watermarks for this key are "
                "below what this process saw before (a rolled-back database: the alarm)"
            )
        return (
            f"the slashing-protection record's {_WATERMARK_NAMES[self.rule]} for this key is "
            f"{self.watermark}: {_RULE_TEXT[self.rule]} ({self.rule.value})"
        )


@lru_cache(maxsize=4096)
def slashable(rule: Rule, watermark: int) -> Verdict:
    """The refusal of a message that breaks ``rule`` against ``watermark`` (one object per
    pair: a refused batch's keys mostly share their watermarks)."""
    return Verdict(RecordRefusal.SLASHABLE, rule, watermark)


ROLLED_BACK = Verdict(RecordRefusal.SLASHABLE)
"""The shared record's refusal of a key whose row went below what this process saw."""

# One instance per answer that carries no bound: a 10,000-key batch shares them instead of
# making 10,000 objects.
ALLOWED = Verdict()
NOT_REGISTERED = Verdict(RecordRefusal.NOT_REGISTERED)
WRITE_FAILED = Verdict(RecordRefusal.WRITE_FAILED)


def judge_block(last_slot: int | None, slot: int) -> Verdict:
    """The minimal rule's verdict on a block against the key's highest slot (None: the
    record has no entry for the key)."""
    if last_slot is None:
        return NOT_REGISTERED
    rule = broken_block_rule(last_slot=last_slot, slot=slot)
    return ALLOWED if rule is None else slashable(rule, last_slot)


def judge_attestation(
    last: tuple[int, int] | None, source: int, target: int
) -> Verdict:
    """The minimal rule's verdict on an attestation against the key's highest (source,
    target) (None: the record has no entry for the key)."""
    if last is None:
        return NOT_REGISTERED
    last_source, last_target = last
    rule = broken_attestation_rule(
        last_source=last_source, last_target=last_target, source=source, target=target
    )
    if rule is None:
        return ALLOWED
    return slashable(rule, last_source if rule is Rule.ATTESTATION_SOURCE else last_target)


def batch_verdicts(
    last_sources: Mapping[bytes, int],
    last_targets: Mapping[bytes, int],
    items: Sequence[tuple[bytes, int, int]],
    safe: Sequence[bool],
    passed: Verdict = ALLOWED,
    rolled_back: Collection[bytes] = (),
) -> list[Verdict]:
    """Each item's verdict once a batch was judged `safe` or not against the record's
    watermarks: `passed` for the safe ones (`WRITE_FAILED` when the write failed), and for a
    refused one the rule it broke against the watermark it was judged by (its key's, or an
    earlier item of the same key that the batch took in). Keys in `rolled_back` answer
    `ROLLED_BACK`."""
    taken: dict[bytes, tuple[int, int]] = {}
    verdicts = []
    for (pubkey, source, target), ok in zip(items, safe, strict=True):
        if ok:
            taken[pubkey] = (source, target)
            verdicts.append(passed)
        elif pubkey in rolled_back:
            verdicts.append(ROLLED_BACK)
        else:
            last = taken.get(pubkey)
            if last is None and pubkey in last_sources:
                last = (last_sources[pubkey], last_targets[pubkey])
            verdicts.append(judge_attestation(last, source, target))
    return verdicts
