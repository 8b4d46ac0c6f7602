"""Prometheus metrics of the Beacon API client (default registry).

``endpoint`` is always the route template (``/eth/v1/validator/duties/attester/{epoch}``),
never the concrete path, so label cardinality stays bounded.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

REQUEST_SECONDS = Histogram(
    "validator_beacon_node_request_seconds",
    "Time of one HTTP request to one beacon node, failed or not, by route template.",
    ["endpoint"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0),
)

REQUEST_ERRORS = Counter(
    "validator_beacon_node_request_errors",
    "Failed requests to one beacon node, by route template and reason "
    "(connection, timeout, malformed, http_<status>, disconnected).",
    ["endpoint", "reason"],
)

NODE_HEALTHY = Gauge(
    "validator_beacon_node_healthy",
    "1 while the beacon node's last health check found it synced (its /eth/v1/node/health "
    "and /eth/v1/node/syncing answers), 0 otherwise: not yet checked, syncing, optimistic, "
    "unreachable. One request's error answer does not change it.",
    ["node"],
)
