"""A real PostgreSQL for the shared-record tests: one throwaway cluster per session
(bench/support/pg_cluster.py), and a fresh empty database per test.

Without PostgreSQL installed the tests are skipped with the command that installs it;
under CI=true that is a failure instead (.ci/run installs it).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import psycopg
import pytest

from bench.support.pg_cluster import Cluster, ClusterUnavailable
from slashing_protection.postgres import db_init

_names = itertools.count()


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    try:
        # fsync off: these tests never crash the server, and a commit then costs no disk
        # flush on a machine shared with other work. The benchmark runs with fsync on.
        cluster = Cluster(fsync=False)
    except ClusterUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(str(exc))
        pytest.skip(str(exc))
    try:
        yield cluster
    finally:
        cluster.destroy()


def fresh_database(cluster: Cluster) -> str:
    """A new empty database in the cluster; its URL."""
    name = f"sp_test_{os.getpid()}_{next(_names)}"
    with psycopg.connect(cluster.url(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name} TEMPLATE template0".encode())
    return cluster.url(name)


@pytest.fixture
def empty_db(pg_cluster: Cluster) -> str:
    """The URL of a database with no schema at all (db-init not run)."""
    return fresh_database(pg_cluster)


@pytest.fixture
def pg_url(empty_db: str) -> str:
    """The URL of a fresh database with the schema created (db-init run)."""
    db_init(empty_db)
    return empty_db
