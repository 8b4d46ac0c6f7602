"""Prometheus metrics of the shared record (beside the file record's write time and failures,
which the shared record also feeds: a transaction is its write)."""

from __future__ import annotations

from prometheus_client import Counter

DB_INCIDENTS = Counter(
    "validator_slashing_protection_db_incidents_total",
    "Times the slashing-protection database became unusable (unreachable, connection lost, "
    "a failed commit); counted once per incident, until the next transaction succeeds.",
)

ROLLBACK_ALARMS = Counter(
    "validator_slashing_protection_rollback_alarms_total",
    "Keys found in the slashing-protection database with a watermark below one this process "
    "had committed or read before (a failover that lost transactions?); each was refused.",
)

TX_RETRIES = Counter(
    "validator_slashing_protection_db_retries_total",
    "Slashing-protection transactions retried after a serialization failure or a deadlock.",
)
