"""The configured beacon nodes and what the client knows about their health.

Requests go to nodes in order of preference: synced nodes first (in the order the
operator listed them), then nodes not yet checked, then optimistic or execution-
offline ones, then syncing ones, and last the unreachable ones, which are still
tried as a last resort. Signed messages go to every node not known to be offline.

Health comes from the node's own health and syncing endpoints and from connection
failures, never from one endpoint's answer: a 5xx, a timeout or a malformed answer
to one request is that request's failure (the fetch fails over for it), and the node
keeps its place. A connection failure moves a node down at once; only a health
check moves it back up.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from yarl import URL

from validator.beacon.errors import BeaconApiError, BeaconNodeError, NodeUnavailableError
from validator.beacon.metrics import NODE_HEALTHY
from validator.beacon.types import SyncingStatus

log = logging.getLogger("validator.beacon")


class NodeHealth(enum.Enum):
    SYNCED = "synced"
    UNKNOWN = "unknown"
    OPTIMISTIC = "optimistic"  # optimistic head or execution client offline
    SYNCING = "syncing"
    OFFLINE = "offline"  # unreachable, or its health endpoint says it is not ready


_PREFERENCE = {
    NodeHealth.SYNCED: 0,
    NodeHealth.UNKNOWN: 1,
    NodeHealth.OPTIMISTIC: 2,
    NodeHealth.SYNCING: 3,
    NodeHealth.OFFLINE: 4,
}


def normalize_node_url(url: str) -> str:
    """A beacon node base URL without a trailing slash; http(s) with a host only."""
    parsed = URL(url.strip())
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ValueError(f"beacon node URL must be http(s)://host[:port][/path], got {url!r}")
    if parsed.query_string or parsed.fragment:
        raise ValueError(f"beacon node URL must not have a query or fragment: {url!r}")
    return str(parsed).rstrip("/")


def display_url(url: str) -> str:
    """The URL as logs and errors show it: any user name or password removed."""
    return str(URL(url).with_user(None))


@dataclass
class BeaconNode:
    """One configured beacon node and its last known health."""

    url: str
    position: int
    health: NodeHealth = NodeHealth.UNKNOWN
    syncing: SyncingStatus | None = None
    last_error: str | None = None
    consecutive_failures: int = 0
    #: Event-loop time of the last health check, None before the first.
    last_checked: float | None = None

    @property
    def name(self) -> str:
        return display_url(self.url)


class NodePool:
    def __init__(self, urls: Sequence[str], *, sync_tolerance: int = 2) -> None:
        if not urls:
            raise ValueError("at least one beacon node URL is needed")
        normalized = [normalize_node_url(url) for url in urls]
        if len(set(normalized)) != len(normalized):
            raise ValueError("the same beacon node URL is listed twice")
        self.sync_tolerance = sync_tolerance
        self.nodes = tuple(BeaconNode(url, position) for position, url in enumerate(normalized))
        for node in self.nodes:
            NODE_HEALTHY.labels(node.name).set(0)

    def by_preference(self) -> list[BeaconNode]:
        """Every node, the one to ask first at the front."""
        return sorted(self.nodes, key=lambda node: (_PREFERENCE[node.health], node.position))

    def publish_targets(self) -> list[BeaconNode]:
        """Nodes to send signed messages to: all not known offline (all if none is)."""
        reachable = [node for node in self.nodes if node.health is not NodeHealth.OFFLINE]
        return reachable or list(self.nodes)

    def synced(self) -> list[BeaconNode]:
        return [node for node in self.by_preference() if node.health is NodeHealth.SYNCED]

    def due_for_check(self, now: float, *, synced_recheck_after: float) -> list[BeaconNode]:
        """Unhealthy nodes always; synced ones once their last check is old enough."""
        return [
            node
            for node in self.nodes
            if node.health is not NodeHealth.SYNCED
            or node.last_checked is None
            or now - node.last_checked >= synced_recheck_after
        ]

    def _set_health(self, node: BeaconNode, health: NodeHealth, why: str) -> None:
        if node.health is not health:
            level = logging.INFO if health is NodeHealth.SYNCED else logging.WARNING
            log.log(level, "beacon node %s is now %s (%s)", node.name, health.value, why)
        node.health = health
        NODE_HEALTHY.labels(node.name).set(1 if health is NodeHealth.SYNCED else 0)

    def record_failure(self, node: BeaconNode, error: BeaconNodeError) -> None:
        """Note a failed request; only a connection failure says the node is unhealthy.

        An HTTP error (4xx or 5xx), a timeout or a malformed answer is about that one
        request: a node that answers one endpoint with 500 (a message it judged invalid,
        a duty query it cannot serve) may be serving everything else well.
        """
        if isinstance(error, BeaconApiError) and error.status < 500:
            return
        node.consecutive_failures += 1
        node.last_error = error.detail
        if isinstance(error, NodeUnavailableError):
            self._set_health(node, NodeHealth.OFFLINE, error.detail)

    def record_success(self, node: BeaconNode) -> None:
        node.consecutive_failures = 0

    def record_check(
        self, node: BeaconNode, status: SyncingStatus, now: float, *, health_status: int = 200
    ) -> None:
        """Set ``node``'s health from its ``/eth/v1/node/syncing`` and ``/node/health`` answers.

        ``health_status`` is ``/eth/v1/node/health``'s status: 206 says syncing whatever
        the syncing answer's tolerance; 200, or a node without the endpoint, defers to it.
        """
        node.syncing = status
        node.last_checked = now
        node.consecutive_failures = 0
        node.last_error = None
        if health_status == 206:
            self._set_health(node, NodeHealth.SYNCING, "/eth/v1/node/health answers 206")
        elif status.is_syncing and status.sync_distance > self.sync_tolerance:
            self._set_health(node, NodeHealth.SYNCING, f"{status.sync_distance} slots behind")
        elif status.is_optimistic or status.el_offline:
            why = "execution client offline" if status.el_offline else "optimistic head"
            self._set_health(node, NodeHealth.OPTIMISTIC, why)
        else:
            self._set_health(node, NodeHealth.SYNCED, f"head slot {status.head_slot}")

    def record_failed_check(self, node: BeaconNode, error: BeaconNodeError, now: float) -> None:
        node.last_checked = now
        node.consecutive_failures += 1
        node.last_error = error.detail
        self._set_health(node, NodeHealth.OFFLINE, error.detail)
