"""Failures map to typed errors with readable messages; every attempt is measured.

Nodes here that send non-standard answers on purpose run without strict mode.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from prometheus_client import REGISTRY, generate_latest

from tests.support import canned
from tests.support.beacon_fixtures import ClientFactory, NodeStarter
from validator.beacon import (
    BeaconApiError,
    MalformedResponseError,
    NodeHealth,
    NodeTimeoutError,
    routes,
)

SECONDS = "validator_beacon_node_request_seconds_count"
ERRORS = "validator_beacon_node_request_errors_total"


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_api_error_body_is_kept(start_node: NodeStarter, make_client: ClientFactory) -> None:
    node, url = await start_node()
    client = await make_client([url])
    node.misbehave(
        routes.ATTESTER_DUTIES, status=400, body=canned.error(400, "Invalid epoch: 99999")
    )
    with pytest.raises(BeaconApiError) as raised:
        await client.get_attester_duties(99999, [1])
    error = raised.value
    assert (error.status, error.code, error.message, error.failures) == (
        400,
        400,
        "Invalid epoch: 99999",
        (),
    )
    assert str(error) == (
        f"beacon node {url} /eth/v1/validator/duties/attester/{{epoch}}: "
        "HTTP 400: Invalid epoch: 99999"
    )


async def test_error_without_a_json_body_still_reads_well(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node(strict=False)
    client = await make_client([url], strict=False)
    node.misbehave(
        routes.GENESIS, status=502, raw_body=b"<html>Bad Gateway</html>", content_type="text/html"
    )
    with pytest.raises(BeaconApiError, match=r"HTTP 502: <html>Bad Gateway</html>") as raised:
        await client.get_genesis()
    assert raised.value.reason == "http_502"


@pytest.mark.parametrize(
    ("route", "how", "call", "message"),
    [
        (routes.ATTESTATION_DATA, {"body": {"data": "soon"}},
         lambda c: c.get_attestation_data(1), "attestation data is not a JSON object"),
        (routes.GENESIS, {"raw_body": b"{truncated", "content_type": "application/json"},
         lambda c: c.get_genesis(), "body is not JSON"),
        (routes.GENESIS, {"raw_body": b"<html/>", "content_type": "text/html"},
         lambda c: c.get_genesis(), "expected JSON, got Content-Type 'text/html'"),
        (routes.ATTESTER_DUTIES,
         {"body": {**canned.attester_duties(1, [1]), "dependent_root": "0x1234"}},
         lambda c: c.get_attester_duties(1, [1]), "dependent_root is not 32-byte 0x-hex"),
        (routes.PROPOSER_DUTIES,
         {"body": {"dependent_root": canned.root(1), "data": [{"slot": "1"}]}},
         lambda c: c.get_proposer_duties(0), "proposer duty has no 'pubkey'"),
        (routes.PRODUCE_BLOCK_V3,
         {"body": canned.produced_block(5)[0],
          "headers": {**canned.produced_block(5)[1], "Eth-Consensus-Version": "deneb"}},
         lambda c: c.produce_block(5, b"\x11" * 96),
         "header Eth-Consensus-Version says 'deneb' but the body says 'electra'"),
        (routes.PRODUCE_BLOCK_V3,
         {"raw_body": b"ssz", "content_type": "application/octet-stream"},
         lambda c: c.produce_block(5, b"\x11" * 96, ssz=True),
         "an SSZ block needs the Eth-Consensus-Version"),
    ],
    ids=["data not object", "broken JSON", "not JSON", "short root", "missing field",
         "headers disagree", "SSZ without headers"],
)  # fmt: skip
async def test_malformed_answers_raise_malformed_response_error(
    start_node: NodeStarter,
    make_client: ClientFactory,
    route: str,
    how: dict[str, object],
    call: object,
    message: str,
) -> None:
    node, url = await start_node(strict=False)
    client = await make_client([url], strict=False)
    node.misbehave(route, **how)
    before = sample(ERRORS, endpoint=route, reason="malformed")
    with pytest.raises(MalformedResponseError, match=message) as raised:
        await call(client)  # type: ignore[operator]
    assert raised.value.node == url and raised.value.endpoint == route
    assert sample(ERRORS, endpoint=route, reason="malformed") == before + 1
    assert client.nodes[0].health is NodeHealth.SYNCED


async def test_a_malformed_answer_fails_over_to_the_next_node(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    broken, broken_url = await start_node(strict=False, name="broken")
    good, good_url = await start_node(name="good")
    client = await make_client([broken_url, good_url], strict=False)
    broken.misbehave(routes.BLOCK_ROOT, body={"data": {"root": "0xnothex"}})
    assert (await client.get_block_root()).root == bytes([0x31]) * 32
    assert len(good.requests_to(routes.BLOCK_ROOT)) == 1


async def test_attempts_are_timed_and_failures_counted_by_route_template(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    first, first_url = await start_node(name="first")
    second, second_url = await start_node(name="second")
    client = await make_client([first_url, second_url])
    route = routes.PROPOSER_DUTIES
    first.misbehave(route, status=503, body=canned.error(503, "syncing"), times=1)
    timed = sample(SECONDS, endpoint=route)
    failed = sample(ERRORS, endpoint=route, reason="http_503")

    await client.get_proposer_duties(7)

    assert sample(SECONDS, endpoint=route) == timed + 2  # both attempts timed
    assert sample(ERRORS, endpoint=route, reason="http_503") == failed + 1
    # The concrete path never becomes a label.
    assert sample(SECONDS, endpoint="/eth/v1/validator/duties/proposer/7") == 0.0
    exposition = generate_latest(REGISTRY).decode()
    assert (
        'validator_beacon_node_request_seconds_bucket{endpoint="'
        '/eth/v1/validator/duties/proposer/{epoch}",le="0.005"}'
    ) in exposition


async def test_timeouts_and_refused_connections_are_counted(
    start_node: NodeStarter, make_client: ClientFactory, unused_url: Callable[[], str]
) -> None:
    node, url = await start_node()
    dead_url = unused_url()
    client = await make_client([url, dead_url])
    node.misbehave(routes.ATTESTATION_DATA, delay=5.0)
    timeouts = sample(ERRORS, endpoint=routes.ATTESTATION_DATA, reason="timeout")
    refused = sample(ERRORS, endpoint=routes.ATTESTATION_DATA, reason="connection")
    with pytest.raises(NodeTimeoutError, match=r"no answer within 0\.3 s"):
        await client.get_attestation_data(3)
    assert sample(ERRORS, endpoint=routes.ATTESTATION_DATA, reason="timeout") == timeouts + 1
    assert sample(ERRORS, endpoint=routes.ATTESTATION_DATA, reason="connection") == refused + 1
