"""Fixtures every room may use: the Beacon API spec, Beacon API test doubles served on
loopback, strict Beacon API clients, and URLs nothing listens on.

Helpers and doubles themselves live in ``tests/support/``; a room's own fixtures live in
its ``conftest.py``.
"""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, cast

import pytest

from crypto_backend.threads import LANES_ENV
from slashing_protection.postgres import db_init
from tests.support.beacon_fixtures import TEST_TIMEOUTS, ClientFactory, NodeStarter
from tests.support.fake_node import FakeBeaconNode
from tests.support.official_vectors import official_vectors
from tests.support.pg_cluster import Cluster
from tests.support.postgres import fresh_database, start_cluster
from validator.beacon import BeaconNodeClient
from validator.devnet.strict_mode.checkers import StrictClientChecker
from validator.devnet.strict_mode.openapi_spec import (
    BeaconApiSpec,
    load_beacon_api_spec,
    load_web3signer_spec,
)


def pytest_configure(config: pytest.Config) -> None:
    # One lane (native thread) per pytest-xdist worker unless told otherwise: two
    # workers on two cores, each running kernels on two lanes, starved the other
    # worker's timing tests (a sync message reached the node 157 ms into the next slot,
    # against 100 ms allowed). Subprocesses the tests start inherit it.
    if os.environ.get("PYTEST_XDIST_WORKER") and not os.environ.get(LANES_ENV):
        os.environ[LANES_ENV] = "1"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--soak", action="store_true", default=False,
        help="also run the SIMD layer's 10,000,000-input differential soak "
        "(tests/crypto_backend/test_simd.py; over an hour on 2 cores)",
    )


@pytest.fixture(scope="session")
def beacon_api_spec() -> BeaconApiSpec:
    """The official Beacon API (../shared/vectors/beacon-api), loaded once per session."""
    return load_beacon_api_spec(official_vectors("beacon-api"))


@pytest.fixture(scope="session")
def web3signer_spec() -> BeaconApiSpec:
    """The Web3Signer eth2 signing API (../shared/vectors/web3signer/eth2), loaded once."""
    return load_web3signer_spec(official_vectors("web3signer", "eth2"))


@pytest.fixture
def unused_url() -> Iterator[Callable[[], str]]:
    """URLs of ports nothing listens on (connection refused)."""

    def make() -> str:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        return f"http://127.0.0.1:{port}"

    yield make


@pytest.fixture
async def start_node(
    beacon_api_spec: BeaconApiSpec, aiohttp_server: Any
) -> AsyncIterator[NodeStarter]:
    """Serve Beacon API test doubles (see NodeStarter); at the end, assert that none saw a
    spec violation."""
    started: list[FakeBeaconNode] = []

    async def start(
        node_type: type[FakeBeaconNode] = FakeBeaconNode, /, *, strict: bool = True, **options: Any
    ) -> tuple[FakeBeaconNode, str]:
        node = node_type(beacon_api_spec if strict else None, **options)
        server = await aiohttp_server(node.app())
        started.append(node)
        return node, str(server.make_url("")).rstrip("/")

    yield cast(NodeStarter, start)
    for node in started:
        node.release()
    violations = [str(v) for node in started if node.checker for v in node.checker.violations]
    assert violations == [], "the client or the double broke the Beacon API spec"


@pytest.fixture
async def make_client(beacon_api_spec: BeaconApiSpec) -> AsyncIterator[ClientFactory]:
    """Start clients in client-side strict mode; they are closed at the end."""
    clients: list[BeaconNodeClient] = []
    checkers: list[StrictClientChecker] = []

    async def make(urls: list[str], *, strict: bool = True, **options: Any) -> BeaconNodeClient:
        middlewares = []
        if strict:
            checker = StrictClientChecker(beacon_api_spec)
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


# --------------------------------------------------------------------------- PostgreSQL


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """One throwaway PostgreSQL cluster for the whole run (tests/support/postgres.py);
    tests get a fresh database each, so they share the server and nothing else."""
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.destroy()


@pytest.fixture
def empty_db(pg_cluster: Cluster) -> str:
    """The URL of a database with no schema at all (db-init not run)."""
    return fresh_database(pg_cluster)


@pytest.fixture
def pg_url(empty_db: str) -> str:
    """The URL of a fresh database with the schema created (db-init run)."""
    db_init(empty_db)
    return empty_db
