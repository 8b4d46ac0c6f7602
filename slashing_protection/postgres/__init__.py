"""The shared slashing-protection record on PostgreSQL (`--slashing-protection-db URL`).

`PostgresSlashingProtection` has the file record's interface; `db_init(url)` creates or
upgrades its schema. Rooms: `record` (the class), `batch` (a batch's SQL and judging),
`session` (connecting, the schema's creation), `migrations`, `metrics`. See
docs/slashing-protection.md for what it guarantees across hosts.
"""

from slashing_protection.postgres.migrations import SCHEMA_VERSION, SchemaVersionError
from slashing_protection.postgres.record import PostgresSlashingProtection
from slashing_protection.postgres.session import DatabaseUnavailableError, db_init, describe_url

__all__ = [
    "SCHEMA_VERSION",
    "DatabaseUnavailableError",
    "PostgresSlashingProtection",
    "SchemaVersionError",
    "db_init",
    "describe_url",
]
