"""Several beacon nodes: failover for fetches, publish-to-all, health re-checks."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import pytest

from tests.support import canned
from tests.support.beacon_fixtures import ClientFactory, NodeStarter
from validator.beacon import (
    BeaconApiError,
    BeaconNodeClient,
    NodeHealth,
    NodeTimeoutError,
    NodeUnavailableError,
    routes,
)

SYNCING_503 = canned.error(503, "Beacon node is currently syncing")


async def test_fetch_fails_over_on_503_and_prefers_the_healthy_node(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    first, first_url = await start_node(name="first")
    second, second_url = await start_node(name="second")
    client = await make_client([first_url, second_url])
    first.misbehave(routes.ATTESTATION_DATA, status=503, body=SYNCING_503)

    assert await client.get_attestation_data(7) == canned.attestation_data(7)
    assert len(first.requests_to(routes.ATTESTATION_DATA)) == 1
    assert len(second.requests_to(routes.ATTESTATION_DATA)) == 1
    # One endpoint's 503 is that request's failure; health is the health checks' business.
    assert client.nodes[0].health is NodeHealth.SYNCED


async def test_fetch_fails_over_on_timeout_within_the_per_request_budget(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    first, first_url = await start_node(name="first")
    second, second_url = await start_node(name="second")
    client = await make_client([first_url, second_url])
    first.misbehave(routes.ATTESTATION_DATA, delay=5.0)

    started = time.perf_counter()
    assert await client.get_attestation_data(9) == canned.attestation_data(9)
    elapsed = time.perf_counter() - started
    # One attestation timeout (0.3 s in these tests) on the slow node, then the other.
    assert client.timeouts.attestation <= elapsed < client.timeouts.attestation + 1.5
    assert client.nodes[0].health is NodeHealth.SYNCED
    assert client.nodes[0].last_error == "no answer within 0.3 s"


async def test_fetch_fails_over_on_connection_refused(
    start_node: NodeStarter, make_client: ClientFactory, unused_url: Callable[[], str]
) -> None:
    dead_url = unused_url()
    second, second_url = await start_node(name="second")
    client = await make_client([dead_url, second_url])

    # The start-up health check already found the first node unreachable, so the
    # fetch goes straight to the second.
    assert client.nodes[0].health is NodeHealth.OFFLINE
    assert client.nodes[1].health is NodeHealth.SYNCED
    assert (await client.get_genesis()).genesis_time == 1606824023
    assert len(second.requests_to(routes.GENESIS)) == 1


async def test_unchecked_nodes_are_tried_in_order_and_failed_over(
    start_node: NodeStarter, unused_url: Callable[[], str]
) -> None:
    second, second_url = await start_node(name="second")
    dead_url = unused_url()
    # No start(): nothing known about either node, so the configured order holds.
    client = BeaconNodeClient([dead_url, second_url])
    try:
        assert (await client.get_genesis()).genesis_time == 1606824023
        assert client.nodes[0].health is NodeHealth.OFFLINE
        assert "Connect" in (client.nodes[0].last_error or "")
    finally:
        await client.close()


async def test_every_node_failing_raises_the_most_telling_error(
    start_node: NodeStarter, make_client: ClientFactory, unused_url: Callable[[], str]
) -> None:
    dead_url = unused_url()
    node, url = await start_node()
    client = await make_client([dead_url, url])
    node.misbehave(
        routes.AGGREGATE_ATTESTATION_V2, status=404, body=canned.error(404, "No aggregate known")
    )
    with pytest.raises(BeaconApiError) as raised:
        await client.get_aggregate_attestation(9, b"\x01" * 32, 0)
    error = raised.value
    assert (error.status, error.message, error.node) == (404, "No aggregate known", url)
    assert [type(attempt) for attempt in error.attempts] == [BeaconApiError, NodeUnavailableError]
    text = str(error)
    assert text.startswith(f"beacon node {url} /eth/v2/validator/aggregate_attestation: HTTP 404")
    assert f"other nodes: {dead_url}: " in text
    # A 4xx is an answer about the request, not about the node's health.
    assert client.nodes[1].health is NodeHealth.SYNCED


async def test_timeouts_everywhere_raise_a_timeout_error(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node()
    client = await make_client([url])
    node.misbehave(routes.ATTESTATION_DATA, delay=5.0)
    with pytest.raises(NodeTimeoutError, match=r"no answer within 0\.3 s"):
        await client.get_attestation_data(1)


async def test_a_node_answering_4xx_is_failed_over_without_demotion(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    first, first_url = await start_node(name="first")
    second, second_url = await start_node(name="second")
    client = await make_client([first_url, second_url])
    first.misbehave(
        routes.AGGREGATE_ATTESTATION_V2, status=404, body=canned.error(404, "not seen"), times=1
    )
    aggregate = await client.get_aggregate_attestation(9, b"\x01" * 32, 0)
    assert aggregate.version == "electra"
    assert len(second.requests_to(routes.AGGREGATE_ATTESTATION_V2)) == 1
    assert client.nodes[0].health is NodeHealth.SYNCED


async def test_signed_messages_go_to_every_node(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    first, first_url = await start_node(name="first")
    second, second_url = await start_node(name="second")
    client = await make_client([first_url, second_url])
    attestations = [canned.single_attestation(9, 1)]

    result = await client.publish_attestations(attestations, consensus_version="electra")
    assert result.accepted == {first_url: 200, second_url: 200}
    assert result.errors == ()
    for node in (first, second):
        (request,) = node.requests_to(routes.POOL_ATTESTATIONS_V2)
        assert request.json() == attestations


async def test_publishing_succeeds_when_one_node_accepts(
    start_node: NodeStarter, make_client: ClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    first, first_url = await start_node(name="first")
    second, second_url = await start_node(name="second")
    client = await make_client([first_url, second_url])
    first.misbehave(routes.PUBLISH_BLOCK_V2, status=500, body=canned.error(500, "db locked"))

    with caplog.at_level(logging.WARNING, logger="validator.beacon"):
        result = await client.publish_block(
            canned.signed_block_contents(9), consensus_version="electra"
        )
    assert result.accepted == {second_url: 200}
    (error,) = result.errors
    assert isinstance(error, BeaconApiError) and error.status == 500
    assert any("HTTP 500: db locked" in record.getMessage() for record in caplog.records)
    assert client.nodes[0].health is NodeHealth.SYNCED


async def test_publishing_fails_only_when_no_node_accepts(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    first, first_url = await start_node(name="first")
    second, second_url = await start_node(name="second")
    client = await make_client([first_url, second_url])
    failures = canned.indexed_error([(1, "invalid signature")])
    for node in (first, second):
        node.misbehave(routes.POOL_SYNC_COMMITTEES, status=400, body=failures)

    messages = [canned.sync_committee_message(9, 1), canned.sync_committee_message(9, 2)]
    with pytest.raises(BeaconApiError) as raised:
        await client.publish_sync_committee_messages(messages)
    assert raised.value.status == 400
    assert [(f.index, f.message) for f in raised.value.failures] == [(1, "invalid signature")]
    assert "item 1: invalid signature" in str(raised.value)
    assert len(raised.value.attempts) == 2


async def test_publishing_skips_nodes_known_offline(
    start_node: NodeStarter, make_client: ClientFactory, unused_url: Callable[[], str]
) -> None:
    dead_url = unused_url()
    node, url = await start_node()
    client = await make_client([dead_url, url])
    published = await client.publish_voluntary_exit(canned.signed_voluntary_exit(3))
    assert published.accepted == {url: 200}
    assert published.errors == ()  # the offline node was not even tried


async def test_unhealthy_node_is_rechecked_and_preferred_again(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    first, first_url = await start_node(name="first")
    second, second_url = await start_node(name="second")
    first.syncing_answer = canned.syncing(is_syncing=True, distance=40)
    client = await make_client([first_url, second_url], health_check_interval=0.05)
    assert client.nodes[0].health is NodeHealth.SYNCING

    await client.get_proposer_duties(1)
    assert len(second.requests_to(routes.PROPOSER_DUTIES)) == 1

    first.syncing_answer = canned.syncing()
    async with asyncio.timeout(3):
        while client.nodes[0].health is not NodeHealth.SYNCED:
            await asyncio.sleep(0.02)
    await client.get_proposer_duties(1)
    assert len(first.requests_to(routes.PROPOSER_DUTIES)) == 1


async def test_health_reflects_optimistic_and_lagging_nodes(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    optimistic, optimistic_url = await start_node(name="optimistic")
    close, close_url = await start_node(name="close")
    optimistic.syncing_answer = canned.syncing(optimistic=True)
    # Within the sync tolerance (2 slots) a node still counts as synced.
    close.syncing_answer = canned.syncing(is_syncing=True, distance=2)
    client = await make_client([optimistic_url, close_url])
    assert [node.health for node in client.nodes] == [NodeHealth.OPTIMISTIC, NodeHealth.SYNCED]
    assert await client.wait_for_synced_node(poll_interval=0.01) is client.nodes[1]


async def test_wait_for_synced_node_polls_until_one_is_synced(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node()
    node.syncing_answer = canned.syncing(is_syncing=True, distance=100)
    client = await make_client([url])
    waiting = asyncio.create_task(client.wait_for_synced_node(poll_interval=0.02))
    await asyncio.sleep(0.1)
    assert not waiting.done()
    node.syncing_answer = canned.syncing()
    async with asyncio.timeout(3):
        assert await waiting is client.nodes[0]
