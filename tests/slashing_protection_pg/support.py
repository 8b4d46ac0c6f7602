"""Helpers for the shared-record tests: a look at the database from outside the record."""

from __future__ import annotations

from typing import Any

import psycopg


def snapshot(url: str) -> tuple[Any, ...]:
    """Everything the record holds (chain and rows), to assert that nothing changed."""
    with psycopg.connect(url, autocommit=True) as connection:
        chain = connection.execute(
            "SELECT genesis_validators_root FROM slashing_protection_chain"
        ).fetchall()
        rows = connection.execute(
            "SELECT pubkey, block_slot, source_epoch, target_epoch "
            "FROM slashing_protection_keys ORDER BY position"
        ).fetchall()
    return tuple(chain), tuple(rows)


def admin(url: str, statement: str, *params: object) -> None:
    """Run one statement on the database, as an operator (or a failure) would."""
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(statement.encode(), params or None)
