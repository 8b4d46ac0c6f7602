"""Fixtures: the Beacon API spec, fake beacon nodes, and strict clients."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest

from tests.beacon.fake_node import FakeBeaconNode
from tests.official_vectors import official_vectors
from validator.beacon import BeaconNodeClient, RequestTimeouts
from validator.devnet.openapi_check import BeaconApiSpec, load_beacon_api_spec
from validator.devnet.openapi_checkers import StrictClientChecker

# Failover tests time out attestation work (0.3 s per node); everything else gets
# room to spare so that a loaded CI machine does not turn answers into timeouts.
TEST_TIMEOUTS = RequestTimeouts(
    default=3.0,
    health=2.0,
    duties=3.0,
    attestation=0.3,
    proposal=3.0,
    sync_committee=2.0,
    subscriptions=3.0,
    events_connect=3.0,
)


@pytest.fixture(scope="session")
def spec() -> BeaconApiSpec:
    return load_beacon_api_spec(official_vectors("beacon-api"))


@pytest.fixture
def unused_url() -> Iterator[Callable[[], str]]:
    """URLs of ports nothing listens on (connection refused)."""

    def make() -> str:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        return f"http://127.0.0.1:{port}"

    yield make


NodeFactory = Callable[..., Awaitable[tuple[FakeBeaconNode, str]]]


@pytest.fixture
async def fake_node(spec: BeaconApiSpec, aiohttp_server: Any) -> AsyncIterator[NodeFactory]:
    """Start fake beacon nodes; at the end, assert that none saw a spec violation."""
    started: list[FakeBeaconNode] = []

    async def start(*, strict: bool = True, name: str = "node") -> tuple[FakeBeaconNode, str]:
        node = FakeBeaconNode(spec if strict else None, name=name)
        server = await aiohttp_server(node.app())
        started.append(node)
        return node, str(server.make_url("")).rstrip("/")

    yield start
    for node in started:
        node.release()
    violations = [str(v) for node in started if node.checker for v in node.checker.violations]
    assert violations == [], "the client or the double broke the Beacon API spec"


ClientFactory = Callable[..., Awaitable[BeaconNodeClient]]


@pytest.fixture
async def make_client(spec: BeaconApiSpec) -> AsyncIterator[ClientFactory]:
    """Start clients in client-side strict mode; they are closed at the end."""
    clients: list[BeaconNodeClient] = []
    checkers: list[StrictClientChecker] = []

    async def make(urls: list[str], *, strict: bool = True, **options: Any) -> BeaconNodeClient:
        middlewares = []
        if strict:
            checker = StrictClientChecker(spec)
            checkers.append(checker)
            middlewares.append(checker)
        options.setdefault("timeouts", TEST_TIMEOUTS)
        options.setdefault("health_check_interval", 60.0)
        client = BeaconNodeClient(urls, middlewares=middlewares, **options)
        clients.append(client)
        await client.start()
        return client

    yield make
    for client in clients:
        await client.close()
    assert [str(v) for checker in checkers for v in checker.violations] == []
