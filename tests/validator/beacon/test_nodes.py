"""Node URLs and the order in which nodes are asked."""

from __future__ import annotations

import pytest

from validator.beacon import BeaconNodeClient, NodeHealth, NodeUnavailableError, RequestTimeouts
from validator.beacon.errors import BeaconApiError
from validator.beacon.nodes import NodePool, display_url, normalize_node_url
from validator.beacon.types import SyncingStatus


def test_urls_are_normalized_and_checked() -> None:
    assert normalize_node_url(" http://127.0.0.1:5052/ ") == "http://127.0.0.1:5052"
    assert normalize_node_url("https://bn.example/api/") == "https://bn.example/api"
    for bad in ("ftp://host", "localhost:5052", "http://", "http://host/?x=1"):
        with pytest.raises(ValueError, match="beacon node URL"):
            normalize_node_url(bad)
    with pytest.raises(ValueError, match="listed twice"):
        NodePool(["http://a:1/", "http://a:1"])
    with pytest.raises(ValueError, match="at least one"):
        NodePool([])


def test_credentials_never_show_in_names() -> None:
    assert display_url("http://user:secret@bn.example:5052") == "http://bn.example:5052"
    pool = NodePool(["http://user:secret@bn.example:5052"])
    assert pool.nodes[0].name == "http://bn.example:5052"
    assert pool.nodes[0].url == "http://user:secret@bn.example:5052"


def status(*, syncing: bool = False, distance: int = 0, optimistic: bool = False) -> SyncingStatus:
    return SyncingStatus(100, distance, syncing, optimistic, False)


def test_preference_order_and_publish_targets() -> None:
    pool = NodePool([f"http://n{i}:1" for i in range(5)])
    n0, n1, n2, n3, n4 = pool.nodes
    pool.record_failure(n0, NodeUnavailableError("refused"))
    pool.record_check(n1, status(syncing=True, distance=50), now=1.0)
    pool.record_check(n2, status(optimistic=True), now=1.0)
    pool.record_check(n4, status(), now=1.0)
    assert [node.health for node in pool.nodes] == [
        NodeHealth.OFFLINE,
        NodeHealth.SYNCING,
        NodeHealth.OPTIMISTIC,
        NodeHealth.UNKNOWN,
        NodeHealth.SYNCED,
    ]
    assert pool.by_preference() == [n4, n3, n2, n1, n0]
    assert pool.publish_targets() == [n1, n2, n3, n4]
    # Unhealthy nodes are due at every tick, synced ones once their check is old.
    assert pool.due_for_check(2.0, synced_recheck_after=5.0) == [n0, n1, n2, n3]
    assert pool.due_for_check(6.0, synced_recheck_after=5.0) == [n0, n1, n2, n3, n4]


def test_only_node_level_failures_demote() -> None:
    pool = NodePool(["http://a:1"])
    (node,) = pool.nodes
    pool.record_check(node, status(), now=0.0)
    pool.record_failure(node, BeaconApiError(404, "not found"))
    assert node.health is NodeHealth.SYNCED
    pool.record_failure(node, BeaconApiError(503, "syncing"))
    assert node.health is NodeHealth.SYNCED
    pool.record_failure(node, NodeUnavailableError("refused"))
    assert node.health is NodeHealth.OFFLINE and node.consecutive_failures == 2
    # When every node is offline, publishing still tries them all.
    assert pool.publish_targets() == [node]


async def test_closed_client_refuses_requests() -> None:
    client = BeaconNodeClient(["http://127.0.0.1:1"])
    await client.close()
    with pytest.raises(RuntimeError, match="closed"):
        await client.get_genesis()


def test_timeouts_are_sized_to_the_slot() -> None:
    assert RequestTimeouts.for_slot(12) == RequestTimeouts()
    quick = RequestTimeouts.for_slot(2)
    assert (quick.attestation, quick.sync_committee, quick.health) == (0.5, 0.5, 0.5)
    assert (quick.proposal, quick.duties, quick.subscriptions, quick.events_connect) == (1, 1, 1, 1)
    assert quick.default == 2
    with pytest.raises(ValueError, match="positive"):
        RequestTimeouts.for_slot(0)
