"""A throwaway PostgreSQL cluster for tests (tests/support/pg_cluster.py), and fresh
databases in it. Without PostgreSQL installed a test is skipped with the command that
installs it; under CI=true that is a failure instead (.ci/run installs it)."""

from __future__ import annotations

import itertools
import os

import psycopg
import pytest

from tests.support.pg_cluster import Cluster, ClusterUnavailable

_names = itertools.count()


def start_cluster() -> Cluster:
    """A new running cluster with fsync off (the tests kill servers, never the machine,
    so the page cache keeps every commit); skips (fails under CI) without PostgreSQL."""
    try:
        return Cluster(fsync=False)
    except ClusterUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(str(exc))
        pytest.skip(str(exc))


def fresh_database(cluster: Cluster) -> str:
    """A new empty database in the cluster; its URL."""
    name = f"sp_test_{os.getpid()}_{next(_names)}"
    with psycopg.connect(cluster.url(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name} TEMPLATE template0".encode())
    return cluster.url(name)
