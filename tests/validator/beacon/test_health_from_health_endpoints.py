"""A 5xx answer to one request is that request's failure: the node stays healthy and keeps
its traffic. Health comes from /eth/v1/node/health and /eth/v1/node/syncing and from
connection failures, and is exposed as validator_beacon_node_healthy{node}. Every failed
attempt is counted by endpoint and status."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from prometheus_client import REGISTRY

from tests.support import canned
from tests.support.beacon_fixtures import ClientFactory, NodeStarter
from validator.beacon import BeaconApiError, NodeHealth, routes

HEALTHY = "validator_beacon_node_healthy"
ERRORS = "validator_beacon_node_request_errors_total"


def healthy(url: str) -> float | None:
    return REGISTRY.get_sample_value(HEALTHY, {"node": url})


def errors(endpoint: str, reason: str) -> float:
    labels = {"endpoint": endpoint, "reason": reason}
    return REGISTRY.get_sample_value(ERRORS, labels) or 0.0


async def test_a_500_to_one_request_leaves_the_node_healthy_and_preferred(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    first, first_url = await start_node(name="first")
    second, second_url = await start_node(name="second")
    client = await make_client([first_url, second_url])
    assert healthy(first_url) == 1 and healthy(second_url) == 1
    rejected = canned.error(500, "SYNC_COMMITTEE_ERROR_NOT_CURRENT_SLOT")
    first.misbehave(routes.CONTRIBUTION_AND_PROOFS, status=500, body=rejected, times=1)
    out_of_range = canned.error(500, "EPOCH_CONTEXT_ERROR_DECISION_ROOT_EPOCH_OUT_OF_RANGE")
    first.misbehave(routes.ATTESTER_DUTIES, status=500, body=out_of_range, times=1)
    publish_errors = errors(routes.CONTRIBUTION_AND_PROOFS, "http_500")
    duty_errors = errors(routes.ATTESTER_DUTIES, "http_500")

    result = await client.publish_contribution_and_proofs(
        [canned.signed_contribution_and_proof(9, 1)]
    )
    assert result.accepted == {second_url: 200}
    await client.get_attester_duties(1, [1])  # fails over to the second node for this one

    assert errors(routes.CONTRIBUTION_AND_PROOFS, "http_500") == publish_errors + 1
    assert errors(routes.ATTESTER_DUTIES, "http_500") == duty_errors + 1
    assert client.nodes[0].health is NodeHealth.SYNCED
    assert healthy(first_url) == 1
    # The first node still gets the next request first, and every publication.
    await client.get_attester_duties(1, [1])
    assert len(first.requests_to(routes.ATTESTER_DUTIES)) == 2
    assert len(second.requests_to(routes.ATTESTER_DUTIES)) == 1
    await client.publish_contribution_and_proofs([canned.signed_contribution_and_proof(10, 1)])
    assert len(first.requests_to(routes.CONTRIBUTION_AND_PROOFS)) == 2


async def test_with_one_node_a_500_does_not_take_it_offline(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node()
    client = await make_client([url])
    node.misbehave(routes.ATTESTER_DUTIES, status=500, body=canned.error(500, "boom"), times=1)
    with pytest.raises(BeaconApiError):
        await client.get_attester_duties(1, [1])
    assert client.nodes[0].health is NodeHealth.SYNCED and healthy(url) == 1
    assert (await client.get_attester_duties(1, [1])).duties is not None


async def test_a_connection_failure_makes_a_node_unhealthy(
    start_node: NodeStarter, make_client: ClientFactory, unused_url: Callable[[], str]
) -> None:
    dead = unused_url()
    _, url = await start_node()
    client = await make_client([dead, url])
    assert client.nodes[0].health is NodeHealth.OFFLINE
    assert healthy(dead) == 0 and healthy(url) == 1


@pytest.mark.parametrize(
    ("status", "health"), [(503, NodeHealth.OFFLINE), (206, NodeHealth.SYNCING)]
)
async def test_the_health_endpoint_is_heard(
    start_node: NodeStarter, make_client: ClientFactory, status: int, health: NodeHealth
) -> None:
    node, url = await start_node()
    client = await make_client([url], health_check_interval=0.05)
    assert healthy(url) == 1
    node.misbehave(routes.NODE_HEALTH, status=status, body=None)
    async with asyncio.timeout(3):
        while client.nodes[0].health is not health:
            await asyncio.sleep(0.02)
    assert healthy(url) == 0
    node.behave(routes.NODE_HEALTH)
    async with asyncio.timeout(3):
        while client.nodes[0].health is not NodeHealth.SYNCED:
            await asyncio.sleep(0.02)
    assert healthy(url) == 1
