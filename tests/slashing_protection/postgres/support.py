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


def fail_commits(url: str) -> None:
    """Make every transaction that raises a watermark fail at its commit (a deferred
    constraint trigger), after the batch was judged under its row locks."""
    admin(
        url,
        "CREATE FUNCTION refuse_commit() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN RAISE EXCEPTION 'commit refused by the test'; END $$",
    )
    admin(
        url,
        "CREATE CONSTRAINT TRIGGER refuse_commit AFTER UPDATE ON slashing_protection_keys "
        "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_commit()",
    )


def allow_commits(url: str) -> None:
    admin(url, "DROP TRIGGER refuse_commit ON slashing_protection_keys")
