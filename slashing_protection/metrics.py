"""Prometheus metrics of the record, in the default registry (the validator serves them)."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

WRITE_SECONDS = Histogram(
    "validator_slashing_protection_write_seconds",
    "Time to write the slashing-protection record durably (temp file, fsync, rename, "
    "directory fsync), successful or not.",
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)

WRITE_FAILURES = Counter(
    "validator_slashing_protection_write_failures_total",
    "Durable writes of the slashing-protection record that failed; every message of such a "
    "write was refused.",
)
