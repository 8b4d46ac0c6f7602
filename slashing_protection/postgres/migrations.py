"""The shared record's schema: versioned migrations, applied by `db-init`, checked at open.

Each migration is applied once, in order, in the same transaction as the row of
`slashing_protection_schema` that says it was; `db-init` applies the ones a database lacks
and can be run again at any time. A client opens only a database whose schema is exactly
`SCHEMA_VERSION`: older asks for `db-init`, newer for a newer client.

Numbers are uint64 in EIP-3076 and PostgreSQL has no unsigned 64-bit type, so they are
`numeric(20)` with a range check; NULL means "never signed". Every slot rewrites most
rows, so the table leaves room in each page (fillfactor) for the new versions to stay on
the same page (HOT updates: no index to touch, no bloat for vacuum to chase).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg

from slashing_protection.errors import SlashingProtectionError

Connection = psycopg.Connection[Any]

VERSION_TABLE = "slashing_protection_schema"
# Any fixed number, shared by every client: serialises db-init runs, imports, registrations.
ADVISORY_LOCK_KEY = 0x5350_3037_3600  # "SP076"


class SchemaVersionError(SlashingProtectionError):
    """The database has no slashing-protection schema, or one of another version."""


@dataclass(frozen=True)
class Migration:
    version: int
    why: str
    sql: str


_UINT64 = "numeric(20) CHECK ({column} >= 0 AND {column} <= 18446744073709551615)"

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "the chain, and the minimal record per key",
        f"""
        CREATE TABLE slashing_protection_chain (
            only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
            genesis_validators_root bytea NOT NULL
                CHECK (octet_length(genesis_validators_root) = 32),
            named_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE slashing_protection_keys (
            pubkey bytea PRIMARY KEY CHECK (octet_length(pubkey) = 48),
            position bigint GENERATED ALWAYS AS IDENTITY,
            block_slot {_UINT64.format(column="block_slot")},
            source_epoch {_UINT64.format(column="source_epoch")},
            target_epoch {_UINT64.format(column="target_epoch")},
            CHECK ((source_epoch IS NULL) = (target_epoch IS NULL))
        ) WITH (fillfactor = 40);
        """,
    ),
)

SCHEMA_VERSION = MIGRATIONS[-1].version


def installed_version(connection: Connection) -> int | None:
    """The schema version the database holds, or None when it has none (no db-init yet)."""
    row = connection.execute(
        "SELECT to_regclass(%s) IS NOT NULL", (VERSION_TABLE,)
    ).fetchone()
    if row is None or not row[0]:
        return None
    found = connection.execute(f"SELECT max(version) FROM {VERSION_TABLE}").fetchone()
    return None if found is None or found[0] is None else int(str(found[0]))


def check_version(connection: Connection, where: str) -> None:
    """Refuse a database whose schema is not exactly this client's (fail closed)."""
    version = installed_version(connection)
    if version == SCHEMA_VERSION:
        return
    if version is None:
        raise SchemaVersionError(
            f"the database {where} has no slashing-protection schema; create it with "
            f"'slashing-protection db-init --slashing-protection-db URL'"
        )
    if version < SCHEMA_VERSION:
        raise SchemaVersionError(
            f"the database {where} has slashing-protection schema version {version}, this "
            f"client needs {SCHEMA_VERSION}; upgrade it with 'slashing-protection db-init "
            "--slashing-protection-db URL' (stop the clients that use it first)"
        )
    raise SchemaVersionError(
        f"the database {where} has slashing-protection schema version {version}, newer than "
        f"this client's {SCHEMA_VERSION}; run a client that knows it"
    )


def apply_migrations(connection: Connection, where: str) -> list[int]:
    """Bring the schema up to SCHEMA_VERSION in one transaction; the versions applied."""
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (ADVISORY_LOCK_KEY,))
        connection.execute(
            f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} ("
            "version integer PRIMARY KEY, why text NOT NULL, "
            "applied_at timestamptz NOT NULL DEFAULT now())"
        )
        current = installed_version(connection) or 0
        if current > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"the database {where} has slashing-protection schema version {current}, "
                f"newer than this client's {SCHEMA_VERSION}; nothing was changed"
            )
        applied = []
        for migration in MIGRATIONS:
            if migration.version > current:
                connection.execute(migration.sql.encode())
                connection.execute(
                    f"INSERT INTO {VERSION_TABLE} (version, why) VALUES (%s, %s)",
                    (migration.version, migration.why),
                )
                applied.append(migration.version)
    return applied
