"""Prometheus metrics of the validator client, in the default registry.

Every name starts with ``validator_``. The slashing-protection record defines
its own write metrics (``validator_slashing_protection_write_seconds`` and
``validator_slashing_protection_write_failures_total``) in
``slashing_protection.metrics``, re-exported here so that importing this module
registers them; the Beacon API client defines its request metrics in
``validator.beacon.metrics``. All of them land in the same default registry, so
one ``/metrics`` endpoint serves them together.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from slashing_protection.metrics import WRITE_FAILURES as SLASHING_PROTECTION_WRITE_FAILURES
from slashing_protection.metrics import WRITE_SECONDS as SLASHING_PROTECTION_WRITE_SECONDS

SIGNATURES = Counter(
    "validator_signatures_total",
    "Signatures the signer made, by message kind.",
    ["kind"],
)

SIGNATURE_REFUSALS = Counter(
    "validator_signature_refusals_total",
    "Signing requests the signer refused (nothing was signed for them), by message kind and "
    "reason.",
    ["kind", "reason"],
)

ATTESTATION_BATCH_SECONDS = Histogram(
    "validator_attestation_batch_seconds",
    "Time to handle one batch of attestations (normally one slot's): checks, one durable "
    "slashing-protection write, and the signatures.",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)

BLOCK_SIGNING_SECONDS = Histogram(
    "validator_block_signing_seconds",
    "Time to sign one block: checks, one durable slashing-protection write, and the signature.",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
)

SIGNING_KEYS = Gauge(
    "validator_signing_keys",
    "Keys the signer currently holds.",
)

__all__ = [
    "ATTESTATION_BATCH_SECONDS",
    "BLOCK_SIGNING_SECONDS",
    "SIGNATURES",
    "SIGNATURE_REFUSALS",
    "SIGNING_KEYS",
    "SLASHING_PROTECTION_WRITE_FAILURES",
    "SLASHING_PROTECTION_WRITE_SECONDS",
]
