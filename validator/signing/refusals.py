"""Refusals the signer makes from other parts' answers, and how every refusal is reported.

Each refusal is counted in ``validator_signature_refusals_total{kind,reason}`` and logged
once per batch and distinct refusal, whichever step made it.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence

from slashing_protection import RecordRefusal, SlashingProtectionError, Verdict
from validator.consensus.spec import UnsupportedForkError
from validator.metrics import SIGNATURE_REFUSALS
from validator.signing.types import Refusal, RefusalReason, SigningKind, SigningResult

log = logging.getLogger("validator.signer")

_RECORD_REASONS = {
    RecordRefusal.NOT_REGISTERED: RefusalReason.NOT_REGISTERED,
    RecordRefusal.WRITE_FAILED: RefusalReason.RECORD_WRITE_FAILED,
    RecordRefusal.SLASHABLE: RefusalReason.SLASHABLE,
}


def refused_by_record(verdict: Verdict) -> Refusal | None:
    """The record's refusal as the signer reports it, saying the bound it hit (the rule and
    the record's watermark); None when the record allowed it."""
    if verdict.reason is None:
        return None
    return Refusal(_RECORD_REASONS[verdict.reason], verdict.explain())


def record_unavailable(error: SlashingProtectionError) -> Refusal:
    """The record raised instead of answering (closed, say): nothing is signed."""
    return Refusal(RefusalReason.RECORD_UNAVAILABLE, str(error))


def unsupported_fork(error: UnsupportedForkError) -> Refusal:
    return Refusal(RefusalReason.UNSUPPORTED_FORK, str(error))


def report_refusal(
    kind: SigningKind, pubkeys: Sequence[bytes], refusal: Refusal, what: str = ""
) -> None:
    """Count ``refusal`` for each key and log it once (``what``: the message, "slot 7")."""
    SIGNATURE_REFUSALS.labels(kind.value, refusal.reason.value).inc(len(pubkeys))
    subject = f" ({what})" if what else ""
    log.warning(
        "refused to sign %s%s with %s: %s",
        kind.value,
        subject,
        ", ".join(f"0x{pubkey.hex()[:12]}" for pubkey in pubkeys[:3])
        + (f" and {len(pubkeys) - 3} more" if len(pubkeys) > 3 else ""),
        refusal,
    )


def report_batch_refusals(
    kind: SigningKind, results: Sequence[SigningResult], what: str = ""
) -> None:
    """Count every refusal of a batch and log once per distinct refusal."""
    by_refusal: dict[Refusal, list[bytes]] = defaultdict(list)
    for result in results:
        if result.refusal is not None:
            by_refusal[result.refusal].append(result.pubkey)
    for refusal, pubkeys in by_refusal.items():
        report_refusal(kind, pubkeys, refusal, what)
