"""The record's answer to one message: allowed, or the reason it was refused.

`SlashingProtection.record_block` and `record_attestations` answer bools (the public
interface of ../shared/DESIGN.md); their `_verdict` variants answer a `Verdict`, so that a
caller that must say why (the signer's refusal reasons) need not ask the record again.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class RecordRefusal(StrEnum):
    """Why the record refused a message."""

    NOT_REGISTERED = "not_registered"
    """The record has no entry for the key (import its history or register it first)."""
    SLASHABLE = "slashable"
    """The minimal rule refuses it: it could be slashable against what the key signed."""
    WRITE_FAILED = "write_failed"
    """It was allowed, but the durable write failed, so it is not recorded."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """`allowed` is True exactly when `reason` is None."""

    reason: RecordRefusal | None = None

    @property
    def allowed(self) -> bool:
        return self.reason is None


# One instance per answer: a 10,000-key batch shares them instead of making 10,000 objects.
ALLOWED = Verdict()
NOT_REGISTERED = Verdict(RecordRefusal.NOT_REGISTERED)
SLASHABLE = Verdict(RecordRefusal.SLASHABLE)
WRITE_FAILED = Verdict(RecordRefusal.WRITE_FAILED)
