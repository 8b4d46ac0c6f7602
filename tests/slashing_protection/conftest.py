"""A real PostgreSQL for the shared-record tests and the tests both records share: one
throwaway cluster per session (tests/support/postgres.py), a fresh empty database per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.support.pg_cluster import Cluster
from slashing_protection.postgres import db_init
from tests.support.postgres import fresh_database, start_cluster


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
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
