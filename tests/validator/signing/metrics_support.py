"""Reading the signer's counters (default registry) as differences."""

from __future__ import annotations

from prometheus_client import REGISTRY


def signatures(kind: str) -> float:
    return REGISTRY.get_sample_value("validator_signatures_total", {"kind": kind}) or 0.0


def refusals(kind: str, reason: str) -> float:
    value = REGISTRY.get_sample_value(
        "validator_signature_refusals_total", {"kind": kind, "reason": reason}
    )
    return value or 0.0
